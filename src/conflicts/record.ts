import type { ProjectContext } from '../workspace/context.js';
import { pairKey, savePair } from './records.js';
import { BASE_SIDE, type PairResult } from './types.js';

/**
 * Saves the pairs merged anew and records, on each task of a pair, when the pair starts or stops
 * conflicting (`conflict.started`, `conflict.ended`); a pair that went with a task ends as `gone`.
 */
export function recordChanges(
  ctx: ProjectContext,
  before: ReadonlyMap<string, PairResult>,
  pairs: readonly PairResult[],
  live: ReadonlySet<string>,
): void {
  const now = new Map(pairs.map((p) => [pairKey(p.a, p.b), p]));
  for (const p of pairs) {
    const old = before.get(pairKey(p.a, p.b));
    if (old === p) continue; // reused as it was
    savePair(ctx, p);
    if (p.conflict && !old?.conflict) started(ctx, p);
    else if (!p.conflict && old?.conflict) ended(ctx, p, 'merges');
  }
  for (const [key, old] of before) {
    if (now.has(key) || !old.conflict) continue;
    ended(ctx, old, live.has(old.a) && (old.b === BASE_SIDE || live.has(old.b)) ? 'merges' : 'gone');
  }
}

const sidesOf = (p: PairResult): [string, string, string, string][] =>
  p.b === BASE_SIDE
    ? [[p.a, p.b, p.aCommit, p.bCommit]]
    : [
        [p.a, p.b, p.aCommit, p.bCommit],
        [p.b, p.a, p.bCommit, p.aCommit],
      ];

const named = (other: string): string => (other === BASE_SIDE ? 'its base' : other);

function started(ctx: ProjectContext, p: PairResult): void {
  const paths = p.files.map((f) => f.path);
  for (const [taskId, other, commit, otherCommit] of sidesOf(p)) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'conflict.started',
      level: 'warn',
      message: `${taskId}'s work no longer merges with ${named(other)}: ${paths.join(', ')}`,
      data: { other, paths, commit, otherCommit },
    });
  }
}

function ended(ctx: ProjectContext, p: PairResult, why: 'merges' | 'gone'): void {
  for (const [taskId, other] of sidesOf(p)) {
    if (why === 'gone' && ctx.store.getTask(ctx.key, taskId) === null) continue;
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'conflict.ended',
      message:
        why === 'merges'
          ? `${taskId}'s work merges with ${named(other)} again`
          : `${taskId} no longer conflicts with ${named(other)}: ${other} is no longer live`,
      data: { other, why },
    });
  }
}
