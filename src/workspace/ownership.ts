import { WarrenError } from '../errors.js';
import type { WorktreeEntry } from '../git/parse.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { readMeta } from './meta.js';

/**
 * Ownership is recorded twice (the metadata file beside the workspace and the database row)
 * and git has its own list. Before warren adopts, reuses or removes a workspace all three
 * must agree; otherwise it refuses and says which one disagrees.
 */
export function checkOwnership(ctx: ProjectContext, task: Task, worktrees: readonly WorktreeEntry[]): WorktreeEntry {
  const problems: string[] = [];
  const meta = readMeta(task.path);
  if (!meta) {
    problems.push(`the metadata file ${task.path}.warren.json is missing or unreadable`);
  } else {
    if (meta.project !== ctx.key) problems.push(`the metadata file names project ${meta.project}, the database ${ctx.key}`);
    if (meta.taskId !== task.id) problems.push(`the metadata file names task ${meta.taskId}, the database ${task.id}`);
    if (meta.branch !== task.branch) problems.push(`the metadata file names branch ${meta.branch}, the database ${task.branch}`);
    if (meta.path !== task.path) problems.push(`the metadata file names path ${meta.path}, the database ${task.path}`);
  }
  const entry = worktrees.find((wt) => wt.path === task.path);
  if (!entry) {
    problems.push(`git worktree list does not list ${task.path}`);
  } else if (entry.branch !== `refs/heads/${task.branch}`) {
    problems.push(`git has ${entry.branch ?? 'a detached HEAD'} checked out there, the database ${task.branch}`);
  }
  if (problems.length > 0 || !entry) {
    throw new WarrenError('OWNERSHIP_MISMATCH', `task ${task.id}'s records disagree: ${problems.join('; ')}. Nothing was changed.`, {
      hint: 'Run `warren scan` to see the workspace, and fix or remove it by hand if it is not warren\'s.',
      details: { problems },
    });
  }
  return entry;
}
