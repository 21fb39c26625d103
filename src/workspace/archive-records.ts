import type { ProjectContext } from './context.js';

/**
 * warren's own record of the archives it made (migration 006-archives): the ref and the commit
 * `rm --discard` put there. Threat: a workspace shares the repository's refs, so an agent can
 * write any ref under refs/warren/archive/ (one dated 2099 would be "the newest"), or move one
 * warren made. Only a ref this table names, at the commit it names, is an archive to restore.
 * Only this file reads or writes the table.
 */

export interface ArchiveRecord {
  ref: string;
  taskId: string;
  commit: string;
  createdAt: string;
}

interface Row {
  ref: string;
  task_id: string;
  commit_oid: string;
  created_at: string;
}

/**
 * Records `ref` at `commit` before the ref is made: false when a record of that ref is there
 * already (another archive of the same millisecond), which is then left as it is.
 */
export function recordArchive(ctx: ProjectContext, taskId: string, ref: string, commit: string): boolean {
  const result = ctx.store.db
    .prepare(
      'INSERT INTO archives (project, ref, task_id, commit_oid, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    )
    .run(ctx.key, ref, taskId, commit, new Date().toISOString());
  return result.changes === 1;
}

/** After the ref is gone (gc deleted it, or it was never made): its record, if it still names `commit`. */
export function forgetArchive(ctx: ProjectContext, ref: string, commit: string): void {
  ctx.store.db
    .prepare('DELETE FROM archives WHERE project = ? AND ref = ? AND commit_oid = ?')
    .run(ctx.key, ref, commit);
}

/** The records of this repository (of one task, when `id` is given), by ref. */
export function archiveRecords(ctx: ProjectContext, id?: string): Map<string, ArchiveRecord> {
  const rows = (
    id === undefined
      ? ctx.store.db.prepare('SELECT * FROM archives WHERE project = ?').all(ctx.key)
      : ctx.store.db.prepare('SELECT * FROM archives WHERE project = ? AND task_id = ?').all(ctx.key, id)
  ) as Row[];
  return new Map(
    rows.map((r) => [r.ref, { ref: r.ref, taskId: r.task_id, commit: r.commit_oid, createdAt: r.created_at }]),
  );
}
