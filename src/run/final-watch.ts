import fs from 'node:fs';
import { processTree } from '../system/proc.js';
import { describeProcess, leftoversIn } from './leftovers.js';

/** An agent's final-result marker, as the supervisor is given it (supervisor.ts `final`). */
export interface FinalSpec {
  file: string;
  graceMs: number;
  /** The agent's command line: what tells its own processes from what it left (leftovers.ts). */
  argv: readonly string[];
  onLeftover(processes: string[], remainingMs: number): void;
}

export interface FinalWatch {
  /** The grace ran out after the final result, and the run was ended. */
  readonly endedAfterFinal: boolean;
  /** What `onLeftover` was told of (`PID NAME`); empty when nothing was. */
  readonly leftovers: string[];
  close(): void;
}

/** How often the marker is looked for, and then what the agent left. */
const POLL_MS = 200;
/**
 * How long a process other than the agent's own must outlive the final result to be called a
 * leftover (at most half the grace): Claude Code takes up to a second or so to exit after its
 * Stop hook, and a hook's own shell is gone in moments.
 */
const SETTLE_MS = 2000;

/**
 * Once the marker exists, the run has `graceMs` to end by itself; then `stop` ends it. Meanwhile,
 * processes under the run's root that are not the agent's own, still alive `SETTLE_MS` after
 * they were first seen (or when the grace runs out), are said once through `onLeftover`.
 */
export function watchFinal(final: FinalSpec, root: () => number | undefined, stop: () => void): FinalWatch {
  const settleMs = Math.min(SETTLE_MS, final.graceMs / 2);
  const firstSeen = new Map<number, number>();
  let finalAt: number | null = null;
  let graceTimer: NodeJS.Timeout | undefined;
  const state = { endedAfterFinal: false, leftovers: [] as string[] };

  const sayLeftovers = (atEnd: boolean): void => {
    const rootPid = root();
    if (finalAt === null || state.leftovers.length > 0 || rootPid === undefined) return;
    const now = Date.now();
    const left = leftoversIn(processTree(rootPid), final.argv);
    for (const pid of firstSeen.keys()) if (!left.some((p) => p.pid === pid)) firstSeen.delete(pid);
    for (const p of left) if (!firstSeen.has(p.pid)) firstSeen.set(p.pid, now);
    const settled = left.some((p) => now - (firstSeen.get(p.pid) ?? now) >= settleMs);
    if (!settled && !(atEnd && left.length > 0)) return;
    clearInterval(poll);
    state.leftovers = left.map(describeProcess);
    final.onLeftover(state.leftovers, Math.max(0, finalAt + final.graceMs - now));
  };

  const poll = setInterval(() => {
    if (finalAt === null) {
      if (!fs.existsSync(final.file)) return;
      finalAt = Date.now();
      graceTimer = setTimeout(() => {
        sayLeftovers(true);
        state.endedAfterFinal = true;
        stop();
      }, final.graceMs);
    }
    sayLeftovers(false);
  }, POLL_MS);

  return {
    get endedAfterFinal() {
      return state.endedAfterFinal;
    },
    get leftovers() {
      return state.leftovers;
    },
    close() {
      clearInterval(poll);
      clearTimeout(graceTimer);
    },
  };
}
