import { git, gitError, type Where } from './exec.js';
import { splitLines } from './parse.js';
import type { Repository } from './repo.js';

/**
 * Git bundles: how a task's branch goes to a runner that has no file system of the
 * coordinator's (a Kubernetes sandbox) and how its work comes back. What comes back is fetched
 * into a ref of warren's with no hook run, and checked before anything of the task's moves.
 */

/** A bundle of `branch`, without what `have` (commits the other side holds) already carries. */
export async function bundleOf(repo: Repository, branch: string, have: readonly string[]): Promise<Buffer> {
  const r = await git(['bundle', 'create', '-q', '-', `refs/heads/${branch}`, ...have.map((h) => `^${h}`)], {
    cwd: repo.root,
    noHooks: true,
  });
  return r.stdoutBuffer;
}

/**
 * A bundle of one commit and its history, under `ref` (a ref under refs/warren/ made for the
 * bundle and deleted after it: git bundles refs, not bare commits).
 */
export async function bundleOfCommit(repo: Repository, commit: string, ref: string): Promise<Buffer> {
  await git(['update-ref', '--end-of-options', ref, commit], { cwd: repo.root, noHooks: true });
  try {
    const r = await git(['bundle', 'create', '-q', '-', ref], { cwd: repo.root, noHooks: true });
    return r.stdoutBuffer;
  } finally {
    await git(['update-ref', '-d', '--end-of-options', ref, commit], {
      cwd: repo.root,
      noHooks: true,
      allowFailure: true,
    });
  }
}

/**
 * Fetches `ref` of the bundle at `file` into `into` (a ref under refs/warren/), no hook run and no
 * tag followed; returns the commit it names.
 */
export async function fetchBundle(repo: Repository, file: string, ref: string, into: string): Promise<string> {
  await git(['fetch', '-q', '--no-tags', '--no-write-fetch-head', '--end-of-options', file, `+${ref}:${into}`], {
    cwd: repo.root,
    noHooks: true,
  });
  const r = await git(['rev-parse', '--verify', '--end-of-options', `${into}^{commit}`], { cwd: repo.root });
  return r.stdout.trim();
}

/** The paths that differ between two commits (`--no-renames`, NUL-separated). */
export async function pathsBetween(repo: Repository, from: string, to: string): Promise<string[]> {
  const r = await git(['diff', '--name-only', '-z', '--no-renames', '--end-of-options', from, to], {
    cwd: repo.root,
  });
  return r.stdout.split('\0').filter((p) => p !== '');
}

/** The first parent of `commit`. */
export async function firstParent(repo: Repository, commit: string): Promise<string> {
  const r = await git(['rev-parse', '--verify', '--end-of-options', `${commit}^1`], { cwd: repo.root });
  return r.stdout.trim();
}

/**
 * The worktree's files made those of `tree` — the files warren brought back from where the task
 * runs — with its index at its HEAD, so what differs shows as the task's uncommitted changes.
 * Untracked files the tree lacks stay (they were never brought).
 */
export async function mirrorTree(worktree: Where, tree: string): Promise<void> {
  await git(['read-tree', '--reset', '-u', '--end-of-options', tree], { cwd: worktree });
  const r = await git(['reset', '-q', '--mixed', 'HEAD', '--'], { cwd: worktree, allowFailure: true });
  // `reset` exits 1 when it leaves unstaged changes: that is the point.
  if (r.exitCode > 1) throw gitError(r);
}

/** Whether the worktree has changes to tracked files or untracked ones (ignored ones do not count). */
export async function isDirty(worktree: Where): Promise<boolean> {
  const r = await git(['status', '--porcelain', '-z', '--untracked-files=all'], { cwd: worktree });
  return splitLines(r.stdout.replace(/\0/g, '\n')).length > 0;
}
