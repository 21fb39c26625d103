import os from 'node:os';
import { isHolderAlive, procStartTime, type LockHolder } from '../util/lockfile.js';
import type { Store } from './store.js';

/**
 * Intent records (migration 003-intents): a multi-step mutation writes one before its first
 * mutation, moves it forward step by step, and deletes it after its last. A row whose process
 * is gone is an operation that died half way; src/workspace/intents.ts repairs it.
 */

export const INTENT_OPS = [
  'new',
  'rm',
  'checkpoint',
  'land',
  'provision',
  'gc',
  'queue',
  'discard',
  'restore',
] as const;
export type IntentOp = (typeof INTENT_OPS)[number];

export interface IntentRow {
  id: number;
  project: string;
  taskId: string | null;
  op: IntentOp;
  step: string;
  data: Record<string, unknown>;
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
  return {
    id: r.id,
    project: r.project,
    taskId: r.task_id,
    op: r.op as IntentOp,
    step: r.step,
    data: JSON.parse(r.data) as Record<string, unknown>,
    pid: r.pid,
    host: r.host,
    procStart: r.proc_start,
    startedAt: r.started_at,
    updatedAt: r.updated_at,
  };
}

export function insertIntent(
  store: Store,
  project: string,
  taskId: string | null,
  op: IntentOp,
  data: Record<string, unknown>,
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

export function advanceIntent(store: Store, id: number, step: string, data: Record<string, unknown>): void {
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
