import type { MadePathKind } from '../state/store.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { metaPathFor, readMeta, removeMeta } from './meta.js';

/**
 * warren deletes only what it made. Threat: whatever else lives in a workspace root — the
 * user's folders, another tool's worktrees, a system directory a hostile warren.yaml pointed
 * the root at — looks like a stray to a scan that only compares the disk with git. So every
 * path warren makes is recorded in a ledger before it is made and forgotten after warren
 * deleted it; scan reports anything else as `foreign`, and gc and rm never delete it.
 */

/** Before making `path`: a crash between the two leaves a record of nothing, which is harmless. */
export function recordMade(ctx: ProjectContext, path: string, kind: MadePathKind, taskId: string | null): void {
  ctx.store.recordMadePath({ path, kind, project: ctx.key, taskId });
}

/** After a workspace is gone: its metadata file and both records. */
export function forgetWorkspace(ctx: ProjectContext, workspacePath: string): void {
  removeMeta(workspacePath);
  ctx.store.forgetMadePath(metaPathFor(workspacePath));
  ctx.store.forgetMadePath(workspacePath);
}

/**
 * Did warren make `path`? Its ledger says so — or, for a workspace made before the ledger
 * existed, the metadata file warren wrote beside it names this project, this path and a task
 * whose row records the same path.
 */
export function madeByWarren(ctx: ProjectContext, path: string, tasks: readonly Task[]): boolean {
  if (ctx.store.isMadePath(ctx.key, path)) return true;
  const meta = readMeta(path);
  return (
    meta !== null &&
    meta.project === ctx.key &&
    meta.path === path &&
    tasks.some((t) => t.id === meta.taskId && t.path === path)
  );
}
