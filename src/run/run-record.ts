import path from 'node:path';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import {
  abandonRun,
  closeInterruptedRuns,
  finishRun,
  INTERRUPTED_REASON,
  insertRun,
  logDir,
  newRunId,
  type RunKind,
} from './records.js';
import type { SuperviseResult } from './supervisor.js';

/**
 * A run's record and its `run.started` / `run.ended` events, the same wherever the run's
 * process runs (here, in a sandbox, a container, a cluster, or on a host over SSH): the runner
 * (execute.ts) calls these around the one process it supervises.
 */

interface Described {
  kind: RunKind;
  label: string;
  argv: readonly string[];
  logPath?: string;
}

/** Closes what a killed warren left "running", then records this run as started. `where`: ` on host NAME`, or ''. */
export function beginRun(
  ctx: ProjectContext,
  task: Task,
  request: Described,
  sandbox: string,
  containment: string,
  where = '',
): { runId: string; log: string } {
  for (const id of closeInterruptedRuns(ctx.store, ctx.key, task.id)) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'run.interrupted',
      level: 'warn',
      message: `run ${id} was ${INTERRUPTED_REASON}`,
      data: { runId: id },
    });
  }
  const runId = newRunId();
  const log = request.logPath ?? path.join(logDir(ctx.store, ctx.key, task.id), `${runId}-${request.kind}.log`);
  insertRun(ctx.store, {
    id: runId,
    project: ctx.key,
    taskId: task.id,
    kind: request.kind,
    label: request.label,
    argv: [...request.argv],
    cwd: task.path,
    sandbox,
    containment,
    startedAt: new Date().toISOString(),
    logPath: log,
  });
  // The dashboard follows the log from this event until run.ended.
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'run.started',
    message: `${request.kind} ${request.label} started${where} (log ${log})`,
    data: { runId, kind: request.kind, log, command: [...request.argv] },
  });
  return { runId, log };
}

/** The command could not be started or watched: its run is closed with why, never left "running". */
export function runNotStarted(
  ctx: ProjectContext,
  task: Task,
  request: Described,
  run: { runId: string; log: string },
  err: unknown,
): void {
  const reason = `could not run: ${err instanceof Error ? err.message : String(err)}`;
  abandonRun(ctx.store, run.runId, reason);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'run.ended',
    level: 'error',
    message: `${request.kind} ${request.label}: ${reason} (log ${run.log})`,
    data: {
      runId: run.runId,
      kind: request.kind,
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      log: run.log,
      survivors: [],
    },
  });
}

/** The run's end, recorded and said, with what outlived it. `where`: ` on host NAME`, or ''. */
export function endRun(
  ctx: ProjectContext,
  task: Task,
  request: Described,
  run: { runId: string; log: string },
  result: SuperviseResult,
  reason: string | null,
  where = '',
): void {
  finishRun(ctx.store, run.runId, result, reason);
  const ok = result.exitCode === 0 && !result.timedOut && result.canceledBy === null;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'run.ended',
    level: ok && result.survivors.length === 0 ? 'info' : 'warn',
    message: `${request.kind} ${request.label}${where}: ${reason ?? `exit ${result.exitCode}`} after ${result.durationMs}ms (log ${run.log})${
      result.survivors.length > 0
        ? `; ${result.survivors.length} process(es) outlived it: ${result.survivors.join(', ')}`
        : ''
    }`,
    data: {
      runId: run.runId,
      kind: request.kind,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      log: run.log,
      survivors: result.survivors,
    },
  });
}

/** Why a run ended, in words, or null when it simply exited: a timeout, a cancel, a signal, a sandbox's refusal. */
export function explain(result: SuperviseResult, timeoutMs: number | undefined, failure: string | null): string | null {
  const ending = result.forced ? 'SIGKILL after the grace period' : 'SIGTERM';
  if (result.timedOut) return `timed out after ${timeoutMs}ms; ended with ${ending}`;
  if (result.outputClosed) {
    const { stream, code } = result.outputClosed;
    return `${stream} closed (${code})${code === 'EPIPE' ? ': the reader went away' : ''}; ended with ${ending}`;
  }
  if (result.canceledBy) return `canceled by ${result.canceledBy} to warren; ended with ${ending}`;
  if (result.exitCode !== 0) return failure;
  return null;
}
