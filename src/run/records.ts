import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../state/store.js';
import type { SuperviseResult } from './supervisor.js';

/** The `runs` table (migration 002-runs): one row per supervised command. */

/** `hook`: a git commit hook of the main checkout's, run by `checkpoint` inside the task's boundary. */
export type RunKind = 'exec' | 'agent' | 'setup' | 'verify' | 'teardown' | 'hook';

export interface RunRecord {
  id: string;
  project: string;
  taskId: string;
  kind: RunKind;
  label: string;
  argv: string[];
  cwd: string;
  sandbox: string;
  containment: string;
  startedAt: string;
  endedAt: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  canceledBy: string | null;
  reason: string | null;
  logPath: string;
}

export function newRunId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(4).toString('hex')}`;
}

/** `$WARREN_HOME/logs/<project>/<task>/`: kept after the run and after `rm`; `gc` deletes a removed task's logs a week after its last run (log-gc.ts). */
export function logDir(store: Store, project: string, taskId: string): string {
  const dir = path.join(store.home, 'logs', project, taskId);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export function insertRun(
  store: Store,
  run: Omit<RunRecord, 'endedAt' | 'exitCode' | 'signal' | 'timedOut' | 'canceledBy' | 'reason'>,
): void {
  store.db
    .prepare(
      `INSERT INTO runs (id, project, task_id, kind, label, argv, cwd, sandbox, containment, started_at, log_path)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      run.id,
      run.project,
      run.taskId,
      run.kind,
      run.label,
      JSON.stringify(run.argv),
      run.cwd,
      run.sandbox,
      run.containment,
      run.startedAt,
      run.logPath,
    );
}

export function finishRun(store: Store, id: string, result: SuperviseResult, reason: string | null): void {
  store.db
    .prepare(
      `UPDATE runs SET started_at = ?, ended_at = ?, exit_code = ?, signal = ?, timed_out = ?, canceled_by = ?, reason = ?, containment = ?
       WHERE id = ?`,
    )
    .run(
      result.startedAt,
      result.endedAt,
      result.exitCode,
      result.signal,
      result.timedOut ? 1 : 0,
      result.canceledBy,
      reason,
      result.containment,
      id,
    );
}

/** Closes a run that never got a result (the command could not be started or watched), with why. */
export function abandonRun(store: Store, id: string, reason: string, now = new Date()): void {
  store.db
    .prepare('UPDATE runs SET ended_at = ?, reason = ? WHERE id = ? AND ended_at IS NULL')
    .run(now.toISOString(), reason, id);
}

/** The `reason` of a run whose warren ended without recording the end. */
export const INTERRUPTED_REASON =
  'interrupted: the warren that ran it ended without recording the end (killed?); its processes ended with it';

/**
 * Closes the runs of a task that never recorded an end: their warren was killed (SIGKILL, power
 * loss), and the run's processes went with it (death signal, PID namespace). Called by the next
 * run of the task, under the task lock, so no run of the task can be in progress. Returns their ids.
 */
export function closeInterruptedRuns(store: Store, project: string, taskId: string, now = new Date()): string[] {
  const open = store.db
    .prepare('SELECT id FROM runs WHERE project = ? AND task_id = ? AND ended_at IS NULL')
    .all(project, taskId) as { id: string }[];
  const close = store.db.prepare('UPDATE runs SET ended_at = ?, reason = ? WHERE id = ? AND ended_at IS NULL');
  for (const { id } of open) close.run(now.toISOString(), INTERRUPTED_REASON, id);
  return open.map((r) => r.id);
}

/** The label of the task's newest run of `kind` started at or after `since` (an agent's name for `agent`), or null. */
export function newestRunLabel(
  store: Store,
  project: string,
  taskId: string,
  kind: RunKind,
  since: string,
): string | null {
  const row = store.db
    .prepare(
      'SELECT label FROM runs WHERE project = ? AND task_id = ? AND kind = ? AND started_at >= ? ORDER BY started_at DESC LIMIT 1',
    )
    .get(project, taskId, kind, since) as { label: string } | undefined;
  return row?.label ?? null;
}
