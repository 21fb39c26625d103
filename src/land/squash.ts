import { WarrenError } from '../errors.js';
import { treeOf } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import { commitTree, mergeTrees, treeEntry, treeWithEntries } from '../git/trees.js';
import type { Exclusion } from '../config/protected.js';

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
  home: string,
): Promise<string> {
  // Nothing left out: the task's own tree, without building an index.
  if (exclusions.length === 0) return treeOf(repo, taskTip);
  const replace = [];
  for (const ex of exclusions) replace.push({ path: ex.path, entry: await treeEntry(repo, forkPoint, ex.path) });
  return treeWithEntries(repo, taskTip, replace, home);
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

/** Who landed what a task conflicts with: the tasks (by their `Warren-Task:` trailer) or commits. */
export interface Lander {
  sha: string;
  subject: string;
  task: string | null;
}

/** `fix-a (3f0c9a1b2d4e)`, or `3f0c9a1b2d4e "subject"` for a commit made by hand. Pure. */
export function describeLanders(landers: readonly Lander[]): string {
  const seen = new Set<string>();
  const named: string[] = [];
  for (const l of landers) {
    const text = l.task ? `${l.task} (${l.sha.slice(0, 12)})` : `${l.sha.slice(0, 12)} ${JSON.stringify(l.subject)}`;
    const key = l.task ?? l.sha;
    if (seen.has(key)) continue;
    seen.add(key);
    named.push(text);
  }
  return named.length > 5 ? `${named.slice(0, 5).join(', ')} and ${named.length - 5} more` : named.join(', ');
}

/**
 * A conflict with what landed on `base`. `inQueue`: the merge queue adds what is left as it
 * was itself (and its own hint), so the message stops at the conflict.
 */
export function conflictError(
  id: string,
  base: string,
  conflicts: readonly string[],
  landers: readonly Lander[] = [],
  inQueue = false,
): WarrenError {
  const who = landers.length > 0 ? `${describeLanders(landers)}, which landed on ${base}` : `what landed on ${base}`;
  return new WarrenError(
    'LAND_CONFLICT',
    `task ${id} conflicts with ${who} since it branched, in ${conflicts.length} path(s): ${conflicts.join(', ')}${
      inQueue ? '' : `. Nothing was landed: ${base}, the task branch and every checkout are as they were.`
    }`,
    {
      hint: conflictHint(id, base),
      details: { conflicts, landed: landers.map((l) => l.task ?? l.sha) },
    },
  );
}

/** What to do about a conflict with what landed. */
export function conflictHint(id: string, base: string): string {
  return `Bring ${base} into the task (\`warren exec ${id} -- git merge ${base}\`), resolve the conflicts, \`warren checkpoint ${id}\`, then land again.`;
}
