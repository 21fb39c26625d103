import { isWarrenError } from '../errors.js';
import { planLand } from '../land/plan.js';
import { lockTask } from '../workspace/locks.js';
import { mergeTreeDetailed } from '../git/merge-tree.js';
import { changedSinceFork } from '../git/trees.js';
import { mayConflict } from '../conflicts/compute.js';
import { revParse, revParseMany } from '../git/refs.js';
import type { ProjectContext } from '../workspace/context.js';
import { bounce } from './chain.js';
import { activeEntries, type QueueEntry } from './store.js';

/**
 * The merge queue's use of git's merge before any squash or gate (`land.conflicts`, on by
 * default): a batch is made of entries whose tasks merge with each other, and an entry whose
 * task no longer merges with its base (what just landed) is bounced at once, with the paths —
 * not when its turn comes, after other batches' gates. The chain (chain.ts) still judges every
 * squash itself: this only chooses and bounces earlier. Protected paths are not left out here,
 * so a conflict only in one keeps an entry out of a batch (it lands in a later one).
 */

export function presortOn(ctx: ProjectContext): boolean {
  return ctx.config.land?.conflicts !== false;
}

/** The first `size` waiting entries that merge with every earlier one taken; the first is always taken. */
export async function conflictFreeBatch(
  ctx: ProjectContext,
  queued: readonly QueueEntry[],
  size: number,
): Promise<QueueEntry[]> {
  const taken: { entry: QueueEntry; tip: string; touched: string[] | null }[] = [];
  const tipOf = await taskTips(ctx, queued);
  for (const entry of queued) {
    if (taken.length >= size) break;
    const task = ctx.store.getTask(ctx.key, entry.taskId);
    const tip = tipOf.get(entry.taskId) ?? null;
    if (!task || !tip) {
      taken.push({ entry, tip: '', touched: [] }); // the chain bounces it, saying why
      continue;
    }
    // What each changed since it left the base: git merges only pairs whose changes can meet.
    const touched = await changedSinceFork(ctx.repo, `refs/heads/${task.base}`, tip).catch(() => null); // unknown: merged with every one
    let clash: { with: string; paths: string[] } | null = null;
    for (const t of taken) {
      if (!t.tip || clash || (touched && t.touched && !mayConflict(t.touched, touched))) continue;
      const merged = await mergeTreeDetailed(ctx.repo, t.tip, tip);
      if (!merged.clean) clash = { with: t.entry.taskId, paths: merged.conflicted };
    }
    if (!clash || taken.length === 0) {
      taken.push({ entry, tip, touched });
      continue;
    }
    ctx.store.addEvent({
      project: ctx.key,
      taskId: entry.taskId,
      kind: 'queue.waiting',
      // The words of the chain's own wait (chain.ts): one shape for one answer.
      message: `${entry.taskId} waits: it conflicts with ${clash.with}, ahead of it in the merge queue and not landed yet, in ${clash.paths.join(', ')}; it is planned again once that has landed or bounced`,
      data: { entry: entry.id, waitsFor: [clash.with], paths: clash.paths },
    });
  }
  return taken.map((t) => t.entry);
}

/**
 * Bounces every waiting entry of `base` whose task no longer merges with the base's tip, before
 * any gate: git's merge finds them, then land's own plan says why, in the words a bounce at the
 * entry's turn would have used (who landed the paths). An entry whose plan passes (its conflict
 * was only in protected paths) or whose task is busy stays queued.
 */
export async function bounceConflictingWithBase(ctx: ProjectContext, base: string): Promise<number> {
  const waiting = activeEntries(ctx.store, ctx.key).filter(
    (e) => e.state === 'queued' && ctx.store.getTask(ctx.key, e.taskId)?.base === base,
  );
  const tip = await revParse(ctx.repo, `refs/heads/${base}`);
  if (!tip) return 0;
  const tipOf = await taskTips(ctx, waiting);
  let bounced = 0;
  for (const entry of waiting) {
    const task = ctx.store.getTask(ctx.key, entry.taskId);
    if (!task) continue;
    const taskTip = tipOf.get(entry.taskId) ?? null;
    if (!taskTip || (await mergeTreeDetailed(ctx.repo, tip, taskTip)).clean) continue;
    let held: { release(): void };
    try {
      held = lockTask(ctx, entry.taskId, `land (merge queue) ${entry.taskId}`);
    } catch {
      continue; // its turn will judge it
    }
    try {
      await planLand(ctx, task, {
        onto: tip,
        ...(entry.options.acceptHooks ? { acceptHooks: true } : {}),
      });
    } catch (err) {
      if (isWarrenError(err, 'LAND_CONFLICT')) {
        bounce(ctx, entry, err, null);
        bounced++;
      }
    } finally {
      held.release();
    }
  }
  return bounced;
}

/** The branch tip of each entry's task (absent: no task, or no branch), read in one git call. */
async function taskTips(ctx: ProjectContext, entries: readonly QueueEntry[]): Promise<Map<string, string>> {
  const withTask = entries.flatMap((e) => {
    const task = ctx.store.getTask(ctx.key, e.taskId);
    return task ? [{ id: e.taskId, ref: `refs/heads/${task.branch}` }] : [];
  });
  const tips = await revParseMany(
    ctx.repo,
    withTask.map((t) => t.ref),
  );
  const out = new Map<string, string>();
  withTask.forEach((t, i) => {
    const tip = tips[i];
    if (tip) out.set(t.id, tip);
  });
  return out;
}
