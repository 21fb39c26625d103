import { isWarrenError, WarrenError } from '../errors.js';
import { environmentError } from '../state/faults.js';
import { batchFacts, planLand, type BatchFacts, type LandPlan } from '../land/plan.js';
import type { ProjectContext } from '../workspace/context.js';
import { changedNames } from '../git/trees.js';
import type { Task } from '../state/types.js';
import { getEntry, setBounced, setQueued, setTesting, type Planned, type QueueEntry } from './store.js';

/**
 * A batch's integration: each entry squashed, as `land` builds it, onto the previous one's
 * result, from the base's tip — the chain the gate tests. An entry that cannot take part (it
 * conflicts, fails one of land's guards, or its task is gone) is bounced alone.
 */

/** An entry whose task lock the processor holds while it works on it. */
export type Locked = { entry: QueueEntry; release(): void };

export interface Candidate {
  entry: QueueEntry;
  plan: LandPlan;
  /** Released when the entry is settled: the task's lock, held while the queue works on it. */
  release(): void;
}

/** A batch's chain as it is integrated: each entry squashed onto the previous one's result, from `onto`. */
export interface Chain {
  onto: string;
  tip: string;
  tipTree: string | undefined;
  facts: BatchFacts | null;
  candidates: Candidate[];
}

async function startChain(ctx: ProjectContext, entries: readonly Locked[], onto: string): Promise<Chain> {
  // The base's tip, its protected policy and the hooks directory: read once, for every entry.
  const firstTask = entries.map((l) => ctx.store.getTask(ctx.key, l.entry.taskId)).find((t) => t !== null);
  const facts = firstTask ? await batchFacts(ctx, firstTask.base).catch(() => null) : null;
  return { onto, tip: onto, tipTree: undefined, facts, candidates: [] };
}

/**
 * The chain the gate tests, starting at `onto`. An entry whose squash conflicts (or fails any
 * of land's guards) is bounced alone.
 */
export async function integrate(ctx: ProjectContext, entries: readonly Locked[], onto: string): Promise<Chain> {
  const chain = await startChain(ctx, entries, onto);
  await extendChain(ctx, chain, entries);
  return chain;
}

/**
 * A speculative integration (land.speculate): `entries` on top of `onto`, the tip of a chain
 * still in its gate, not landed. Nothing is bounced or deferred for what happens here — `onto`
 * holds work that may never land — so an entry that cannot be integrated on it abandons the
 * speculation (null); the real integration, on the real base, decides.
 */
export async function integrateAhead(
  ctx: ProjectContext,
  entries: readonly Locked[],
  onto: string,
  onTopOf: readonly string[],
): Promise<Chain | null> {
  const chain = await startChain(ctx, entries, onto);
  for (const { entry, release } of entries) {
    const state = getEntry(ctx.store, entry.id)?.state;
    if (state !== 'queued' && state !== 'testing') return null;
    const task = ctx.store.getTask(ctx.key, entry.taskId);
    if (!task || task.state === 'creating' || task.state === 'removing' || task.state === 'remove_failed') return null;
    let plan: LandPlan;
    try {
      plan = await planLand(ctx, task, {
        onto: chain.tip,
        ...(chain.tipTree ? { ontoTree: chain.tipTree } : {}),
        ...(chain.facts ? { batch: chain.facts } : {}),
        ...(entry.options.message ? { message: entry.options.message } : {}),
        ...(entry.options.acceptHooks ? { acceptHooks: true } : {}),
      });
    } catch (err) {
      const env = environmentError(err) ?? err;
      if (isWarrenError(env) && MACHINE.has(env.code)) throw env;
      return null;
    }
    setTesting(ctx.store, entry.id, { ...plannedOf(plan, onto), onTopOf: [...onTopOf] });
    chain.candidates.push({ entry, plan, release });
    chain.tip = plan.commit;
    chain.tipTree = plan.tree;
  }
  return chain;
}

function plannedOf(plan: LandPlan, onto: string): Planned {
  return {
    commit: plan.commit,
    tree: plan.tree,
    taskTip: plan.taskTip,
    forkPoint: plan.forkPoint,
    base: onto,
    excluded: plan.exclusions.map((e) => e.path),
    rebased: plan.rebased,
  };
}

export async function extendChain(ctx: ProjectContext, chain: Chain, entries: readonly Locked[]): Promise<void> {
  for (const { entry, release } of entries) {
    const state = getEntry(ctx.store, entry.id)?.state;
    if (state === 'bounced' || state === 'removed') continue;
    const task = ctx.store.getTask(ctx.key, entry.taskId);
    if (!task || task.state === 'creating' || task.state === 'removing' || task.state === 'remove_failed') {
      bounce(
        ctx,
        entry,
        task
          ? new WarrenError('TASK_STATE', `task ${entry.taskId} is ${task.state}`)
          : new WarrenError('TASK_NOT_FOUND', `task ${entry.taskId} no longer exists`),
        null,
      );
      continue;
    }
    try {
      const plan = await planLand(ctx, task, {
        onto: chain.tip,
        ...(chain.tipTree ? { ontoTree: chain.tipTree } : {}),
        ...(chain.facts ? { batch: chain.facts } : {}),
        ...(entry.options.message ? { message: entry.options.message } : {}),
        ...(entry.options.acceptHooks ? { acceptHooks: true } : {}),
      });
      setTesting(ctx.store, entry.id, plannedOf(plan, chain.onto));
      chain.candidates.push({ entry, plan, release });
      chain.tip = plan.commit;
      chain.tipTree = plan.tree;
    } catch (err) {
      if (isWarrenError(err, 'LAND_CONFLICT') && chain.candidates.length > 0) {
        const ahead = await conflictAhead(ctx, chain, task, entry, err);
        if ('tasks' in ahead) {
          defer(ctx, entry, ahead);
          continue;
        }
        bounce(ctx, entry, ahead.bounce, null);
        continue;
      }
      bounce(ctx, entry, err, null);
    }
  }
}

const MACHINE: ReadonlySet<string> = new Set(['DISK_FULL', 'READ_ONLY', 'STATE_LOCKED', 'STATE_UNAVAILABLE']);

/** Entries ahead in the chain that an entry conflicts with, and the paths. */
interface Ahead {
  tasks: string[];
  paths: string[];
}

/**
 * An entry that conflicts with the chain: is it only with entries ahead of it that have not
 * landed (it squashes cleanly onto the base itself)? Then those entries and the paths; else
 * the reason to bounce it: its conflict with what landed (naming who landed what), or what
 * else refuses it on the base.
 */
async function conflictAhead(
  ctx: ProjectContext,
  chain: Chain,
  task: Task,
  entry: QueueEntry,
  err: WarrenError,
): Promise<Ahead | { bounce: unknown }> {
  try {
    await planLand(ctx, task, {
      onto: chain.onto,
      ...(chain.facts ? { batch: chain.facts } : {}),
      ...(entry.options.acceptHooks ? { acceptHooks: true } : {}),
    });
  } catch (onBase) {
    return { bounce: onBase };
  }
  const paths = conflictsOf(err);
  const tasks: string[] = [];
  for (const c of chain.candidates) {
    const changed = await changedNames(ctx.repo, c.plan.baseTip, c.plan.commit);
    if (changed.some((p) => paths.includes(p))) tasks.push(c.entry.taskId);
  }
  return { tasks: tasks.length > 0 ? tasks : chain.candidates.map((c) => c.entry.taskId), paths };
}

function conflictsOf(err: WarrenError): string[] {
  const conflicts = (err.details as { conflicts?: unknown } | undefined)?.conflicts;
  return Array.isArray(conflicts) ? conflicts.filter((c): c is string => typeof c === 'string') : [];
}

/**
 * The entry conflicts only with entries ahead of it that have not landed: it waits in the queue
 * (out of this chain, which goes on without it) and is planned again once they settle — on a
 * base that holds them if they landed (then a conflict is real), or without them if they bounced.
 */
function defer(ctx: ProjectContext, entry: QueueEntry, ahead: Ahead): void {
  setQueued(ctx.store, entry.id);
  const message = `${entry.taskId} waits: it conflicts with ${ahead.tasks.join(', ')}, ahead of it in the merge queue and not landed yet, in ${ahead.paths.join(', ')}; it is planned again once ${ahead.tasks.length > 1 ? 'they have' : 'that has'} landed or bounced`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: entry.taskId,
    kind: 'queue.waiting',
    level: 'info',
    message,
    data: { entry: entry.id, waitsFor: ahead.tasks, paths: ahead.paths },
  });
  ctx.reporter.line(`warren: merge queue: ${message}`);
}

/**
 * Records an entry as bounced, with its reason (and the gate's log): the task is as it was.
 * The reason is a WarrenError, whose code the entry keeps; anything else that reaches here is a
 * bug in warren, recorded as INTERNAL.
 */
export function bounce(ctx: ProjectContext, entry: QueueEntry, thrown: unknown, log: string | null): void {
  // A full disk, a read-only file system or a locked state is the machine's, not the task's: the
  // entry is not bounced for it; the error ends this processor's turn, and the next one resumes.
  const err = environmentError(thrown) ?? thrown;
  if (isWarrenError(err) && MACHINE.has(err.code)) throw err;
  const code = isWarrenError(err) ? err.code : 'INTERNAL';
  const reason = (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
  setBounced(ctx.store, entry.id, code, reason, log);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: entry.taskId,
    kind: 'land.bounced',
    level: 'warn',
    message: `bounced from the merge queue (${code}): ${reason}${log ? ` (gate log ${log})` : ''}; nothing was lost, the task is as it was`,
    data: { entry: entry.id, code, reason, log },
  });
}
