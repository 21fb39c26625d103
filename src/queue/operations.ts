import { ERROR_CODES, WarrenError, type ErrorCode } from '../errors.js';
import { buildForReview, recordPush, type LandOptions, type LandResult } from '../land/land.js';
import { planLand } from '../land/plan.js';
import { conflictHint } from '../land/squash.js';
import { pushRef, resolveRemote } from '../land/push.js';
import { loadTask } from '../land/task.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
import type { ProjectContext } from '../workspace/context.js';
import { startStep, type StepReport } from '../workspace/reporter.js';
import { validateTaskId } from '../workspace/ids.js';
import { withRepoLock, withTaskLock } from '../workspace/locks.js';
import { requireTask } from '../workspace/tasks.js';
import { assertSettingsTrusted, assertTrusted } from '../trust/trust.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { bringBack } from '../run/ssh/remote-task.js';
import { gateSteps } from './gate.js';
import { markJoining } from './joining.js';
import { processQueue } from './processor.js';
import {
  activeEntries,
  enqueue,
  getEntry,
  leaseHolder,
  recentEntries,
  removeEntry,
  type LandedSummary,
  type QueueEntry,
  type QueueOptions,
} from './store.js';

/** `warren land` (through the merge queue), `warren queue` and `warren queue rm` as library calls. */

/**
 * The library's land, and the CLI's, MCP's and the dashboard's: every land that moves a base
 * joins the merge queue and passes its gate (an agent that can call a land cannot call one past
 * the gate). Waits for the outcome, working the queue when nobody else does; then pushes, when
 * asked. `branchOnly` moves no base: it builds the squash and pushes it for review.
 */
export async function landTask(ctx: ProjectContext, rawId: string, options: LandOptions = {}): Promise<LandResult> {
  const { branchOnly, push: pushTo, ...rest } = options;
  if (branchOnly) return buildForReview(ctx, rawId, { ...rest, ...(pushTo === undefined ? {} : { push: pushTo }) });
  // An unknown remote is refused before the task joins the queue.
  const task = requireTask(ctx, rawId);
  const remote = pushTo === undefined ? null : await resolveRemote(ctx, pushTo, task.base);
  const joined = await queueLand(ctx, rawId, { ...rest, wait: true });
  if (joined.state !== 'landed') throw new Error(`the queue returned ${joined.state} for a land that waits`);
  const { state: _state, ...summary } = joined;
  const landed: LandResult = { ...summary, landed: true, push: null };
  if (remote === null) return landed;
  const push = await withRepoLock(ctx, `push ${landed.base}`, () =>
    pushRef(ctx, remote, landed.commit, `refs/heads/${landed.base}`),
  );
  recordPush(ctx, landed.id, push);
  return { ...landed, push };
}

export interface QueueLandOptions extends QueueOptions {
  /** Wait for the outcome (default true), working the queue when nobody else does. */
  wait?: boolean;
}

export type QueueLandResult =
  | { state: 'queued'; id: string; entry: number; position: number }
  | ({ state: 'landed'; id: string; entry: number } & LandedSummary);

/**
 * Joins the repository's merge queue and, by default, waits for the outcome. Every guard of
 * `land` is read first, under the task's lock, before the queue is touched (the squash is built
 * once, as objects only): an unclean workspace, changed hooks, an invalid protected policy, a
 * conflict with the base, nothing to land. A task that bounces from the queue is refused with
 * the reason (its code: LAND_CONFLICT, GATE_FAILED, CHECKOUT_DIRTY…) and is as it was.
 */
export async function queueLand(
  ctx: ProjectContext,
  rawId: string,
  options: QueueLandOptions = {},
): Promise<QueueLandResult> {
  // A task on another machine: its commits there fetched and checked first; the gate runs here, on them.
  const remoteTask = ctx.store.getTask(ctx.key, validateTaskId(rawId));
  if (remoteTask && remoteHostName(remoteTask) !== null) await bringBack(ctx, remoteTask, 'nothing was landed.');
  const id = validateTaskId(rawId);
  const { wait = true, ...queueOptions } = options;
  // While the guards are read, a processor filling a batch waits for this land (joining.ts).
  const joining = markJoining(ctx, id);
  let enqueued: ReturnType<typeof enqueue>;
  try {
    const gate = gateSteps(ctx.config);
    if (gate.length > 0)
      assertTrusted(
        ctx,
        ['verify'],
        `Task ${id} did not join the merge queue, whose gate runs them.`,
        gate.map((g) => g.id),
      );
    await withTaskLock(ctx, id, `land ${id}`, async () => {
      const task = loadTask(ctx, id);
      await assertWorkspaceState(ctx.repo, task);
      await planLand(ctx, task, queueOptions);
      // After the plan (objects only), so that an invalid warren.yaml is named as such first.
      assertSettingsTrusted(ctx, `Task ${id} did not join the merge queue.`);
    });
    enqueued = enqueue(ctx.store, ctx.key, id, queueOptions);
  } finally {
    joining?.release();
  }
  const { entry, joined } = enqueued;
  const position = activeEntries(ctx.store, ctx.key).findIndex((e) => e.id === entry.id) + 1;
  if (joined) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'queue.joined',
      message: `joined the merge queue at position ${position}`,
      data: { entry: entry.id, position },
    });
  }
  if (!wait) return { state: 'queued', id, entry: entry.id, position };
  return { state: 'landed', id, entry: entry.id, ...landedOrThrow(ctx, await waitFor(ctx, entry.id)) };
}

/** Until the entry is settled: works the queue whenever no live process does, else watches it. */
export async function waitFor(ctx: ProjectContext, entryId: number): Promise<QueueEntry> {
  const settled = (): QueueEntry | null => {
    const e = getEntry(ctx.store, entryId);
    return e && e.state !== 'queued' && e.state !== 'testing' ? e : null;
  };
  // Said once another warren is found working the queue (this one's own work says itself).
  let watching: StepReport | null = null;
  try {
    for (;;) {
      const done = settled();
      if (done) {
        if (done.state === 'landed') watching?.done('landed');
        else watching?.fail(done.state);
        return done;
      }
      const worked = await processQueue(ctx, () => settled() !== null);
      if (worked.processed) continue;
      watching ??= startStep(ctx.reporter, 'merge queue: waiting while another warren works it');
      await new Promise((r) => setTimeout(r, 150));
    }
  } catch (err) {
    watching?.fail();
    throw err;
  }
}

function landedOrThrow(ctx: ProjectContext, e: QueueEntry): LandedSummary {
  if (e.state === 'landed' && e.landed) return e.landed;
  if (e.state === 'removed') {
    throw new WarrenError(
      'TASK_STATE',
      `task ${e.taskId} left the merge queue (warren queue rm) before it landed; nothing was landed.`,
      { hint: `Run \`warren land ${e.taskId}\` to join it again.` },
    );
  }
  const code = e.code && isKnownCode(e.code) ? e.code : 'GATE_FAILED';
  const reason = (e.reason ?? 'no reason recorded').replace(/\.$/, '');
  const base = ctx.store.getTask(ctx.key, e.taskId)?.base ?? 'the base';
  throw new WarrenError(
    code,
    `task ${e.taskId} bounced from the merge queue: ${reason}. Nothing was landed; the task, its branch and the base are as they were.`,
    {
      hint:
        code === 'LAND_CONFLICT'
          ? conflictHint(e.taskId, base)
          : e.log
            ? `Read the gate's log (${e.log}), fix the task, \`warren checkpoint ${e.taskId}\`, and land again.`
            : `Fix what it names, \`warren checkpoint ${e.taskId}\`, and land again.`,
      details: { state: 'bounced', entry: e.id, reason: e.reason, log: e.log },
    },
  );
}

function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

export interface QueueListing {
  /** Who works the queue now, if anyone. */
  processor: { pid: number; host: string; since: string } | null;
  entries: {
    id: string;
    entry: number;
    position: number | null;
    state: QueueEntry['state'];
    since: string;
    reason: string | null;
    code: string | null;
    log: string | null;
    commit: string | null;
    gateTask: string | null;
    /** While tested speculatively (land.speculate): the tasks, not landed yet, it is integrated on top of. */
    onTopOf: string[] | null;
  }[];
}

/** `warren queue`: every recent entry with its position (waiting ones), state and since when. */
export function listQueue(ctx: ProjectContext): QueueListing {
  const active = activeEntries(ctx.store, ctx.key).map((e) => e.id);
  return {
    processor: leaseHolder(ctx.store, ctx.key),
    entries: recentEntries(ctx.store, ctx.key).map((e) => ({
      id: e.taskId,
      entry: e.id,
      position: active.includes(e.id) ? active.indexOf(e.id) + 1 : null,
      state: e.state,
      since: e.updatedAt,
      reason: e.reason,
      code: e.code,
      log: e.log,
      commit: e.landed?.commit ?? null,
      gateTask: e.gateTask,
      onTopOf: e.state === 'testing' ? (e.planned?.onTopOf ?? null) : null,
    })),
  };
}

/** `warren queue rm ID`: leaves the queue, unless the queue is testing it right now. */
export function leaveQueue(ctx: ProjectContext, rawId: string): { removed: true; id: string } {
  const task = requireTask(ctx, rawId);
  const entry = activeEntries(ctx.store, ctx.key).find((e) => e.taskId === task.id);
  if (!entry)
    throw new WarrenError('TASK_STATE', `task ${task.id} is not in the merge queue; nothing was changed.`, {
      hint: 'See `warren queue`.',
    });
  if (!removeEntry(ctx.store, entry.id)) {
    throw new WarrenError(
      'TASK_STATE',
      `task ${task.id} is being tested by the merge queue right now; it was left in.`,
      { hint: 'Wait for its outcome (`warren queue`).' },
    );
  }
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'queue.left',
    message: 'left the merge queue',
    data: { entry: entry.id },
  });
  return { removed: true, id: task.id };
}

/** Works the queue now if nobody does (for `warren queue` and the dashboard): false when someone else is. */
export async function workQueue(ctx: ProjectContext): Promise<boolean> {
  return (await processQueue(ctx)).processed;
}
