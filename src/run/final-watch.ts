import fs from 'node:fs';
import { processTree } from '../system/proc.js';
import { describeProcess, leftoversIn } from './leftovers.js';

/**
 * Where an agent's final-result marker is looked for: a file of this machine (its processes are
 * this machine's too, and what it left is listed), or a question asked elsewhere every
 * `everyMs` (a task in a cluster: a file in its pod, whose processes warren cannot list here).
 */
export type FinalMarker =
  | { kind: 'file'; file: string }
  | { kind: 'asked'; exists(): Promise<boolean>; everyMs: number; onAskFailed(error: string): void };

/** An agent's final-result marker, as the supervisor is given it (supervisor.ts `final`). */
export interface FinalSpec {
  marker: FinalMarker;
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
    const rootPid = final.marker.kind === 'file' ? root() : undefined; // another machine's processes are not listed
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

  const asked = final.marker.kind === 'asked' ? askEvery(final.marker) : null;
  const poll = setInterval(() => {
    if (finalAt === null) {
      if (!(final.marker.kind === 'file' ? fs.existsSync(final.marker.file) : asked?.seen === true)) return;
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
      asked?.stop();
    },
  };
}

/**
 * Asks `exists` every `everyMs`, one question at a time, until it says yes or `stop`. A question
 * that fails is said once (`onAskFailed`) and asked again: the run goes on as one whose marker
 * is not there yet, bounded by its timeout as before.
 */
function askEvery(marker: Extract<FinalMarker, { kind: 'asked' }>): { readonly seen: boolean; stop(): void } {
  let seen = false;
  let stopped = false;
  let said = false;
  let timer: NodeJS.Timeout | undefined;
  const ask = (): void => {
    marker
      .exists()
      .then((yes) => (seen = yes))
      .catch((err: unknown) => {
        if (!said) marker.onAskFailed(err instanceof Error ? err.message : String(err));
        said = true;
      })
      .finally(() => {
        if (!stopped && !seen) timer = setTimeout(ask, marker.everyMs);
      });
  };
  timer = setTimeout(ask, marker.everyMs);
  return {
    get seen() {
      return seen;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
