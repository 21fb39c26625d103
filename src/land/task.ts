import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { assertContained, presenceAt } from '../workspace/paths.js';
import { requireTask } from '../workspace/tasks.js';

/** The task row as checkpoint and land need it: present, in a state that allows work, where it should be. */
export function loadTask(ctx: ProjectContext, id: string): Task {
  const task = requireTask(ctx, id);
  if (task.state === 'creating' || task.state === 'removing' || task.state === 'remove_failed') {
    throw new WarrenError('TASK_STATE', `task ${id} is ${task.state}; nothing was changed.`, {
      hint: 'Wait for the running command, or see `warren show`.',
    });
  }
  const presence = presenceAt(task.path);
  if (presence.kind !== 'folder') {
    throw new WarrenError(
      presence.kind === 'missing' ? 'OWNERSHIP_MISMATCH' : 'PATH_ESCAPE',
      `task ${id}'s workspace ${task.path} ${presence.kind === 'missing' ? 'is missing (a disk not mounted? moved?)' : `was replaced by ${presence.what}`}; nothing was changed, and branch ${task.branch} still holds every checkpoint.`,
      {
        hint: `Put the workspace folder back at ${task.path} and try again (\`warren scan\` lists the task as displaced); if it is gone for good, \`warren rm ${id}\` forgets it and keeps the branch.`,
      },
    );
  }
  assertContained(ctx.root, task.path);
  return task;
}
