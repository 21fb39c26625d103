import { WarrenError } from '../errors.js';
import { treeOf } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import { commitTree, mergeTrees, treeEntry, treeWithEntries } from '../git/trees.js';
import type { Exclusion } from './protected.js';

/**
 * The squash is built with plumbing only (src/git/trees.ts): a temporary index of its own, then
 * write-tree and commit-tree. No one's index, worktree or ref is touched; the only trace of a
 * refused land is unreferenced objects, which git's gc prunes.
 */

/** The task's tree with every excluded path put back to its fork-point version (or left out when it had none). */
export async function squashTree(
  repo: Repository,
  taskTip: string,
  forkPoint: string,
  exclusions: readonly Exclusion[],
): Promise<string> {
  // Nothing left out: the task's own tree, without building an index.
  if (exclusions.length === 0) return treeOf(repo, taskTip);
  const replace = [];
  for (const ex of exclusions) replace.push({ path: ex.path, entry: await treeEntry(repo, forkPoint, ex.path) });
  return treeWithEntries(repo, taskTip, replace);
}

export type Rebased = { ok: true; tree: string } | { ok: false; conflicts: string[] };

/**
 * The base moved since the task branched: a three-way merge of trees (fork point → squash,
 * fork point → base tip). git 2.39's merge-tree takes commits and finds the merge base itself,
 * so the squash tree is wrapped in a throwaway commit whose parent is the fork point.
 */
export async function rebaseSquash(
  repo: Repository,
  forkPoint: string,
  tree: string,
  baseTip: string,
): Promise<Rebased> {
  const temp = await commitTree(repo, tree, forkPoint, 'warren: squash being rebased (temporary, unreferenced)');
  return mergeTrees(repo, baseTip, temp);
}

export function conflictError(id: string, base: string, conflicts: readonly string[]): WarrenError {
  return new WarrenError(
    'LAND_CONFLICT',
    `task ${id} conflicts with what landed on ${base} since it branched, in ${conflicts.length} path(s): ${conflicts.join(', ')}. Nothing was landed: ${base}, the task branch and every checkout are as they were.`,
    {
      hint: `Bring ${base} into the task (e.g. \`git merge ${base}\` in the workspace), resolve the conflicts, \`warren checkpoint\`, then land again.`,
      details: { conflicts },
    },
  );
}
