import { procStartTime } from '../util/lockfile.js';
import { environOf, isAlive, listPids } from './proc.js';

/**
 * What a killed warren left running. warren's own git calls run in process groups of their own
 * (so that a timeout ends git and what it started), so they outlive a warren that is SIGKILLed:
 * a `git worktree remove` or `read-tree -u` goes on changing the repository after its warren is
 * gone — and after the next command's repair has judged what it sees. So every git warren starts
 * carries the starting warren's identity in its environment (`OWNER_ENV`), and a repair first
 * waits for what that warren left running to finish, ending it after a bound: the repair then
 * judges a state that no longer moves.
 */

export const OWNER_ENV = 'WARREN_OWNER';

/** This process's identity, as its children carry it: pid and start time (a pid is reused). */
export function ownerTag(pid: number, procStart: string | null): string {
  return `${pid}@${procStart ?? '?'}`;
}

let own: Record<string, string> | null = null;

/**
 * The variable that names this warren as the owner of a child, for a tool whose work a repair
 * must not judge half done (a `cp` into a task's folder). Never for a daemon (a fuse mount, a
 * database server): a repair ends what its owner left running.
 */
export function ownerEnv(): Record<string, string> {
  own ??= { [OWNER_ENV]: ownerTag(process.pid, procStartTime(process.pid)) };
  return own;
}

/** Live processes (not zombies) whose environment names `tag` as their owner. */
export function leftRunning(tag: string): number[] {
  return listPids().filter((pid) => pid !== process.pid && environOf(pid).get(OWNER_ENV) === tag && isAlive(pid));
}

/**
 * Waits up to `waitMs` for the processes `tag` left running to end on their own (a git finishing
 * its write), then ends what is left with SIGKILL. Returns how many were found, and how many had
 * to be ended.
 */
export async function settleLeftRunning(tag: string, waitMs = 10_000): Promise<{ found: number; ended: number }> {
  const first = leftRunning(tag);
  if (first.length === 0) return { found: 0, ended: 0 };
  const deadline = Date.now() + waitMs;
  let left = first;
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = leftRunning(tag);
  }
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return { found: first.length, ended: left.length };
}
