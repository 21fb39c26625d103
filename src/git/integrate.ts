import { git, type GitResult, type Where } from './exec.js';
import { splitZ } from './parse.js';

/**
 * Bringing one commit's history into a worktree's branch (`warren sync`): rebase or merge, each
 * without autostash (warren refuses a workspace with uncommitted work before), and what is left
 * when one stops on a conflict. Callers check the result's exit code.
 */

const NO_AUTOSTASH = ['-c', 'rebase.autoStash=false', '-c', 'merge.autoStash=false', '-c', 'rebase.updateRefs=false'];

export function rebaseOnto(worktree: Where, onto: string): Promise<GitResult> {
  return git([...NO_AUTOSTASH, 'rebase', '--no-autostash', '--quiet', '--end-of-options', onto], {
    cwd: worktree,
    allowFailure: true,
  });
}

export function mergeIn(worktree: Where, commit: string, message: string): Promise<GitResult> {
  return git(
    [...NO_AUTOSTASH, 'merge', '--no-ff', '--no-edit', '--no-autostash', '-m', message, '--end-of-options', commit],
    {
      cwd: worktree,
      allowFailure: true,
    },
  );
}

/** Paths git left unmerged in the worktree's index. */
export async function unmergedPaths(worktree: Where): Promise<string[]> {
  const r = await git(['diff', '--name-only', '-z', '--diff-filter=U'], { cwd: worktree, allowFailure: true });
  return [...new Set(splitZ(r.stdout))];
}

/** The merge in progress (MERGE_HEAD), or null. */
export async function mergeHead(worktree: Where): Promise<string | null> {
  const r = await git(['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { cwd: worktree, allowFailure: true });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

export function abortRebase(worktree: Where): Promise<GitResult> {
  return git(['rebase', '--abort'], { cwd: worktree, allowFailure: true });
}

export function abortMerge(worktree: Where): Promise<GitResult> {
  return git(['merge', '--abort'], { cwd: worktree, allowFailure: true });
}

/** Moves the branch back to `commit`, keeping the files only where they equal HEAD's (`reset --keep`). */
export async function resetKeep(worktree: Where, commit: string): Promise<void> {
  await git(['reset', '--keep', '--quiet', '--end-of-options', commit], { cwd: worktree });
}
