import type { z } from 'zod';
import { isWarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { changedNames } from '../git/trees.js';
import { listWorktrees } from '../git/worktrees.js';
import { BaseMoved, baseMoveShape, checkoutMoved, refMoved } from '../land/base-move.js';
import { lockfilesAmong, recordDepsStale } from '../land/deps.js';
import { landedOf, landedShape, recordLanded, recordPlan, resultOf } from '../land/land.js';
import { assertCheckoutCanFollow, type LandPlan } from '../land/plan.js';
import type { ProjectContext } from '../workspace/context.js';
import { withRepoLock } from '../workspace/locks.js';
import { runOperation, type Operation, type Schema } from '../workspace/operation.js';
import { bounce, type Candidate } from './chain.js';
import { getEntry, setLanded, setQueued, type LandedSummary } from './store.js';

/**
 * The merge queue's only mutation: the base moves from `base` to the group's last commit
 * (compare-and-swap), the main checkout following, each entry recorded landed. True when the
 * group is settled (landed, or bounced); false when the base moved under it first.
 */
export async function advance(ctx: ProjectContext, group: Candidate[], base: string): Promise<boolean> {
  const last = group[group.length - 1] as Candidate;
  // What lands is exactly what the gate tested: a chain integrated on anything but `base` (a
  // speculative one built on work that did not land) never moves it.
  if (group[0]?.plan.baseTip !== base)
    throw new Error(
      `the merge queue advanced ${base} with a chain integrated on ${group[0]?.plan.baseTip ?? 'nothing'}`,
    );
  const baseRef = last.plan.baseRef;
  return withRepoLock(ctx, `merge queue onto ${last.plan.task.base}`, async () => {
    if ((await revParse(ctx.repo, baseRef)) !== base) return false;
    const checkout = (await listWorktrees(ctx.repo)).find((wt) => wt.branch === baseRef && !wt.bare)?.path ?? null;
    const changed = checkout ? await changedNames(ctx.repo, base, last.plan.commit) : [];
    const live: AdvanceLive = { group, changed };
    try {
      if (checkout) await assertCheckoutCanFollow(checkout, last.plan.task, changed);
      const data: AdvanceData = {
        baseRef,
        from: base,
        to: last.plan.commit,
        checkout,
        landed: group.map((c) => ({ ...landedOf(c.plan), checkout })),
        entries: group.map((c) => c.entry.id),
      };
      await runOperation(ctx, QUEUE, null, data, live);
    } catch (err) {
      if (err instanceof BaseMoved) return false;
      if (!isWarrenError(err)) throw err;
      for (const c of group) bounce(ctx, c.entry, err, null);
      return true;
    }
    ctx.reporter.line(
      `warren: merge queue: landed ${group.map((c) => `${c.entry.taskId} (${c.plan.commit.slice(0, 12)})`).join(', ')} on ${last.plan.task.base}`,
    );
    return true;
  });
}

const payload = (z: Schema) =>
  z.object({ ...baseMoveShape(z), landed: z.array(landedShape(z)), entries: z.array(z.number()) });

type AdvanceData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    queue: AdvanceData;
  }
}

export interface AdvanceLive {
  group: Candidate[];
  /** What the advance changes in the checkout of the base. */
  changed: string[];
}

/** What the entry records of its land: `land`'s own result, as the queue keeps it. */
function summaryOf(plan: LandPlan, checkout: string | null, warnings: string[]): LandedSummary {
  const { id: _id, landed: _landed, push: _push, ...summary } = resultOf(plan);
  return { ...summary, checkoutUpdated: checkout, warnings };
}

/**
 * The queue's advance, as a land of several: killed between moving the main checkout and the
 * base ref, the checkout goes back and the entries wait again; once the ref had moved, the
 * batch landed, and is recorded. Before it, the processor's own phases (integrating a batch,
 * running its gate) are fault points too: a processor that died there is resumed by the next
 * one (src/queue/processor.ts), which puts the entries it was testing back in the queue.
 */
export const QUEUE: Operation<'queue', 'checkout-moved' | 'ref-moved' | 'recorded', AdvanceLive> = {
  op: 'queue',
  payload,
  repairUnderRepoLock: true,
  faultsBefore: ['integrating', 'gating'],
  steps: () => [
    {
      ...checkoutMoved<AdvanceData, AdvanceLive>((d) => d.landed[0]?.base ?? d.baseRef),
      async undo(s) {
        const moved = await checkoutMoved<AdvanceData, AdvanceLive>((d) => d.landed[0]?.base ?? d.baseRef).undo?.(s);
        // The entries being tested wait in the queue again.
        for (const id of s.data.entries) if (getEntry(s.ctx.store, id)?.state === 'testing') setQueued(s.ctx.store, id);
        return moved ? `${moved}; the entries wait in the queue again` : 'the entries wait in the queue again';
      },
    },
    refMoved((d) => `warren merge queue: ${d.landed.map((l) => l.id).join(', ')}`),
    {
      name: 'recorded',
      async run({ ctx, data, live }) {
        for (const c of live.group) {
          // Which entry touched a lockfile is asked only when the group did.
          const own =
            lockfilesAmong(live.changed).length > 0 ? await changedNames(ctx.repo, c.plan.baseTip, c.plan.commit) : [];
          const warnings = [
            ...recordPlan(ctx, c.plan, c.entry.options.acceptHooks === true),
            ...recordDepsStale(ctx, c.entry.taskId, c.plan.commit, data.checkout, own),
          ];
          recordLanded(ctx, { ...landedOf(c.plan), checkout: data.checkout }, ' (merge queue)');
          setLanded(ctx.store, c.entry.id, summaryOf(c.plan, data.checkout, warnings));
        }
      },
      recover: 'forward',
      async finish({ ctx, data }) {
        data.landed.forEach((l, i) => {
          if (ctx.store.getTask(ctx.key, l.id)?.state !== 'landed') {
            recordLanded(ctx, l, ' (recorded after an interrupted merge queue)');
          }
          const id = data.entries[i];
          if (id === undefined) return;
          setLanded(ctx.store, id, {
            commit: l.commit,
            tree: l.tree,
            base: l.base,
            baseBefore: l.baseTip,
            excluded: l.excluded,
            exclusions: [],
            rebased: l.rebased,
            checkoutUpdated: data.checkout,
            warnings: [],
          });
        });
        return `the base had moved to ${data.to.slice(0, 12)}: ${data.landed.map((l) => l.id).join(', ')} landed, and are now recorded`;
      },
    },
  ],
  repaired: (outcome, _data, did) =>
    outcome === 'nothing-to-do' ? 'the base did not move; the entries wait in the queue again' : did.join('; '),
};
