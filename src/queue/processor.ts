import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { isAncestor } from '../git/history.js';
import { faultPoint } from '../system/fault.js';
import type { ProjectContext } from '../workspace/context.js';
import { lockTask } from '../workspace/locks.js';
import { bounce, extendChain, integrate, type Chain, type Locked } from './chain.js';
import { gateRemovals, gateSteps, removeStaleGates } from './gate.js';
import { removeStaleGateClaims } from './gate-k8s.js';
import { joiningTasks } from './joining.js';
import { bounceConflictingWithBase, conflictFreeBatch, presortOn } from './presort.js';
import { settle, type Counter } from './settle.js';
import { activeEntries, getEntry, setLanded, setQueued, tryLease, type QueueEntry } from './store.js';

/**
 * The merge queue's processor. One per repository at a time (the lease); any waiting `land`,
 * `warren queue`, or `warren serve` can be it. It takes up to `land.batch` waiting entries
 * with the same base, integrates them one after another on the base's latest tip (each one
 * squash commit, as `land` builds it), runs the gate once on the result, and advances the base
 * only when it passes; a failing batch is bisected (settle.ts).
 */

export const DEFAULT_BATCH = 8;
const HEARTBEAT_MS = 2000;
/**
 * A batch that is not full waits while lands of the same base are still reading their guards
 * (they hold a joining marker: joining.ts), so that lands started together — an orchestrator
 * landing its agents' work, each `warren land` paying its own start-up — share one gate run
 * instead of trickling into several. It never waits longer than this, and a lone land does
 * not wait at all.
 */
export const BATCH_WINDOW_MAX_MS = 5000;
/** How often a filling batch looks for lands that joined, or gave up joining. */
const JOIN_POLL_MS = 100;

export interface ProcessResult {
  /** False when another live process holds the lease (it works the queue instead). */
  processed: boolean;
  gateRuns: number;
}

/**
 * Works the queue while this process can take the lease: until `stop()` says so (a waiting
 * `land` stops once its own entry is settled) or nothing is left. Returns at once when another
 * live process works the queue.
 */
export async function processQueue(ctx: ProjectContext, stop: () => boolean = () => false): Promise<ProcessResult> {
  const lease = tryLease(ctx.store, ctx.key);
  if (!lease) return { processed: false, gateRuns: 0 };
  const beat = setInterval(() => lease.heartbeat(), HEARTBEAT_MS);
  beat.unref();
  const counter = { gateRuns: 0 };
  try {
    await resume(ctx);
    for (;;) {
      if (stop()) break;
      const batch = await nextBatch(ctx);
      if (batch.length === 0) break;
      await settleBatch(ctx, batch, counter, stop);
      // What just landed: an entry that no longer merges with it bounces now, not after another gate.
      const base = baseOf(ctx, batch[0]);
      if (base && presortOn(ctx)) await bounceConflictingWithBase(ctx, base);
    }
  } finally {
    await gateRemovals();
    clearInterval(beat);
    lease.release();
  }
  return { processed: true, gateRuns: counter.gateRuns };
}

function baseOf(ctx: ProjectContext, entry: QueueEntry | undefined): string | undefined {
  return entry ? ctx.store.getTask(ctx.key, entry.taskId)?.base : undefined;
}

/**
 * The oldest waiting entries with the first one's base, at most `land.batch`; with
 * `land.conflicts` (the default), only entries that merge with every earlier one taken.
 */
async function nextBatch(ctx: ProjectContext): Promise<QueueEntry[]> {
  const size = ctx.config.land?.batch ?? DEFAULT_BATCH;
  const queued = activeEntries(ctx.store, ctx.key).filter((e) => e.state === 'queued');
  const first = queued[0];
  if (!first) return [];
  const base = baseOf(ctx, first);
  const same = queued.filter((e) => baseOf(ctx, e) === base || e === first);
  const batch = presortOn(ctx) ? await conflictFreeBatch(ctx, same, size) : same.slice(0, size);
  // What waited and was not taken (the batch was full, or it does not merge) is not the filling's to take.
  passedOver.set(batch, new Set(queued.filter((e) => !batch.includes(e)).map((e) => e.id)));
  return batch;
}

/** The entries a batch was taken without, by batch. */
const passedOver = new WeakMap<QueueEntry[], Set<number>>();

/**
 * After a processor died: an entry it was testing has landed if its planned commit is on the
 * base (the advance and its record are the `queue` intent's to repair), else it waits again.
 * Integration workspaces it left are removed.
 */
async function resume(ctx: ProjectContext): Promise<void> {
  for (const e of activeEntries(ctx.store, ctx.key)) {
    if (e.state !== 'testing') continue;
    const task = ctx.store.getTask(ctx.key, e.taskId);
    const tip = task ? await revParse(ctx.repo, `refs/heads/${task.base}`) : null;
    if (e.planned && tip && task && (await isAncestor(ctx.repo, e.planned.commit, tip).catch(() => false))) {
      const p = e.planned;
      setLanded(ctx.store, e.id, {
        commit: p.commit,
        tree: p.tree,
        base: task.base,
        baseBefore: p.base,
        excluded: p.excluded,
        exclusions: [],
        rebased: p.rebased,
        checkoutUpdated: null,
        warnings: [],
      });
    } else setQueued(ctx.store, e.id);
  }
  await removeStaleGates(ctx);
  // And the claims of gates in a cluster a warren left (killed while its gate ran): none is in use either.
  await removeStaleGateClaims(ctx);
}

/**
 * Takes the entries' task locks and integrates them, the batch filling meanwhile; an entry that
 * cannot take part is bounced alone.
 */
async function settleBatch(
  ctx: ProjectContext,
  batch: QueueEntry[],
  counter: Counter,
  stop: () => boolean,
): Promise<void> {
  const locked: Locked[] = [];
  const lock = (entries: readonly QueueEntry[]): Locked[] => {
    const taken: Locked[] = [];
    for (const entry of entries) {
      try {
        const held = lockTask(ctx, entry.taskId, `land (merge queue) ${entry.taskId}`);
        taken.push({ entry, release: () => held.release() });
      } catch (err) {
        bounce(ctx, entry, err, null);
      }
    }
    locked.push(...taken);
    return taken;
  };
  lock(batch);
  try {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const first = locked.find((l) => getEntry(ctx.store, l.entry.id)?.state !== 'bounced');
      if (!first) return;
      const task = ctx.store.getTask(ctx.key, first.entry.taskId);
      const tip = task ? await revParse(ctx.repo, `refs/heads/${task.base}`) : null;
      if (!task || !tip) {
        for (const l of locked)
          bounce(ctx, l.entry, new WarrenError('BASE_UNKNOWN', `the base ${task?.base ?? '?'} is not a branch`), null);
        return;
      }
      let chain: Chain;
      let stale = false;
      if (attempt === 1) {
        // The first integration is built while the batch fills: each land that joins is squashed onto the chain at once.
        const building = await integrate(ctx, locked, tip);
        chain = building;
        if (gateSteps(ctx.config).length > 0)
          await fillBatch(ctx, batch, task.base, (joined) => extendChain(ctx, building, lock(joined)));
        // The base moved while the batch filled: integrated again on its new tip, without gating this chain.
        stale = (await revParse(ctx.repo, `refs/heads/${task.base}`)) !== tip;
      } else chain = await integrate(ctx, locked, tip);
      faultPoint('queue', 'integrating');
      // A waiting `land` whose own entry is settled takes no more arrivals: it finishes what it holds and returns.
      const more = (): Promise<Locked[]> => (stop() ? Promise.resolve([]) : arrivals(ctx, batch, task.base, lock));
      if (!stale && (await settle(ctx, chain.candidates, tip, counter, more))) return;
      // The base moved under the queue (someone committed or pushed to it): integrate again on the new tip.
      for (const l of locked)
        if (getEntry(ctx.store, l.entry.id)?.state === 'testing') setQueued(ctx.store, l.entry.id);
    }
    for (const l of locked)
      if (getEntry(ctx.store, l.entry.id)?.state === 'queued')
        bounce(
          ctx,
          l.entry,
          new WarrenError('BASE_DIVERGED', 'the base kept moving while the queue integrated it (5 times)'),
          null,
        );
  } finally {
    for (const l of locked) l.release();
  }
}

/** When the entries `arrivals` found were first seen, per batch being settled. */
const firstSeen = new WeakMap<QueueEntry[], number>();

/**
 * Entries of `base` that joined the queue since `batch` was taken, as one more part to gate
 * behind it (land.speculate): at most `land.batch`, taken once no land of `base` is still about
 * to join (a short window, as a batch fills: at most BATCH_WINDOW_MAX_MS). They join `batch`
 * and their task locks are taken.
 */
async function arrivals(
  ctx: ProjectContext,
  batch: QueueEntry[],
  base: string,
  lock: (entries: readonly QueueEntry[]) => Locked[],
): Promise<Locked[]> {
  const size = ctx.config.land?.batch ?? DEFAULT_BATCH;
  const fresh = activeEntries(ctx.store, ctx.key).filter(
    (e) => e.state === 'queued' && !batch.some((b) => b.id === e.id) && baseOf(ctx, e) === base,
  );
  if (fresh.length === 0) {
    firstSeen.delete(batch);
    return [];
  }
  const seen = firstSeen.get(batch) ?? Date.now();
  firstSeen.set(batch, seen);
  const coming = joiningTasks(ctx).filter(
    (id) => !fresh.some((e) => e.taskId === id) && ctx.store.getTask(ctx.key, id)?.base === base,
  );
  if (fresh.length < size && coming.length > 0 && Date.now() - seen < BATCH_WINDOW_MAX_MS) return [];
  firstSeen.delete(batch);
  const took = presortOn(ctx) ? await conflictFreeBatch(ctx, fresh, size) : fresh.slice(0, size);
  batch.push(...took);
  return lock(took);
}

/**
 * Waits while lands of `base` are about to join (at most BATCH_WINDOW_MAX_MS) and the batch is
 * not full; `joined` integrates each entry that joined meanwhile. `batch` grows in queue order.
 */
async function fillBatch(
  ctx: ProjectContext,
  batch: QueueEntry[],
  base: string,
  joined: (entries: QueueEntry[]) => Promise<void>,
): Promise<void> {
  const size = ctx.config.land?.batch ?? DEFAULT_BATCH;
  const deadline = Date.now() + BATCH_WINDOW_MAX_MS;
  const skip = passedOver.get(batch) ?? new Set<number>();
  for (;;) {
    // First what joined already — while the batch was being integrated, too: a land that joined
    // then holds no marker any more, and would otherwise be left to a later part.
    const fresh = activeEntries(ctx.store, ctx.key)
      .filter(
        (e) => e.state === 'queued' && !batch.some((b) => b.id === e.id) && !skip.has(e.id) && baseOf(ctx, e) === base,
      )
      .slice(0, size - batch.length);
    if (fresh.length > 0) {
      batch.push(...fresh);
      await joined(fresh);
      continue;
    }
    if (batch.length >= size) return;
    const coming = joiningTasks(ctx).filter(
      (id) => !batch.some((e) => e.taskId === id) && ctx.store.getTask(ctx.key, id)?.base === base,
    );
    const left = deadline - Date.now();
    if (coming.length === 0 || !(left > 0)) return;
    await new Promise((r) => setTimeout(r, Math.min(JOIN_POLL_MS, left)));
  }
}
