import { git, type GitResult } from './exec.js';
import { parseWorktreeList, type WorktreeEntry } from './parse.js';
import type { Repository } from './repo.js';

/** git's list of worktrees, and adding, removing and pruning them. Callers hold the repository lock. */

export async function listWorktrees(repo: Repository): Promise<WorktreeEntry[]> {
  const result = await git(['worktree', 'list', '--porcelain', '-z'], { cwd: repo.root });
  return parseWorktreeList(result.stdout);
}

/** `git worktree add -b BRANCH PATH COMMIT`; the result, failed or not (the caller retries transient failures). */
export function addWorktree(repo: Repository, branch: string, wsPath: string, commit: string): Promise<GitResult> {
  return git(['worktree', 'add', '--quiet', '-b', branch, '--', wsPath, commit], { cwd: repo.root, allowFailure: true });
}

/**
 * `git worktree remove`. `force` (twice: also a locked one) only for a worktree warren made
 * moments ago or proved to hold nothing; git deletes the files through whatever is mounted.
 */
export function removeWorktree(repo: Repository, wsPath: string, force = false): Promise<GitResult> {
  return git(['worktree', 'remove', ...(force ? ['--force', '--force'] : []), '--', wsPath], { cwd: repo.root, allowFailure: true });
}

export async function unlockWorktree(repo: Repository, wsPath: string): Promise<void> {
  await git(['worktree', 'unlock', '--', wsPath], { cwd: repo.root, allowFailure: true });
}

export async function pruneWorktrees(repo: Repository): Promise<void> {
  await git(['worktree', 'prune'], { cwd: repo.root });
}

/** A detached worktree at `commit` (no branch): the merge queue's integration workspaces. */
export function addDetachedWorktree(repo: Repository, wsPath: string, commit: string): Promise<GitResult> {
  return git(['worktree', 'add', '--quiet', '--detach', '--', wsPath, commit], { cwd: repo.root, allowFailure: true });
}
