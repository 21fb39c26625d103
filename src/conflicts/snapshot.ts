import fs from 'node:fs';
import { snapshotCommit, treeOfCommit, worktreeTree } from '../git/snapshot.js';
import type { Worktree } from '../git/worktree.js';
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

/** The workspace as a tree, or why it cannot be read. Needs no tip: it may start before the tips are read. */
export type WorkspaceTree = { wt: Worktree; tree: string } | { error: string };

export async function workspaceTree(ctx: ProjectContext, task: Task): Promise<WorkspaceTree> {
  try {
    if (!fs.existsSync(task.path)) return { error: `its workspace ${task.path} is missing` };
    const wt = await pinned(ctx, task.path);
    return { wt, tree: await worktreeTree(wt, await provisionedExcludes(ctx, task), ctx.store.home) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/** The snapshot commit of a workspace tree on `tip` (the tip itself when they are the same tree). */
export async function taskSnapshot(
  ctx: ProjectContext,
  task: Task,
  tip: string,
  read: Promise<WorkspaceTree> = workspaceTree(ctx, task),
): Promise<{ commit: string; error: string | null }> {
  const got = await read;
  if ('error' in got) return { commit: tip, error: got.error };
  try {
    return { commit: await snapshotCommit(got.wt, got.tree, tip, treeOfCommit(got.wt, tip)), error: null };
  } catch (err) {
    return { commit: tip, error: err instanceof Error ? err.message : String(err) };
  }
}
