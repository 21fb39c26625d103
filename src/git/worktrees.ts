import { WarrenError } from '../errors.js';
import { git, type GitResult } from './exec.js';
import { parseWorktreeList, type WorktreeEntry } from './parse.js';
import type { Repository } from './repo.js';

/** git's list of worktrees, and adding, removing and pruning them. Callers hold the repository lock. */

export async function listWorktrees(repo: Repository): Promise<WorktreeEntry[]> {
  const result = await git(['worktree', 'list', '--porcelain', '-z'], { cwd: repo.root });
  return parseWorktreeList(result.stdout);
}

/**
 * `git worktree add -b BRANCH PATH COMMIT`; the result, failed or not (the caller retries
 * transient failures). No hook runs: git would run the post-checkout hook in the new workspace,
 * on the host (what prepares a workspace is warren.yaml's `setup:`, which runs in its sandbox).
 */
export function addWorktree(repo: Repository, branch: string, wsPath: string, commit: string): Promise<GitResult> {
  return git(['worktree', 'add', '--quiet', '-b', branch, '--', wsPath, commit], {
    cwd: repo.root,
    allowFailure: true,
    noHooks: true,
  });
}

/**
 * `git worktree remove`. `force` (twice: also a locked one) only for a worktree warren made
 * moments ago or proved to hold nothing; git deletes the files through whatever is mounted.
 */
export function removeWorktree(repo: Repository, wsPath: string, force = false): Promise<GitResult> {
  return git(['worktree', 'remove', ...(force ? ['--force', '--force'] : []), '--', wsPath], {
    cwd: repo.root,
    allowFailure: true,
  });
}

export async function unlockWorktree(repo: Repository, wsPath: string): Promise<void> {
  await git(['worktree', 'unlock', '--', wsPath], { cwd: repo.root, allowFailure: true });
}

/** The lock reason that marks a record warren locked only for the length of one prune. */
export const SPARE_LOCK_REASON = 'warren: live task, spared while pruning';

/** `git worktree lock --reason`; false when git refused (e.g. already locked). */
export async function lockWorktree(repo: Repository, wsPath: string, reason: string): Promise<boolean> {
  return (
    (await git(['worktree', 'lock', '--reason', reason, '--', wsPath], { cwd: repo.root, allowFailure: true }))
      .exitCode === 0
  );
}

/**
 * `git worktree prune`, which prunes every record whose folder git cannot find — sparing the
 * records at `spare` (warren's live tasks): a folder that is briefly missing or replaced must
 * not lose its record, or the task is stranded when the folder is back. git never prunes a
 * locked record, so each spared one that looks prunable is locked for the prune and unlocked
 * after. If one cannot be locked, nothing is pruned. Returns the paths it spared.
 */
export async function pruneWorktrees(repo: Repository, spare: ReadonlySet<string> = new Set()): Promise<string[]> {
  const held: string[] = [];
  try {
    for (const wt of await listWorktrees(repo)) {
      if (wt.prunable === null || wt.locked !== null || !spare.has(wt.path)) continue;
      if (!(await lockWorktree(repo, wt.path, SPARE_LOCK_REASON))) {
        throw new WarrenError(
          'GIT_FAILED',
          `could not lock git's record of ${wt.path} to spare it, so nothing was pruned.`,
          {
            hint: 'Run `warren gc` again; if it keeps failing, see `git worktree list --porcelain`.',
          },
        );
      }
      held.push(wt.path);
    }
    await git(['worktree', 'prune'], { cwd: repo.root });
  } finally {
    for (const wsPath of held) await unlockWorktree(repo, wsPath);
  }
  return held;
}

/** A detached worktree at `commit` (no branch): the merge queue's integration workspaces. No hook runs (as `addWorktree`). */
export function addDetachedWorktree(repo: Repository, wsPath: string, commit: string): Promise<GitResult> {
  return git(['worktree', 'add', '--quiet', '--detach', '--', wsPath, commit], {
    cwd: repo.root,
    allowFailure: true,
    noHooks: true,
  });
}
