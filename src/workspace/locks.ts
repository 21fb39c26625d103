import path from 'node:path';
import { WarrenError } from '../errors.js';
import { acquireWaiting, tryAcquire, type HeldLock, type LockHolder } from '../util/lockfile.js';
import type { ProjectContext } from './context.js';

function describe(holder: LockHolder | null): string {
  return holder
    ? `pid ${holder.pid} on ${holder.host} (${holder.purpose}, since ${holder.startedAt})`
    : 'another process';
}

export function taskLockPath(ctx: ProjectContext, id: string): string {
  return path.join(ctx.store.home, 'locks', ctx.key, `${id}.lock`);
}

/** The per-task lock: fails at once when a live process holds it; takes over a dead holder's. */
export function lockTask(ctx: ProjectContext, id: string, purpose: string): HeldLock {
  const result = tryAcquire(taskLockPath(ctx, id), purpose);
  if (!result.ok) {
    throw new WarrenError('LOCK_HELD', `task ${id} is locked by ${describe(result.holder)}; nothing was changed.`, {
      hint: "Wait for that command to finish. If that process is gone, run the command again: a dead holder's lock is taken over.",
      details: { holder: result.holder },
    });
  }
  if (result.tookOverFrom) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'lock.takeover',
      level: 'warn',
      message: `took over the lock of task ${id} from ${describe(result.tookOverFrom)}, which is no longer running`,
      data: { holder: result.tookOverFrom },
    });
  }
  return result.lock;
}

export async function withTaskLock<T>(
  ctx: ProjectContext,
  id: string,
  purpose: string,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = lockTask(ctx, id, purpose);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

export const REPO_LOCK_WAIT_MS = 120_000;

/**
 * The repository-level lock (in the common git dir, so every warren sharing the repository
 * sees it) around what git cannot run concurrently: worktree add/remove/prune/move, fetch,
 * branch deletion. Commits inside separate worktrees do not take it.
 */
export async function withRepoLock<T>(
  ctx: ProjectContext,
  purpose: string,
  fn: () => Promise<T>,
  timing?: LockTiming,
): Promise<T> {
  const file = path.join(ctx.repo.commonDir, 'warren-repo.lock');
  const asked = Date.now();
  const result = await acquireWaiting(file, purpose, REPO_LOCK_WAIT_MS);
  const got = Date.now();
  if (!result.ok) {
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `the repository lock was held by ${describe(result.holder)} for over ${REPO_LOCK_WAIT_MS / 1000}s; nothing was changed.`,
      {
        hint: `Wait for it to finish; if no warren process is running, remove ${file}.`,
        details: { holder: result.holder, file },
      },
    );
  }
  if (result.tookOverFrom) {
    ctx.store.addEvent({
      project: ctx.key,
      kind: 'lock.takeover',
      level: 'warn',
      message: `took over the repository lock from ${describe(result.tookOverFrom)}, which is no longer running`,
      data: { holder: result.tookOverFrom },
    });
  }
  try {
    return await fn();
  } finally {
    result.lock.release();
    if (timing) {
      timing.waitedMs = got - asked;
      timing.heldMs = Date.now() - got;
    }
  }
}

/** How long a `withRepoLock` waited for the lock and then held it (filled in when it returns). */
export interface LockTiming {
  waitedMs?: number;
  heldMs?: number;
}
