import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import type { LockTiming } from './locks.js';
import type { SyncOutcome } from './sync.js';
import type { CreateOptions } from './types.js';

/** What only the command that makes the task has: its options, what it read, what it has made so far. */
export interface NewTaskLive {
  options: CreateOptions;
  type: string;
  base: string;
  sync: SyncOutcome;
  /** Where the branch is made: the base commit, or for `restore` the archived branch tip. */
  tip: string;
  /** The features' reads (`prepare`), started before the first step and awaited by each feature's step. */
  prepared: Promise<unknown>[];
  /** What the worktree step made: `undo` deletes only what this run made. */
  made: { worktree: boolean; branch: boolean };
  repoLock: LockTiming;
  /** `restore`: puts the archived files in the worktree, and says where they came from. */
  restore?: { from: string; populate(wsPath: string): Promise<void> };
}

/**
 * Once the operation ended, done or not, and before the task's lock is let go: a prepared value
 * that holds something open or under way (`close()`) is closed, and what it returns awaited.
 */
export async function endPrepared(live: Pick<NewTaskLive, 'prepared'>): Promise<void> {
  const closeIt = async (value: unknown): Promise<void> => {
    const held = value as { close?: () => unknown } | null | undefined;
    if (typeof held?.close === 'function') await held.close();
  };
  await Promise.all(live.prepared.map((p) => p.then(closeIt, () => undefined)));
}

/** The live state of a new task's run; the features' reads start now, while git makes the worktree. */
export function startLive(
  ctx: ProjectContext,
  options: CreateOptions,
  read: Pick<NewTaskLive, 'type' | 'base' | 'sync' | 'tip'> & Pick<Partial<NewTaskLive>, 'restore'>,
): NewTaskLive {
  const prepared = ctx.lifecycle.create.map((step) =>
    step.prepare ? step.prepare(ctx, options) : Promise.resolve(undefined),
  );
  for (const p of prepared) p.catch(() => undefined); // a failure surfaces when its step awaits it, or is moot once undone
  return { options, ...read, prepared, made: { worktree: false, branch: false }, repoLock: {} };
}

/**
 * What the features start once git recorded the worktree, while it checks the files out
 * (CreateStep.whileCheckingOut): null when this task has none, else what starts it. The prepared
 * values it needs are awaited first (a container's is at hand).
 */
export async function startsWhileCheckingOut(
  ctx: ProjectContext,
  live: Pick<NewTaskLive, 'options' | 'prepared'>,
): Promise<((task: Task) => void) | null> {
  const wanted = ctx.lifecycle.create.flatMap((step, i) => {
    const hook = step.whileCheckingOut;
    return hook?.wanted(ctx, live.options) ? [{ hook, value: live.prepared[i] }] : [];
  });
  if (wanted.length === 0) return null;
  const values = await Promise.all(wanted.map((w) => w.value));
  return (task) => wanted.forEach((w, n) => w.hook.start(ctx, task, live.options, values[n]));
}
