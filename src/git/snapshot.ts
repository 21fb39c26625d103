import fs from 'node:fs';
import path from 'node:path';
import { git, type GitResult } from './exec.js';
import type { Where } from './exec.js';
import { gitPaths } from './config.js';
import type { Repository } from './repo.js';
import { withScratchIndex } from './scratch-index.js';

/**
 * A worktree's whole state as trees, built in a copy of its index: the worktree's own index,
 * files and refs are never touched (objects are the only trace). `diff` compares against it,
 * `rm --discard` archives it.
 */

export interface WorktreeSnapshot {
  /** Tracked files as they are on disk, plus untracked files git does not ignore (less the excluded paths). */
  tree: string;
  /** The index as it is (what is staged), or null when it cannot be written as a tree (unmerged paths). */
  indexTree: string | null;
}

/**
 * `git add -A` into a copy of the worktree's index (its stat data makes this as fast as `git
 * status`), then `write-tree`. `excludePathspecs` keeps paths out (`:(exclude,literal)…`): name
 * only paths git does not ignore, or `git add` fails on them.
 */
export async function snapshotWorktree(
  worktree: Where,
  excludePathspecs: readonly string[],
  home: string,
): Promise<WorktreeSnapshot> {
  return snapshotIn(worktree, excludePathspecs, true, home) as Promise<WorktreeSnapshot>;
}

/** The tree of `snapshotWorktree` alone (no staged tree): two git calls in a pinned workspace, whose index is known. */
export async function worktreeTree(
  worktree: Where,
  excludePathspecs: readonly string[],
  home: string,
): Promise<string> {
  return (await snapshotIn(worktree, excludePathspecs, false, home)).tree;
}

/** `home`: the WARREN_HOME whose command this is, named in the throwaway index's folder (scratch-index.ts). */
async function snapshotIn(
  worktree: Where,
  excludePathspecs: readonly string[],
  staged: boolean,
  home: string,
): Promise<{ tree: string; indexTree?: string | null }> {
  const real =
    typeof worktree === 'string' ? (await gitPaths(worktree, ['index'])).paths[0] : path.join(worktree.gitDir, 'index');
  return withScratchIndex(home, async (env) => {
    if (real && fs.existsSync(real)) copyIndex(real, env.GIT_INDEX_FILE);
    const indexTree = staged ? await git(['write-tree'], { cwd: worktree, env, allowFailure: true }) : null;
    await git(['add', '-A', '--', '.', ...excludePathspecs], { cwd: worktree, env });
    const tree = (await git(['write-tree'], { cwd: worktree, env })).stdout.trim();
    if (!indexTree) return { tree };
    return { tree, indexTree: indexTree.exitCode === 0 ? indexTree.stdout.trim() : null };
  });
}

/**
 * Copies an index with its mtime. git rechecks the content of an entry whose file changed no
 * earlier than the index was written ("racy git"); a copy with a newer mtime would make git trust
 * the stat data of such an entry and miss a same-size edit made in the same second (issue 31).
 * The mtime is rounded down, which can only make git recheck more.
 */
function copyIndex(from: string, to: string): void {
  fs.copyFileSync(from, to);
  const { atimeMs, mtimeMs } = fs.statSync(from);
  fs.utimesSync(to, Math.floor(atimeMs) / 1000, Math.floor(mtimeMs) / 1000);
}

/**
 * Puts a worktree's index at `tree` without touching its files (`read-tree`), then refreshes the
 * stat data so that files equal to their index entry do not show as changed.
 */
export async function setIndexTree(worktree: Where, tree: string): Promise<void> {
  await git(['read-tree', '--end-of-options', tree], { cwd: worktree });
  await git(['update-index', '-q', '--refresh'], { cwd: worktree, allowFailure: true });
}

/**
 * The git side of copy-on-write checkouts: a commit's files written into a folder outside any
 * worktree (with an index of their own), a worktree that checks nothing out, and the per-worktree
 * settings that let the copied index stay valid. Callers hold the repository lock where git's
 * records change (`worktree add`).
 */

/** Stat checks that survive the copy of an index onto an overlay: whole-second mtime and size only. */
const LENIENT_STAT = ['-c', 'core.checkStat=minimal', '-c', 'core.trustCtime=false'];

/**
 * Writes `commit`'s files into `tree` and its index into `indexFile`. With `from` (a commit whose
 * files `tree` already holds, and whose index `indexFile` already is), only the paths that differ
 * between the two are written: git's own two-tree switch (`read-tree -m -u`).
 */
export function checkoutIntoFolder(
  repo: Repository,
  tree: string,
  indexFile: string,
  commit: string,
  from: string | null,
): Promise<GitResult> {
  const args = from
    ? [...LENIENT_STAT, `--work-tree=${tree}`, 'read-tree', '-m', '-u', '--end-of-options', from, commit]
    : [`--work-tree=${tree}`, 'read-tree', '-u', '--reset', '--end-of-options', commit];
  return git(args, { cwd: repo.root, env: { GIT_INDEX_FILE: indexFile }, timeoutMs: 30 * 60_000, allowFailure: true });
}

/** Paths that differ between two commits (`git diff --name-only`). */
export async function changedPathCount(repo: Repository, from: string, to: string): Promise<number> {
  const r = await git(['diff', '--name-only', '-z', '--no-renames', '--end-of-options', from, to], { cwd: repo.root });
  return r.stdout.split('\0').filter((p) => p !== '').length;
}

/** `git worktree add --no-checkout -b BRANCH PATH COMMIT` (or `--detach` without a branch): the records, no files, no hook. */
export function addEmptyWorktree(
  repo: Repository,
  branch: string | null,
  wsPath: string,
  commit: string,
): Promise<GitResult> {
  const how = branch ? ['-b', branch] : ['--detach'];
  return git(['worktree', 'add', '--quiet', '--no-checkout', ...how, '--', wsPath, commit], {
    cwd: repo.root,
    allowFailure: true,
    noHooks: true,
  });
}

/**
 * Per-worktree settings (`extensions.worktreeConfig`, then `git config --worktree`), so one
 * worktree's stat policy does not change the main checkout's.
 */
export async function setWorktreeConfig(
  repo: Repository,
  worktree: string,
  entries: readonly [string, string][],
): Promise<void> {
  const on = await git(['config', '--bool', '--get', 'extensions.worktreeConfig'], {
    cwd: repo.root,
    allowFailure: true,
  });
  if (on.stdout.trim() !== 'true') await git(['config', 'extensions.worktreeConfig', 'true'], { cwd: repo.root });
  for (const [key, value] of entries) await git(['config', '--worktree', '--', key, value], { cwd: worktree });
}

/** The tree of a commit. */
export async function treeOfCommit(where: Where, commit: string): Promise<string> {
  return (await git(['rev-parse', '--end-of-options', `${commit}^{tree}`], { cwd: where })).stdout.trim();
}

/** A fixed author, committer and date: the same tree on the same parent is the same commit, whoever made it when. */
const FIXED_IDENTITY = {
  GIT_AUTHOR_NAME: 'warren',
  GIT_AUTHOR_EMAIL: 'warren@localhost',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'warren',
  GIT_COMMITTER_EMAIL: 'warren@localhost',
  GIT_COMMITTER_DATE: '@0 +0000',
};

/**
 * A worktree's snapshot tree as a commit on `parent` (its committed tip), for the merges that
 * need commits: deterministic (src/conflicts/ keys its cache by it), referenced by nothing, so
 * git's gc prunes it. `parent` itself when the tree is the parent's: nothing uncommitted.
 */
export async function snapshotCommit(
  where: Where,
  tree: string,
  parent: string,
  parentTree?: Promise<string>,
): Promise<string> {
  if ((await (parentTree ?? treeOfCommit(where, parent))) === tree) return parent;
  const made = await git(['commit-tree', tree, '-p', parent, '-m', 'warren: uncommitted work (snapshot)'], {
    cwd: where,
    env: FIXED_IDENTITY,
  });
  return made.stdout.trim();
}
