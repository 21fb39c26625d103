import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import { listArchives, populateFromArchive, type Archive } from './archive.js';
import type { ProjectContext } from './context.js';
import { createTask } from './create.js';
import { validateTaskId } from './ids.js';

export interface RestoreOptions {
  /** Run the setup commands (default true), as `new` does. */
  setup?: boolean;
}

/**
 * `warren restore ID`: the newest archive of task ID back as a workspace. It is a `warren new`
 * (same guards, provisioning, ports, setup) whose branch is made at the archived branch tip and
 * whose files are the archived ones, put in place before anything runs: tracked changes staged
 * or not as they were, untracked files untracked. The archive stays until `gc` expires it.
 */
export async function restoreTask(
  ctx: ProjectContext,
  rawId: string,
  options: RestoreOptions = {},
): Promise<{ task: Task; archive: Archive }> {
  const id = validateTaskId(rawId);
  const archive = (await listArchives(ctx, id)).at(-1);
  if (!archive) {
    throw new WarrenError('TASK_NOT_FOUND', `no archive of task ${id} in this repository; nothing was changed.`, {
      hint: 'See `warren list --archived`: `warren rm ID --discard` makes them, and `gc` deletes them after `archive: { keep }`.',
    });
  }
  const task = await createTask(ctx, {
    type: archive.type,
    id,
    base: archive.base,
    sync: false,
    setup: options.setup !== false,
    ...(archive.sandbox ? { sandbox: archive.sandbox } : {}),
    restore: {
      tip: archive.tip,
      baseCommit: archive.baseCommit,
      from: archive.ref,
      populate: (wsPath) => populateFromArchive(ctx, wsPath, archive),
    },
  });
  return { task, archive };
}
