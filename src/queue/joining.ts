import path from 'node:path';
import { listDir } from '../util/list-dir.js';
import { isHolderAlive, readHolder, tryAcquire, type HeldLock } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * Lands on their way into the queue. A `land` reading its guards — seconds, for lands started
 * together on a busy machine — holds a marker naming its task, so the processor knows who is
 * about to join and waits for exactly them instead of guessing with a quiet period. A marker is
 * a lock file, not a row: nothing of the queue is written before the guards were read, and a
 * marker whose holder died (SIGKILL) counts for nothing.
 */

function joiningDir(ctx: ProjectContext): string {
  return path.join(ctx.store.home, 'locks', ctx.key, 'queue-joining');
}

/** Held from the start of a land until it joined (or was refused); null when another live land of the task holds it. */
export function markJoining(ctx: ProjectContext, taskId: string): HeldLock | null {
  const taken = tryAcquire(path.join(joiningDir(ctx), `${taskId}.lock`), `joining the merge queue: ${taskId}`);
  return taken.ok ? taken.lock : null;
}

/** The tasks whose `land` is reading its guards right now, about to join. */
export function joiningTasks(ctx: ProjectContext): string[] {
  const dir = joiningDir(ctx);
  const tasks: string[] = [];
  for (const name of listDir(dir)) {
    if (!name.endsWith('.lock')) continue;
    const holder = readHolder(path.join(dir, name));
    if (holder && isHolderAlive(holder)) tasks.push(name.slice(0, -'.lock'.length));
  }
  return tasks;
}
