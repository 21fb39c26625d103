import type { RemoveFailure } from '../system/remove-tree.js';
import type { GcCollected } from './types.js';

/**
 * What a `gc` step's removeTree of `path` did, recorded: removed, or kept with the first entry
 * that would not go. `id`: the task the folder was for, when there was one.
 */
export function recordRemoval(
  out: GcCollected,
  kind: string,
  path: string,
  failures: readonly RemoveFailure[],
  id?: string,
): void {
  if (failures.length === 0) out.removed.push({ kind, path, ...(id ? { id } : {}), action: 'delete-dir' });
  else out.kept.push({ kind, path, reason: `could not delete ${failures[0]?.path} (${failures[0]?.code})` });
}
