import type { ProjectContext } from '../workspace/context.js';
import type { PairResult } from './types.js';

/**
 * The conflict map's rows (migration 008-conflicts): each task's last snapshot, and each pair's
 * merge keyed by the two commits it was computed on. Only this file reads or writes the tables.
 */

export interface SnapshotRow {
  taskId: string;
  tip: string;
  commit: string;
  baseTip: string;
  /** Paths the snapshot changed since it left its base (at `baseTip`). */
  touched: string[];
  /** Paths the base changed between where the snapshot left it and `baseTip`. */
  baseTouched: string[];
  error: string | null;
  takenAt: string;
}

interface SRow {
  task_id: string;
  tip: string;
  commit_oid: string;
  base_tip: string;
  touched: string;
  base_touched: string;
  error: string | null;
  taken_at: string;
}

export function snapshotRows(ctx: ProjectContext): Map<string, SnapshotRow> {
  const rows = ctx.store.db.prepare('SELECT * FROM conflict_snapshots WHERE project = ?').all(ctx.key) as SRow[];
  return new Map(
    rows.map((r) => [
      r.task_id,
      {
        taskId: r.task_id,
        tip: r.tip,
        commit: r.commit_oid,
        baseTip: r.base_tip,
        touched: JSON.parse(r.touched) as string[],
        baseTouched: JSON.parse(r.base_touched) as string[],
        error: r.error,
        takenAt: r.taken_at,
      },
    ]),
  );
}

export function saveSnapshot(ctx: ProjectContext, s: SnapshotRow): void {
  ctx.store.db
    .prepare(
      `INSERT INTO conflict_snapshots (project, task_id, tip, commit_oid, base_tip, touched, base_touched, error, taken_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project, task_id) DO UPDATE SET tip = excluded.tip, commit_oid = excluded.commit_oid,
         base_tip = excluded.base_tip, touched = excluded.touched, base_touched = excluded.base_touched,
         error = excluded.error, taken_at = excluded.taken_at`,
    )
    .run(
      ctx.key,
      s.taskId,
      s.tip,
      s.commit,
      s.baseTip,
      JSON.stringify(s.touched),
      JSON.stringify(s.baseTouched),
      s.error,
      s.takenAt,
    );
}

interface PRow {
  a: string;
  b: string;
  a_commit: string;
  b_commit: string;
  result: string;
}

const pairKey = (a: string, b: string): string => `${a}\0${b}`;

export function pairRows(ctx: ProjectContext): Map<string, PairResult> {
  const rows = ctx.store.db.prepare('SELECT * FROM conflict_pairs WHERE project = ?').all(ctx.key) as PRow[];
  return new Map(rows.map((r) => [pairKey(r.a, r.b), JSON.parse(r.result) as PairResult]));
}

export function savePair(ctx: ProjectContext, p: PairResult): void {
  ctx.store.db
    .prepare(
      `INSERT INTO conflict_pairs (project, a, b, a_commit, b_commit, conflict, result, computed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project, a, b) DO UPDATE SET a_commit = excluded.a_commit, b_commit = excluded.b_commit,
         conflict = excluded.conflict, result = excluded.result, computed_at = excluded.computed_at`,
    )
    .run(ctx.key, p.a, p.b, p.aCommit, p.bCommit, p.conflict ? 1 : 0, JSON.stringify(p), p.computedAt);
}

/** Forgets every row of a task that is no longer live (and every pair naming it). */
export function forgetTask(ctx: ProjectContext, taskId: string): void {
  ctx.store.db.prepare('DELETE FROM conflict_snapshots WHERE project = ? AND task_id = ?').run(ctx.key, taskId);
  ctx.store.db
    .prepare('DELETE FROM conflict_pairs WHERE project = ? AND (a = ? OR b = ?)')
    .run(ctx.key, taskId, taskId);
}

export function forgetPair(ctx: ProjectContext, a: string, b: string): void {
  ctx.store.db.prepare('DELETE FROM conflict_pairs WHERE project = ? AND a = ? AND b = ?').run(ctx.key, a, b);
}

export { pairKey };
