import type { WarrenEvent } from '../state/types.js';

/**
 * How the dashboard recognises the events other features record. The names live here, in one
 * table, so that matching them to what `exec`/`run`, `setup` and `verify` actually record is a
 * one-line change. Everything read from `data` is read defensively: its shape belongs to the
 * feature that wrote it.
 */
export const RUN_EVENTS = {
  /** Any event of a supervised command; the newest one is the task's "last run". */
  prefix: 'run.',
  /** Recorded when a command starts; `data[logField]` is the path of its log file. */
  started: 'run.started',
  /** Recorded when it ends (either name); the log is followed until one arrives. */
  finished: ['run.finished', 'run.ended'] as readonly string[],
  /** When both events carry this field, a finish belongs to the start with the same value. */
  runIdField: 'runId',
  logField: 'log',
  setupPrefix: 'setup.',
  verifyPrefix: 'verify.',
} as const;

export interface LastRun {
  kind: string;
  at: string;
  message: string;
  /** The newest run event is a start: a command is running (or died without recording its end). */
  running: boolean;
  exitCode?: number;
  durationMs?: number;
  timedOut?: boolean;
  command?: string;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function commandText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(' ');
  return undefined;
}

/** Pure: the newest run event of these (oldest first), reduced to what the fleet shows. */
export function lastRun(events: readonly WarrenEvent[]): LastRun | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || !e.kind.startsWith(RUN_EVENTS.prefix)) continue;
    const exitCode = num(e.data.exitCode);
    const durationMs = num(e.data.durationMs);
    const command = commandText(e.data.command ?? e.data.argv ?? e.data.cmd);
    return {
      kind: e.kind,
      at: e.at,
      message: e.message,
      running: e.kind === RUN_EVENTS.started,
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(typeof e.data.timedOut === 'boolean' ? { timedOut: e.data.timedOut } : {}),
      ...(command !== undefined ? { command } : {}),
    };
  }
  return null;
}

/** Pure: the newest event whose kind starts with `prefix`, or null. */
export function newestWithPrefix(events: readonly WarrenEvent[], prefix: string): WarrenEvent | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e && e.kind.startsWith(prefix)) return e;
  }
  return null;
}

export interface LogSource {
  startedSeq: number;
  path: string;
  /** The finishing event, when the command has ended. */
  finished: WarrenEvent | null;
}

/** Pure: the newest started command with a log path, and whether it has finished since. */
export function logSource(events: readonly WarrenEvent[]): LogSource | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || e.kind !== RUN_EVENTS.started) continue;
    const p = e.data[RUN_EVENTS.logField];
    if (typeof p !== 'string' || p === '') return null;
    const runId = e.data[RUN_EVENTS.runIdField];
    const finished =
      events
        .slice(i + 1)
        .find((later) => RUN_EVENTS.finished.includes(later.kind) && (runId === undefined || later.data[RUN_EVENTS.runIdField] === undefined || later.data[RUN_EVENTS.runIdField] === runId)) ?? null;
    return { startedSeq: e.seq, path: p, finished };
  }
  return null;
}
