import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';

export function requireTask(ctx: ProjectContext, rawId: string): Task {
  const id = validateTaskId(rawId);
  const task = ctx.store.getTask(ctx.key, id);
  if (!task) throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was run.`, { hint: 'See `warren list`.' });
  return task;
}
