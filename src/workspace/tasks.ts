import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { Store } from '../state/store.js';
import type { Task, WarrenEvent } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { validateTaskId } from './ids.js';
import { isInside } from './paths.js';

/** The one lookup of a task by the ID a user typed: validated, then present, or TASK_NOT_FOUND. */
export function requireTask(ctx: ProjectContext, rawId: string): Task {
  const id = validateTaskId(rawId);
  const task = ctx.store.getTask(ctx.key, id);
  if (!task)
    throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was changed.`, {
      hint: 'See `warren list`.',
    });
  return task;
}

/** `warren list`: every task of this repository, oldest first. */
export function listTasks(ctx: ProjectContext): Task[] {
  return ctx.store.listTasks(ctx.key);
}

/** `warren show ID`: the task and its newest `limit` events, oldest first. */
export function showTask(ctx: ProjectContext, rawId: string, limit = 20): { task: Task; events: WarrenEvent[] } {
  const task = requireTask(ctx, rawId);
  return { task, events: ctx.store.taskEvents(ctx.key, task.id, Math.max(1, limit)) };
}

/** `warren path ID`: where the task's workspace is. */
export function taskPath(ctx: ProjectContext, rawId: string): string {
  return requireTask(ctx, rawId).path;
}

/**
 * The task whose workspace holds `dir` (the workspace's folder or any folder in it), of any
 * repository under this WARREN_HOME, compared by real paths (a link to a workspace is the
 * workspace); the innermost when workspaces nest. Null when `dir` is in none.
 */
export function taskHolding(store: Store, dir: string): Task | null {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const here = real(dir);
  let found: { task: Task; at: string } | null = null;
  for (const task of store.listTasks()) {
    const at = real(task.path);
    if (isInside(at, here) && (found === null || at.length > found.at.length)) found = { task, at };
  }
  return found?.task ?? null;
}
