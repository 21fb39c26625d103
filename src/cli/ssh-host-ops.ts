import { WarrenError } from '../errors.js';
import { headOrNull } from '../git/index-ops.js';
import { setRef, treeOf } from '../git/refs.js';
import { snapshotWorktree } from '../git/snapshot.js';
import { statusOf } from '../git/status.js';
import { commitTree } from '../git/trees.js';
import { provisionTask } from '../provision/operations.js';
import { snapshotRef, type HostProvisioned, type RemoteRequest, type Snapshot } from '../run/ssh/protocol.js';
import { trustCommands, trustState } from '../trust/trust.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { pinned } from '../workspace/pinned.js';
import { provisionedExcludes } from '../workspace/provisioned.js';
import { requireTask } from '../workspace/tasks.js';

/**
 * The host's side of `snapshot` (the coordinator's `rm --discard`) and `provision`: the same
 * work a local task's `rm --discard` and `warren provision` do, here, answered to the coordinator.
 */

/**
 * The workspace as `rm --discard` archives it (archive.ts's snapshotTask: files, untracked ones
 * included, provisioned and ignored paths left out; the index as a parent), as a commit the
 * coordinator fetches. Under the task's lock: a run going here refuses it, changing nothing.
 */
export async function hostSnapshot(ctx: ProjectContext, rawId: string): Promise<Snapshot> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, 'snapshot (for the coordinator to archive)', async () => {
    const task = requireTask(ctx, id);
    const wt = await pinned(ctx, task.path);
    const head = await headOrNull(wt);
    if (head === null)
      throw new WarrenError('REMOTE_FAILED', `task ${task.id}'s workspace here has no commit; nothing was read.`);
    const snapshot = await snapshotWorktree(wt, await provisionedExcludes(ctx, task), ctx.store.home);
    const changes = (await statusOf(wt)).length;
    const indexTree = snapshot.indexTree ?? (await treeOf(ctx.repo, head));
    const index = await commitTree(ctx.repo, indexTree, head, `warren: task ${id}'s index, for the coordinator\n`);
    const commit = await commitTree(
      ctx.repo,
      snapshot.tree,
      [head, index],
      `warren: task ${id}'s workspace, for the coordinator's rm --discard\n`,
    );
    await setRef(ctx.repo, snapshotRef(id), commit, 'warren: the workspace, for the coordinator to archive');
    return { head, commit, indexKept: snapshot.indexTree !== null, changes };
  });
}

/**
 * `warren provision ID [--refresh]` of the coordinator's task, here (the main checkout put at the
 * task's base first, as at `create`): its answer, what it said, and the task's events meanwhile.
 */
export async function hostProvision(
  ctx: ProjectContext,
  req: Extract<RemoteRequest, { op: 'provision' }>,
  lines: string[],
): Promise<HostProvisioned> {
  // The coordinator's user trusted a set: the same set here is trusted, never another (as at `create`).
  if (req.trusted !== undefined && trustState(ctx).hash === req.trusted) trustCommands(ctx, req.trusted);
  const id = validateTaskId(req.id);
  const since = ctx.store.lastEventSeq();
  const outcome = await provisionTask(ctx, id, { refresh: req.refresh === true });
  const events = ctx.store
    .eventsSince(since, 500)
    .filter((e) => e.project === ctx.key && e.taskId === id)
    .map((e) => ({ kind: e.kind, level: e.level, message: e.message }));
  return { outcome, lines, events };
}
