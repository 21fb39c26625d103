import type { ProjectContext } from './context.js';

/**
 * warren's own record of the task branches it made (migration 007-made-branches): the branch and
 * the commit it was made at, written before git makes it and forgotten once the branch is gone or
 * handed over (`rm` keeping it: it is the user's from then on). Threat: a `new` killed inside
 * `git worktree add` leaves a branch that nothing else says is warren's; without this record the
 * repair must keep it (it might be someone else's), and the next `new` of that ID is refused.
 * A recorded branch still at its recorded commit holds nothing of anyone's: the repair and `gc`
 * delete it. Only this file reads or writes the table.
 */

export interface BranchRecord {
  branch: string;
  taskId: string;
  tip: string;
  createdAt: string;
}

interface Row {
  branch: string;
  task_id: string;
  tip: string;
  created_at: string;
}

/** Before git makes `branch` at `tip` for task `taskId`. */
export function recordBranch(ctx: ProjectContext, taskId: string, branch: string, tip: string): void {
  ctx.store.db
    .prepare(
      `INSERT INTO made_branches (project, branch, task_id, tip, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (project, branch) DO UPDATE SET task_id = excluded.task_id, tip = excluded.tip, created_at = excluded.created_at`,
    )
    .run(ctx.key, branch, taskId, tip, new Date().toISOString());
}

/** After the branch is gone, or is no longer warren's to delete. */
export function forgetBranch(ctx: ProjectContext, branch: string): void {
  ctx.store.db.prepare('DELETE FROM made_branches WHERE project = ? AND branch = ?').run(ctx.key, branch);
}

export function branchRecord(ctx: ProjectContext, branch: string): BranchRecord | null {
  const row = ctx.store.db
    .prepare('SELECT * FROM made_branches WHERE project = ? AND branch = ?')
    .get(ctx.key, branch) as Row | undefined;
  return row ? { branch: row.branch, taskId: row.task_id, tip: row.tip, createdAt: row.created_at } : null;
}

export function branchRecords(ctx: ProjectContext): BranchRecord[] {
  return (ctx.store.db.prepare('SELECT * FROM made_branches WHERE project = ?').all(ctx.key) as Row[]).map((r) => ({
    branch: r.branch,
    taskId: r.task_id,
    tip: r.tip,
    createdAt: r.created_at,
  }));
}
