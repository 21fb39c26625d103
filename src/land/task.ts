import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { currentBranch } from '../git/refs.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { assertContained } from '../workspace/paths.js';
import { requireTask } from '../workspace/tasks.js';

/** The task row as checkpoint and land need it: present, in a state that allows work, where it should be. */
export function loadTask(ctx: ProjectContext, id: string): Task {
  const task = requireTask(ctx, id);
  if (task.state === 'creating' || task.state === 'removing' || task.state === 'remove_failed') {
    throw new WarrenError('TASK_STATE', `task ${id} is ${task.state}; nothing was changed.`, { hint: 'Wait for the running command, or see `warren show`.' });
  }
  assertContained(ctx.root, task.path);
  if (!fs.existsSync(task.path)) {
    throw new WarrenError('OWNERSHIP_MISMATCH', `task ${id}'s workspace ${task.path} is missing from disk; nothing was changed.`, {
      hint: 'Run `warren scan` (it reports it as vanished); the branch still holds every checkpoint.',
    });
  }
  return task;
}

/** An agent may have switched the workspace to another branch; committing there would put the work elsewhere. */
export async function assertOnBranch(task: Task): Promise<void> {
  const head = await currentBranch(task.path);
  if (head === task.branch) return;
  throw new WarrenError('TASK_STATE', `task ${task.id}'s workspace has ${head ? `branch ${head}` : 'a detached HEAD'} checked out, not ${task.branch}; nothing was changed.`, {
    hint: `Run \`git switch ${task.branch}\` in ${task.path} (commit or stash first), then try again.`,
  });
}
