import fs from 'node:fs';
import { snapshotCommit, treeOfCommit, worktreeTree } from '../git/snapshot.js';
import { provisionedExcludes } from '../land/provisioned.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { pinned } from '../workspace/pinned.js';

/**
 * A task's whole work as one commit: its committed tip, plus its uncommitted work (tracked
 * changes and untracked files git does not ignore, warren's provisioned paths left out) as a
 * commit on that tip, built in a copy of the workspace's index (src/git/snapshot.ts): the
 * agent's index, files and refs are never touched. The tip itself when nothing is uncommitted.
 */
export async function taskSnapshot(
  ctx: ProjectContext,
  task: Task,
  tip: string,
): Promise<{ commit: string; error: string | null }> {
  try {
    if (!fs.existsSync(task.path)) return { commit: tip, error: `its workspace ${task.path} is missing` };
    const wt = await pinned(ctx, task.path);
    // The tip's tree is read while git walks the workspace: one step fewer one after another.
    const tipTree = treeOfCommit(wt, tip);
    tipTree.catch(() => undefined);
    const tree = await worktreeTree(wt, await provisionedExcludes(ctx, task));
    return { commit: await snapshotCommit(wt, tree, tip, tipTree), error: null };
  } catch (err) {
    return { commit: tip, error: err instanceof Error ? err.message : String(err) };
  }
}
