import fs from 'node:fs';
import { git, type GitResult } from './exec.js';
import type { Where } from './exec.js';
import { splitZ } from './parse.js';
import { gitRetrying } from './refs.js';

/** A worktree's own index and files: staging, committing, and bringing a checkout forward. */

/** `git add -A` of everything, with pathspecs left out; retried when another git held the lock. */
export async function stageAll(worktree: Where, excludePathspecs: readonly string[]): Promise<void> {
  await gitRetrying(['add', '-A', '--', '.', ...excludePathspecs], worktree);
}

/** What is staged, by name. */
export async function stagedNames(worktree: Where): Promise<string[]> {
  return splitZ((await git(['diff', '--cached', '--name-only', '-z', '--no-renames'], { cwd: worktree })).stdout);
}

/** Puts paths back to HEAD's version in the index (not the files). */
export async function unstage(worktree: Where, paths: readonly string[]): Promise<void> {
  await gitRetrying(['reset', '-q', 'HEAD', '--', ...paths.map((p) => `:(literal)${p}`)], worktree);
}

export async function hasStagedChanges(worktree: Where): Promise<boolean> {
  const result = await git(['diff', '--cached', '--quiet'], { cwd: worktree, allowFailure: true });
  return result.exitCode !== 0;
}

/** `git commit` of what is staged; the result, failed or not (a hook may refuse it). */
export function commitStaged(
  worktree: Where,
  message: string,
  options: { noVerify?: boolean } = {},
): Promise<GitResult> {
  // --no-verify: the pre-commit and commit-msg hooks do not run.
  return git(['commit', '-q', ...(options.noVerify ? ['--no-verify'] : []), '-F', '-'], {
    cwd: worktree,
    input: message,
    allowFailure: true,
  });
}

/** The commit a worktree's HEAD points at. */
export async function headOf(worktree: Where): Promise<string> {
  return (await git(['rev-parse', '--verify', 'HEAD'], { cwd: worktree })).stdout.trim();
}

/** The commit at a worktree's HEAD, or null when it has none (or the worktree cannot be read). */
export async function headOrNull(worktree: Where): Promise<string | null> {
  const result = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: worktree, allowFailure: true });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * Brings a checkout from commit `from` to `to`: its index and files follow (`read-tree -m -u`),
 * and git refuses before writing anything if local changes would be overwritten. The stat
 * data is refreshed first, so a file merely touched does not count as changed.
 */
export async function moveCheckout(worktree: Where, from: string, to: string): Promise<GitResult> {
  await git(['update-index', '-q', '--refresh'], { cwd: worktree, allowFailure: true });
  return git(['read-tree', '-m', '-u', '--end-of-options', from, to], { cwd: worktree, allowFailure: true });
}

/** True when the checkout's index holds `commit`'s version of every one of `paths`. */
export async function indexMatches(worktree: Where, commit: string, paths: readonly string[]): Promise<boolean> {
  if (paths.length === 0) return true;
  const result = await git(
    ['diff-index', '--cached', '--quiet', '--end-of-options', commit, '--', ...paths.map((p) => `:(literal)${p}`)],
    { cwd: worktree, allowFailure: true },
  );
  return result.exitCode === 0;
}

/** `git merge --ff-only` in a worktree; the result, failed or not. */
export function fastForward(worktree: Where, commit: string): Promise<GitResult> {
  return git(['merge', '--ff-only', '--quiet', '--end-of-options', commit], { cwd: worktree, allowFailure: true });
}

/** Puts the whole index back to HEAD (`git reset -q`): what was staged is unstaged, no file changes. */
export async function unstageAll(worktree: Where): Promise<void> {
  await gitRetrying(['reset', '-q'], worktree);
}

/** The number of entries in a git index file (its header), or null when it cannot be read. */
export function indexEntryCount(indexFile: string): number | null {
  let fd: number | null = null;
  try {
    fd = fs.openSync(indexFile, 'r');
    const header = Buffer.alloc(12);
    if (fs.readSync(fd, header, 0, 12, 0) !== 12 || header.toString('latin1', 0, 4) !== 'DIRC') return null;
    return header.readUInt32BE(8);
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Fills a worktree made with `--no-checkout`: its index and files at HEAD, as `git worktree add` itself does it. */
export function checkoutEmptyWorktree(worktree: Where): Promise<GitResult> {
  return git(['reset', '--hard', '--no-recurse-submodules', '--quiet'], {
    cwd: worktree,
    timeoutMs: 30 * 60_000,
    allowFailure: true,
  });
}

/** The post-checkout hook, with the arguments `git worktree add` gives it (none installed: nothing runs). */
export function runPostCheckoutHook(worktree: Where, commit: string): Promise<GitResult> {
  return git(['hook', 'run', '--ignore-missing', 'post-checkout', '--', '0'.repeat(commit.length), commit, '1'], {
    cwd: worktree,
    allowFailure: true,
  });
}
