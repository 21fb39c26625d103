import type { ProjectContext } from '../workspace/context.js';
import { pairRows } from './records.js';
import { BASE_SIDE, type PairResult, type TaskConflicts } from './types.js';

/** Readers of the map for people and agents. Pure but for `lastMap`, which reads the rows as last computed. */

/** The pairs as the last refresh left them (no git call): what `list` shows. */
export function lastMap(ctx: ProjectContext): PairResult[] {
  return [...pairRows(ctx).values()];
}

/** What `id` conflicts with, each other side (a task, or `@base`) with the paths. */
export function conflictsOf(pairs: readonly PairResult[], id: string): TaskConflicts {
  const found: TaskConflicts['with'] = [];
  for (const p of pairs) {
    if (!p.conflict || (p.a !== id && p.b !== id)) continue;
    found.push({ other: p.a === id ? p.b : p.a, paths: p.files.map((f) => f.path) });
  }
  found.sort((x, y) => (x.other === BASE_SIDE ? -1 : y.other === BASE_SIDE ? 1 : x.other < y.other ? -1 : 1));
  return { id, with: found };
}

/** One line per task that conflicts: `a conflicts with b (f.ts, g.ts), its base (h.ts)`. */
export function conflictLine(c: TaskConflicts): string {
  return c.with.map((w) => `${w.other === BASE_SIDE ? 'its base' : w.other} (${w.paths.join(', ')})`).join(', ');
}
