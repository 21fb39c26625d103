import { behindAhead, commitsNotOn } from '../git/history.js';
import { numstat, patch } from '../git/diff.js';
import type { NumstatEntry } from '../git/parse.js';
import { revParse } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import { statusOf } from '../git/status.js';
import type { Task } from '../state/types.js';

/** What git says about one task, for the dashboard and other readers: read-only, never takes a lock. */

/** The base as a commit: the local branch when it exists, otherwise whatever `base` names. */
export async function baseTip(repo: Repository, base: string): Promise<string | null> {
  return (await revParse(repo, `refs/heads/${base}`)) ?? (await revParse(repo, base));
}

/** Commits the branch is behind and ahead of its base commit, or null when either side is gone. */
export async function drift(repo: Repository, task: Task, base: string | null): Promise<{ behind: number; ahead: number } | null> {
  return base ? behindAhead(repo, base, `refs/heads/${task.branch}`) : null;
}

/** Tracked (and untracked, not ignored) changes in the workspace, or null when it cannot be read. */
export async function changeCount(task: Task): Promise<number | null> {
  try {
    return (await statusOf(task.path)).length;
  } catch {
    return null;
  }
}

export const DIFF_LIMIT_BYTES = 512 * 1024;

export interface TaskDiff {
  base: string;
  branch: string;
  /** `git diff --numstat` per file; binary files have null counts. */
  files: NumstatEntry[];
  patch: string;
  truncated: boolean;
}

/** `git diff base...branch`: what the branch changed since it left the base, as committed. Null when either side is gone. */
export async function diffAgainstBase(repo: Repository, task: Task): Promise<TaskDiff | null> {
  const base = await baseTip(repo, task.base);
  const branch = await revParse(repo, `refs/heads/${task.branch}`);
  if (!base || !branch) return null;
  const [files, bytes] = await Promise.all([numstat(repo, base, branch), patch(repo, base, branch)]);
  const truncated = bytes.length > DIFF_LIMIT_BYTES;
  return { base: task.base, branch: task.branch, files, patch: (truncated ? bytes.subarray(0, DIFF_LIMIT_BYTES) : bytes).toString('utf8'), truncated };
}

/** Commits on the branch that the base does not have, newest first (at most `limit`). */
export async function branchCommits(repo: Repository, task: Task, limit = 100): Promise<{ sha: string; subject: string }[]> {
  const tip = await baseTip(repo, task.base);
  return (await commitsNotOn(repo, `refs/heads/${task.branch}`, tip ? [tip] : [])).slice(0, limit);
}
