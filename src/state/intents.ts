import os from 'node:os';
import { isHolderAlive, procStartTime, type LockHolder } from '../util/lockfile.js';
import type { Store } from './store.js';

/**
 * Intent records (migration 003-intents): a multi-step mutation writes one before its first
 * mutation, moves it forward step by step, and deletes it after its last. A row whose process
 * is gone is an operation that died half way; the runner (src/workspace/operation.ts) repairs it.
 */

/**
 * Each operation's payload, by the operation's name. This layer names none: each operation's
 * declaration adds its own (src/workspace/create.ts adds `new`, src/land/land.ts `land`, …).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the operations' declarations
export interface IntentPayloads {}
export type IntentOp = keyof IntentPayloads;

/** An intent as stored: its operation and payload are what some warren wrote (perhaps an older or newer one). */
export interface IntentRow {
  id: number;
  project: string;
  taskId: string | null;
  op: string;
  /** The last step it passed (`begun` before the first). */
  step: string;
  data: unknown;
  pid: number;
  host: string;
  procStart: string | null;
  startedAt: string;
  updatedAt: string;
}

interface Row {
  id: number;
  project: string;
  task_id: string | null;
  op: string;
  step: string;
  data: string;
  pid: number;
  host: string;
  proc_start: string | null;
  started_at: string;
  updated_at: string;
}

function toIntent(r: Row): IntentRow {
  let data: unknown = null;
  try {
    data = JSON.parse(r.data);
  } catch {
    // an unreadable payload: recovery says so and keeps the row
  }
  return {
    id: r.id,
    project: r.project,
    taskId: r.task_id,
    op: r.op,
    step: r.step,
    data,
    pid: r.pid,
    host: r.host,
    procStart: r.proc_start,
    startedAt: r.started_at,
    updatedAt: r.updated_at,
  };
}

export function insertIntent<Op extends IntentOp>(
  store: Store,
  project: string,
  taskId: string | null,
  op: Op,
  data: IntentPayloads[Op],
): number {
  const now = new Date().toISOString();
  const result = store.db
    .prepare(
      'INSERT INTO intents (project, task_id, op, step, data, pid, host, proc_start, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
    .run(
      project,
      taskId,
      op,
      'begun',
      JSON.stringify(data),
      process.pid,
      os.hostname(),
      procStartTime(process.pid),
      now,
      now,
    );
  return Number(result.lastInsertRowid);
}

export function advanceIntent<Op extends IntentOp>(
  store: Store,
  id: number,
  step: string,
  data: IntentPayloads[Op],
): void {
  store.db
    .prepare('UPDATE intents SET step = ?, data = ?, updated_at = ? WHERE id = ?')
    .run(step, JSON.stringify(data), new Date().toISOString(), id);
}

export function deleteIntent(store: Store, id: number): void {
  store.db.prepare('DELETE FROM intents WHERE id = ?').run(id);
}

export function projectIntents(store: Store, project: string): IntentRow[] {
  return (store.db.prepare('SELECT * FROM intents WHERE project = ? ORDER BY id').all(project) as Row[]).map(toIntent);
}

/** True while the process that wrote the intent still runs (the same rule as a lock's holder). */
export function intentOwnerAlive(intent: IntentRow): boolean {
  const holder: LockHolder = {
    pid: intent.pid,
    host: intent.host,
    startedAt: intent.startedAt,
    procStart: intent.procStart,
    purpose: intent.op,
    token: String(intent.id),
  };
  return isHolderAlive(holder);
}

/**
 * Claims a dead process's intent for this one (compare-and-set on the owner), so that two
 * commands starting at once do not both repair it. False when someone else claimed it first.
 */
export function claimIntent(store: Store, intent: IntentRow): boolean {
  return (
    store.db
      .prepare(
        'UPDATE intents SET pid = ?, host = ?, proc_start = ?, updated_at = ? WHERE id = ? AND pid = ? AND host = ?',
      )
      .run(
        process.pid,
        os.hostname(),
        procStartTime(process.pid),
        new Date().toISOString(),
        intent.id,
        intent.pid,
        intent.host,
      ).changes === 1
  );
}
