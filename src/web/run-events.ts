import type { EventKind, WarrenEvent } from '../state/events.js';
import type { RunKind } from '../run/records.js';

/**
 * How the dashboard reads a task's runs from its events: `run.started` and the `run.ended` (or
 * `run.interrupted`, recorded when the next run found a warren killed mid-run) with the same
 * `runId`. The kinds are the typed ones `addEvent` takes, so a kind nobody records cannot be
 * matched here; other events recorded meanwhile (a containment fallback, say) never end a run.
 */

export interface LastRun {
  kind: RunKind;
  at: string;
  message: string;
  /** Started and not ended: a command is running (or its warren was killed and no run has looked since). */
  running: boolean;
  exitCode?: number;
  durationMs?: number;
  timedOut?: boolean;
  command?: string;
  /**
   * For a setup or verify command: how the whole setup or verify ended. Its last command may
   * pass (exit 0) after a required one failed; the outcome is what counts.
   */
  outcome?: { kind: 'setup' | 'verify'; passed: boolean; failed: string[] };
}

/** The kinds that start and end a run, as the readers below match them. */
export const RUN_START = 'run.started' satisfies EventKind;
export const RUN_ENDINGS = ['run.ended', 'run.interrupted'] as const satisfies readonly EventKind[];

type Started = Extract<WarrenEvent, { kind: typeof RUN_START }>;
type Ending = Extract<WarrenEvent, { kind: (typeof RUN_ENDINGS)[number] }>;

function isEnding(e: WarrenEvent): e is Ending {
  return (RUN_ENDINGS as readonly string[]).includes(e.kind);
}

/** The event that ended run `runId`, among `events` after index `from`. Pure. */
function endingOf(events: readonly WarrenEvent[], from: number, runId: string): Ending | null {
  for (let i = from + 1; i < events.length; i++) {
    const e = events[i];
    if (e && isEnding(e) && e.data.runId === runId) return e;
  }
  return null;
}

/** Pure: the newest run among these events (oldest first), reduced to what the fleet shows. */
export function lastRun(events: readonly WarrenEvent[]): LastRun | null {
  // Runs of a task are one at a time (the task lock), so the newest start is the newest run.
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || e.kind !== RUN_START) continue;
    const end = endingOf(events, i, e.data.runId);
    const outcome = end ? outcomeAfter(events, i, e.data.kind) : null;
    return {
      kind: e.data.kind,
      at: end?.at ?? e.at,
      message: end?.message ?? e.message,
      running: end === null,
      command: e.data.command.join(' '),
      ...(end?.kind === 'run.ended' ? ended(end) : {}),
      ...(outcome ? { outcome } : {}),
    };
  }
  // Its start fell out of the window: the newest end alone says what the fleet shows.
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.kind === 'run.ended')
      return { kind: e.data.kind, at: e.at, message: e.message, running: false, ...ended(e) };
  }
  return null;
}

/** The setup or verify event that closed the group a run at `from` belongs to, as an outcome. */
function outcomeAfter(events: readonly WarrenEvent[], from: number, kind: RunKind): LastRun['outcome'] | null {
  if (kind !== 'setup' && kind !== 'verify') return null;
  for (let i = from + 1; i < events.length; i++) {
    const e = events[i];
    if (!e) continue;
    if (e.kind === RUN_START) return null;
    if (
      e.kind === 'setup.passed' ||
      e.kind === 'setup.failed' ||
      e.kind === 'verify.passed' ||
      e.kind === 'verify.failed'
    ) {
      const failed = e.data.results
        .filter((r) => r.exitCode !== 0 || r.timedOut)
        .map((r) => `${r.id}${r.required ? '' : ' (optional)'}`);
      return { kind, passed: e.kind.endsWith('.passed'), failed };
    }
  }
  return null;
}

function ended(e: Extract<WarrenEvent, { kind: 'run.ended' }>): Pick<LastRun, 'exitCode' | 'durationMs' | 'timedOut'> {
  return {
    ...(e.data.exitCode === null ? {} : { exitCode: e.data.exitCode }),
    durationMs: e.data.durationMs,
    timedOut: e.data.timedOut,
  };
}

/** Pure: the newest event whose kind is one of `kinds`, or null. */
export function newestOfKinds(events: readonly WarrenEvent[], kinds: readonly EventKind[]): WarrenEvent | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e && kinds.includes(e.kind)) return e;
  }
  return null;
}

export const SETUP_KINDS = ['setup.passed', 'setup.failed', 'setup.skipped'] as const satisfies readonly EventKind[];
export const VERIFY_KINDS = ['verify.passed', 'verify.failed', 'verify.empty'] as const satisfies readonly EventKind[];

export interface LogSource {
  startedSeq: number;
  path: string;
  /** The event that ended the command, once it has ended. */
  finished: Ending | null;
}

/** Pure: the newest started command with a log path, and whether it has ended since. */
export function logSource(events: readonly WarrenEvent[]): LogSource | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || e.kind !== RUN_START) continue;
    const started: Started = e;
    if (started.data.log === '') return null;
    return { startedSeq: started.seq, path: started.data.log, finished: endingOf(events, i, started.data.runId) };
  }
  return null;
}
