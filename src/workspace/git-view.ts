import type { ProjectContext } from './context.js';
import { behindAhead, commitsNotOn } from '../git/history.js';
import { revParse } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import { statusOf } from '../git/status.js';
import type { Task } from '../state/types.js';
import { pinned } from './pinned.js';

/** What git says about one task, for the dashboard and other readers: read-only, never takes a lock. */

/** The base as a commit: the local branch when it exists, otherwise whatever `base` names. */
export async function baseTip(repo: Repository, base: string): Promise<string | null> {
  return (await revParse(repo, `refs/heads/${base}`)) ?? (await revParse(repo, base));
}

/** Commits the branch is behind and ahead of its base commit, or null when either side is gone. */
export async function drift(
  repo: Repository,
  task: Task,
  base: string | null,
): Promise<{ behind: number; ahead: number } | null> {
  return base ? behindAhead(repo, base, `refs/heads/${task.branch}`) : null;
}

/** Tracked (and untracked, not ignored) changes in the workspace, or null when it cannot be read. */
export async function changeCount(ctx: ProjectContext, task: Task): Promise<number | null> {
  try {
    return (await statusOf(await pinned(ctx, task.path))).length;
  } catch {
    return null;
  }
}

/** Commits on the branch that the base does not have, newest first (at most `limit`). */
export async function branchCommits(
  repo: Repository,
  task: Task,
  limit = 100,
): Promise<{ sha: string; subject: string }[]> {
  const tip = await baseTip(repo, task.base);
  return (await commitsNotOn(repo, `refs/heads/${task.branch}`, tip ? [tip] : [])).slice(0, limit);
}
