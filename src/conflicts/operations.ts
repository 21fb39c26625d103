import type { ProjectContext } from '../workspace/context.js';
import { requireTask } from '../workspace/tasks.js';
import { LIVE_STATES, refreshConflicts } from './map.js';
import { BASE_SIDE, type ConflictMap, type PairResult, type TaskConflicts } from './types.js';
import { conflictsOf } from './view.js';
import { WarrenError } from '../errors.js';
import { commitsTouching, mergeBase } from '../git/history.js';

/** What `warren conflicts [ID]` answers: the conflicting pairs, the clean overlaps, and what the refresh cost. */
export interface ConflictsReport {
  /** Pairs that do not merge, with their files and hunks. */
  conflicts: PairResult[];
  /** Pairs that changed the same paths and merge cleanly. */
  overlaps: { a: string; b: string; paths: string[] }[];
  tasks: ConflictMap['tasks'];
  pairs: number;
  merged: number;
  reused: number;
  snapshots: number;
  ms: number;
}

/**
 * `warren conflicts [ID]`: the map refreshed (every live task's uncommitted work read again),
 * and the pairs of `id` alone when given. A task that is not live is refused: it has no place
 * in the map.
 */
export async function conflictsReport(ctx: ProjectContext, id?: string): Promise<ConflictsReport> {
  if (id !== undefined) assertLive(ctx, id);
  const map = await refreshConflicts(ctx);
  const mine = (p: PairResult): boolean => id === undefined || p.a === id || p.b === id;
  const pairs = map.pairs.filter(mine);
  return {
    conflicts: pairs.filter((p) => p.conflict),
    overlaps: pairs
      .filter((p) => !p.conflict && p.overlap.length > 0)
      .map((p) => ({ a: p.a, b: p.b, paths: p.overlap })),
    tasks: map.tasks.filter((t) => id === undefined || t.id === id),
    pairs: map.pairs.length,
    merged: map.merged,
    reused: map.reused,
    snapshots: map.snapshots,
    ms: map.ms,
  };
}

/** What one task conflicts with, its own uncommitted work read again (the others' as last read): for `status ID`. */
export async function taskConflicts(ctx: ProjectContext, id: string): Promise<TaskConflicts> {
  const task = requireTask(ctx, id);
  if (!LIVE_STATES.has(task.state)) return { id: task.id, with: [] };
  const map = await refreshConflicts(ctx, { snapshot: [task.id] });
  return conflictsOf(map.pairs, task.id);
}

function assertLive(ctx: ProjectContext, rawId: string): void {
  const task = requireTask(ctx, rawId);
  if (LIVE_STATES.has(task.state)) return;
  throw new WarrenError(
    'TASK_STATE',
    `task ${task.id} is ${task.state}: only tasks whose work is still to land are in the conflict map. Nothing was changed.`,
    { hint: 'Run `warren conflicts` for every live task.' },
  );
}

/** What the MCP tool answers an agent: its task's conflicts (both sides' hunks), and what its base now has there. */
export interface AgentConflicts {
  id: string;
  with: TaskConflicts['with'];
  conflicts: PairResult[];
  /** The base's commits since the task left it that touch the paths it conflicts with the base in. */
  base: { tip: string; commits: { sha: string; subject: string; task: string | null }[] } | null;
}

/** `conflicts` for one task: the map refreshed (every live task's uncommitted work read again), only this task's pairs kept. */
export async function agentConflicts(ctx: ProjectContext, rawId: string): Promise<AgentConflicts> {
  const task = requireTask(ctx, rawId);
  assertLive(ctx, task.id);
  const map = await refreshConflicts(ctx);
  const mine = map.pairs.filter((p) => p.conflict && (p.a === task.id || p.b === task.id));
  const withBase = mine.find((p) => p.b === BASE_SIDE);
  let base: AgentConflicts['base'] = null;
  if (withBase) {
    const fork = (await mergeBase(ctx.repo, withBase.aCommit, withBase.bCommit)) ?? withBase.bCommit;
    const paths = withBase.files.map((f) => f.path);
    base = { tip: withBase.bCommit, commits: await commitsTouching(ctx.repo, fork, withBase.bCommit, paths) };
  }
  return { id: task.id, with: conflictsOf(map.pairs, task.id).with, conflicts: mine, base };
}

/** The pairs of one task that do not merge, its own uncommitted work read again: for the dashboard's task page. */
export async function taskConflictPairs(ctx: ProjectContext, rawId: string): Promise<PairResult[]> {
  const task = requireTask(ctx, rawId);
  if (!LIVE_STATES.has(task.state)) return [];
  const map = await refreshConflicts(ctx, { snapshot: [task.id] });
  return map.pairs.filter((p) => p.conflict && (p.a === task.id || p.b === task.id));
}
