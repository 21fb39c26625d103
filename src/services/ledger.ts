import type { Store } from '../state/store.js';

/**
 * The ledger of what warren made on a PostgreSQL server (migration 007-service-objects): a
 * database or role is recorded before it is made and forgotten after it was dropped, so a crash
 * between the two leaves a record of nothing, which `gc` clears; `gc` drops nothing it does not
 * name. `server` is `warren` (warren's own cluster) or the user's server as `host:port`.
 */

export type ObjectKind = 'database' | 'role';

export interface LedgerRow {
  server: string;
  kind: ObjectKind;
  name: string;
  project: string;
  /** Null: a template, shared by the tasks cloned from it. */
  taskId: string | null;
}

export function recordObject(store: Store, row: LedgerRow): void {
  store.db
    .prepare(
      `INSERT INTO service_objects (server, kind, name, project, task_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (server, kind, name) DO UPDATE SET project = excluded.project, task_id = excluded.task_id`,
    )
    .run(row.server, row.kind, row.name, row.project, row.taskId, new Date().toISOString());
}

export function forgetObject(store: Store, server: string, kind: ObjectKind, name: string): void {
  store.db.prepare('DELETE FROM service_objects WHERE server = ? AND kind = ? AND name = ?').run(server, kind, name);
}

export function isRecorded(store: Store, server: string, kind: ObjectKind, name: string): boolean {
  return (
    store.db
      .prepare('SELECT 1 FROM service_objects WHERE server = ? AND kind = ? AND name = ?')
      .get(server, kind, name) !== undefined
  );
}

interface Row {
  server: string;
  kind: ObjectKind;
  name: string;
  project: string;
  task_id: string | null;
}

const toRow = (r: Row): LedgerRow => ({
  server: r.server,
  kind: r.kind,
  name: r.name,
  project: r.project,
  taskId: r.task_id,
});

export function objectsOfTask(store: Store, project: string, taskId: string): LedgerRow[] {
  return (
    store.db
      .prepare('SELECT server, kind, name, project, task_id FROM service_objects WHERE project = ? AND task_id = ?')
      .all(project, taskId) as Row[]
  ).map(toRow);
}

/** Every record of this project, templates included. */
export function objectsOfProject(store: Store, project: string): LedgerRow[] {
  return (
    store.db
      .prepare('SELECT server, kind, name, project, task_id FROM service_objects WHERE project = ? ORDER BY kind, name')
      .all(project) as Row[]
  ).map(toRow);
}

/** How many task databases on `server` (of any project in this WARREN_HOME) warren still holds. */
export function taskObjectsOn(store: Store, server: string): number {
  return (
    store.db
      .prepare('SELECT COUNT(*) AS n FROM service_objects WHERE server = ? AND task_id IS NOT NULL')
      .get(server) as { n: number }
  ).n;
}
