import { WarrenError } from '../errors.js';
import { headOf } from '../git/index-ops.js';
import { abortMerge, mergeHead } from '../git/integrate.js';
import { newestOf } from '../state/events.js';
import { loadTask } from '../land/task.js';
import type { ProjectContext } from '../workspace/context.js';
import { pinned } from '../workspace/pinned.js';

/**
 * `warren sync ID --abort`: the merge a `sync --keep` left is taken back out (`git merge
 * --abort`): the branch was never moved, so the index and files go back to its tip. Only that
 * merge: one of the user's own, or none, is refused with nothing changed.
 */
export async function abortSync(
  ctx: ProjectContext,
  id: string,
): Promise<{ state: 'aborted'; id: string; head: string }> {
  const task = loadTask(ctx, id);
  const wt = await pinned(ctx, task.path);
  const merging = await mergeHead(wt);
  const left = newestOf(ctx.store.taskEvents(ctx.key, id, 200), 'sync.conflict');
  if (merging === null || left === null || left.data.onto !== merging) {
    throw new WarrenError(
      'NOTHING_TO_SYNC',
      merging === null
        ? `task ${id} has no sync left to roll back (no merge in progress in ${task.path}); nothing was changed.`
        : `the merge in progress in ${task.path} (of ${merging.slice(0, 12)}) is not one \`warren sync --keep\` left; nothing was changed.`,
      { hint: `See \`git -C ${task.path} status\`.` },
    );
  }
  const r = await abortMerge(wt);
  if (r.exitCode !== 0)
    throw new WarrenError(
      'GIT_FAILED',
      `git merge --abort failed in ${task.path}: ${r.stderr.trim()}; see git status there.`,
    );
  const head = await headOf(wt);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: id,
    kind: 'sync.aborted',
    message: `the sync left in ${id} was rolled back; the workspace is at ${head.slice(0, 12)} as before it`,
    data: { how: 'merge', head },
  });
  return { state: 'aborted', id, head };
}
