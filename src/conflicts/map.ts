import type { Task } from '../state/types.js';
import { mapLimited } from '../util/map-limited.js';
import type { ProjectContext } from '../workspace/context.js';
import { branchTips } from '../workspace/git-view.js';
import { mergePair, touchedSince, type Side } from './compute.js';
import { recordChanges } from './record.js';
import { forgetPair, forgetTask, pairKey, pairRows, saveSnapshot, snapshotRows, type SnapshotRow } from './records.js';
import { taskSnapshot, workspaceTree } from './snapshot.js';
import { BASE_SIDE, type ConflictMap, type PairResult, type TaskSide } from './types.js';

/**
 * The conflict map of the live fleet: every pair of live tasks, and each task against its
 * base's current tip, merged by git (`merge-tree`) on each task's whole work (src/conflicts/
 * snapshot.ts). Incremental: a pair is merged again only when one of its two commits changed;
 * a task's uncommitted work is read again when it is named (or all are, by default), and its
 * committed tip always (one `for-each-ref` for all of them).
 */

/** Task states whose work is still to land: the ones the map is made of. */
export const LIVE_STATES: ReadonlySet<Task['state']> = new Set(['ready', 'setup_failed']);

/** git processes at once: merges are short, and the machine runs the agents too. */
const CONCURRENCY = 4;

export interface RefreshOptions {
  /** Whose uncommitted work is read again: every live task's (the default), or those named (the others' last snapshot stands). */
  snapshot?: 'all' | readonly string[];
}

export async function refreshConflicts(ctx: ProjectContext, options: RefreshOptions = {}): Promise<ConflictMap> {
  const started = performance.now();
  const tasks = ctx.store.listTasks(ctx.key).filter((t) => LIVE_STATES.has(t.state));
  const before = pairRows(ctx);
  const snaps = snapshotRows(ctx);
  const live = new Set(tasks.map((t) => t.id));
  for (const id of snaps.keys()) if (!live.has(id)) forgetTask(ctx, id);

  // The named workspaces are read while the tips are: a walk needs no tip.
  const named = options.snapshot !== undefined && options.snapshot !== 'all' ? new Set(options.snapshot) : null;
  const early = new Map(tasks.filter((t) => named?.has(t.id)).map((t) => [t.id, workspaceTree(ctx, t)]));
  const tips = await branchTips(
    ctx.repo,
    [...new Set(tasks.map((t) => t.base))],
    tasks.map((t) => t.branch),
  );
  const wanted = (id: string): boolean =>
    options.snapshot === undefined || options.snapshot === 'all' || options.snapshot.includes(id);
  let snapshots = 0;
  const sides = (
    await mapLimited(
      tasks,
      CONCURRENCY,
      async (task): Promise<(TaskSide & { side: Side; baseTip: string; baseTouched: string[] }) | null> => {
        const tip = tips.branches.get(task.branch);
        const baseTip = tips.bases.get(task.base);
        if (!tip || !baseTip) return null;
        const old = snaps.get(task.id);
        const fresh = wanted(task.id) || !old || old.tip !== tip;
        if (fresh) snapshots++;
        const { commit, error } = fresh
          ? await taskSnapshot(ctx, task, tip, early.get(task.id))
          : { commit: old.commit, error: old.error };
        const same = old && old.commit === commit && old.baseTip === baseTip;
        const { touched, baseTouched } = same ? old : await touchedSince(ctx.repo, baseTip, commit);
        const row: SnapshotRow = {
          taskId: task.id,
          tip,
          commit,
          baseTip,
          touched,
          baseTouched,
          error,
          takenAt: new Date().toISOString(),
        };
        if (fresh || !same) saveSnapshot(ctx, row);
        if (error && error !== old?.error) {
          ctx.store.addEvent({
            project: ctx.key,
            taskId: task.id,
            kind: 'conflict.snapshot_skipped',
            level: 'warn',
            message: `the conflict map could not read ${task.id}'s uncommitted work (${error}); it merges its committed tip ${tip.slice(0, 12)} instead`,
            data: { reason: error },
          });
        }
        return {
          id: task.id,
          tip,
          commit,
          uncommitted: commit !== tip,
          error,
          side: { id: task.id, commit, touched },
          baseTip,
          baseTouched,
        };
      },
    )
  ).filter((s) => s !== null);

  // Every pair of tasks (a before b by ID), then each task against its base.
  const jobs: { a: Side; b: Side }[] = [];
  const sorted = [...sides].sort((x, y) => (x.id < y.id ? -1 : 1));
  for (const [i, x] of sorted.entries()) {
    for (const y of sorted.slice(i + 1)) jobs.push({ a: x.side, b: y.side });
    jobs.push({ a: x.side, b: { id: BASE_SIDE, commit: x.baseTip, touched: x.baseTouched } });
  }
  let merged = 0;
  const pairs = await mapLimited(jobs, CONCURRENCY, async ({ a, b }): Promise<PairResult> => {
    const old = before.get(pairKey(a.id, b.id));
    if (old && old.aCommit === a.commit && old.bCommit === b.commit) return old;
    merged++;
    return mergePair(ctx.repo, a, b);
  });
  const now = new Set(pairs.map((p) => pairKey(p.a, p.b)));
  recordChanges(ctx, before, pairs, live);
  for (const [key, p] of before) if (!now.has(key)) forgetPair(ctx, p.a, p.b);
  return {
    tasks: sides.map(({ side: _s, baseTip: _b, baseTouched: _t, ...t }) => t),
    pairs,
    merged,
    reused: pairs.length - merged,
    snapshots,
    ms: Math.round(performance.now() - started),
  };
}
