import { WarrenError } from '../errors.js';
import { indexMatches } from '../git/index-ops.js';
import { revParse } from '../git/refs.js';
import type { z } from 'zod';
import { runOperation, type Operation, type Schema } from '../workspace/operation.js';
import { BaseMoved, baseMoveShape, checkoutMoved, refMoved } from './base-move.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withRepoLock, withTaskLock } from '../workspace/locks.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
import { recordDepsStale } from './deps.js';
import { loadTask } from './task.js';
import { planLand, type LandPlan } from './plan.js';
import { pushRef, resolveRemote, type PushOutcome } from './push.js';
import { recordDrift } from './record.js';

const MOVE_ATTEMPTS = 5;

export interface LandOptions {
  message?: string;
  acceptHooks?: boolean;
  /** Push afterwards: true for the default remote, or a remote's name. */
  push?: string | true;
  /** Push the squashed task branch for review instead of landing locally. */
  branchOnly?: boolean;
}

export interface LandResult {
  id: string;
  /** The squash commit (on the base, or pushed for review with --branch-only). */
  commit: string;
  tree: string;
  base: string;
  /** The base tip before landing. */
  baseBefore: string;
  /** Every path left out of the commit (protected, or provisioned and committed by hand). */
  excluded: string[];
  exclusions: { path: string; how: string; why: string }[];
  rebased: boolean;
  landed: boolean;
  /** Set when the base was checked out somewhere and that checkout followed. */
  checkoutUpdated: string | null;
  /** Shared-git changes that were not refused (also recorded as events). */
  warnings: string[];
  push: PushOutcome | null;
}

/**
 * `warren land ID`: gather and check everything (planLand writes objects only) → move the base
 * by compare-and-swap fast-forward, with the checkout of the base following → verify → record
 * → push. Any refusal before the move leaves refs, indexes and files exactly as they were.
 */
export async function landTask(ctx: ProjectContext, rawId: string, options: LandOptions = {}): Promise<LandResult> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `land ${id}`, async () => {
    const task = loadTask(ctx, id);
    // This task's worktree, on its branch, with no git operation half done; else the state is named.
    await assertWorkspaceState(ctx.repo, task);
    const branchOnly = options.branchOnly === true;
    const pushTo = options.push ?? (branchOnly ? true : undefined);
    const remote = pushTo === undefined ? null : await resolveRemote(ctx, pushTo, task.base);
    const planOptions = {
      branchOnly,
      ...(options.message ? { message: options.message } : {}),
      ...(options.acceptHooks ? { acceptHooks: true } : {}),
    };
    let plan = await planLand(ctx, task, planOptions);

    if (branchOnly) {
      const warnings = recordPlan(ctx, plan, options.acceptHooks === true);
      const previous = task.data.reviewPush?.commit ?? '';
      const push = await withRepoLock(ctx, `push ${task.branch}`, () =>
        pushRef(ctx, remote ?? 'origin', plan.commit, `refs/heads/${task.branch}`, previous),
      );
      if (push.ok)
        ctx.store.mergeData(ctx.key, id, {
          reviewPush: { remote: push.remote, ref: push.ref, commit: plan.commit, at: new Date().toISOString() },
        });
      recordPush(ctx, id, push);
      return { ...resultOf(plan), warnings, push };
    }

    // Another land may move the base between our plan and the lock: plan again on the new tip
    // (planning writes objects only), a few times, then give up with nothing moved.
    const live: LandLive = { plan, acceptHooks: options.acceptHooks === true, warnings: [] };
    for (let attempt = 1; ; attempt++) {
      const current = live.plan;
      const moved = await withRepoLock(ctx, `land ${id} onto ${task.base}`, async () => {
        if ((await revParse(ctx.repo, current.baseRef)) !== current.baseTip) return false;
        return runOperation(ctx, LAND, id, landData(current), live).then(
          () => true,
          (err: unknown) => (err instanceof BaseMoved ? false : Promise.reject(err)),
        );
      });
      if (moved) break;
      if (attempt >= MOVE_ATTEMPTS) throw movedError(current);
      live.plan = await planLand(ctx, task, planOptions);
    }
    plan = live.plan;
    const warnings = live.warnings;
    const landed: LandResult = { ...resultOf(plan), warnings, landed: true, checkoutUpdated: plan.checkout };
    if (remote === null) return landed;
    const push = await withRepoLock(ctx, `push ${task.base}`, () => pushRef(ctx, remote, plan.commit, plan.baseRef));
    recordPush(ctx, id, push);
    return { ...landed, push };
  });
}

export function resultOf(plan: LandPlan): LandResult {
  return {
    id: plan.task.id,
    commit: plan.commit,
    tree: plan.tree,
    base: plan.task.base,
    baseBefore: plan.baseTip,
    excluded: plan.exclusions.map((e) => e.path),
    exclusions: plan.exclusions,
    rebased: plan.rebased,
    landed: false,
    checkoutUpdated: null,
    warnings: [],
    push: null,
  };
}

/** What the plan decided that must not stay silent: exclusions, accepted hooks, config drift. Returns the warnings to show. */
export function recordPlan(ctx: ProjectContext, plan: LandPlan, acceptHooks: boolean): string[] {
  const { task, fingerprint } = plan;
  const warnings = recordDrift(ctx, task, 'land', fingerprint.current, fingerprint.drift, acceptHooks);
  if (plan.exclusions.length === 0) return warnings;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'land.excluded',
    level: 'warn',
    message: `left path(s) out of the squash commit ${plan.commit.slice(0, 12)}: ${plan.exclusions.map((e) => `${e.path} (${e.why}, ${e.how})`).join(', ')}; the workspace keeps its copies`,
    data: { excluded: plan.exclusions, commit: plan.commit },
  });
  return warnings;
}

function movedError(plan: LandPlan): WarrenError {
  return new WarrenError(
    'BASE_DIVERGED',
    `${plan.task.base} moved while task ${plan.task.id} was being landed; nothing was landed and ${plan.task.base} keeps its new tip.`,
    {
      hint: `Run \`warren land ${plan.task.id}\` again: it rebases onto the new tip.`,
    },
  );
}

async function verifyLanded(ctx: ProjectContext, plan: LandPlan): Promise<void> {
  const tip = await revParse(ctx.repo, plan.baseRef);
  if (tip !== plan.commit) {
    throw new WarrenError(
      'INTERNAL',
      `after landing, ${plan.baseRef} is at ${tip ?? 'nothing'} instead of ${plan.commit}.`,
    );
  }
  if (plan.checkout && plan.changed.length > 0) {
    if (!(await indexMatches(plan.checkout, plan.commit, plan.changed))) {
      throw new WarrenError(
        'INTERNAL',
        `${plan.task.base} landed as ${plan.commit.slice(0, 12)} but the index of ${plan.checkout} does not match it; run \`git status\` there.`,
      );
    }
  }
}

export function recordPush(ctx: ProjectContext, id: string, push: PushOutcome): void {
  ctx.store.addEvent({
    project: ctx.key,
    taskId: id,
    kind: push.ok ? 'land.pushed' : 'land.push_failed',
    level: push.ok ? 'info' : 'error',
    message: push.ok
      ? `pushed ${push.commit.slice(0, 12)} to ${push.remote} ${push.ref}`
      : `pushing ${push.commit.slice(0, 12)} to ${push.remote} ${push.ref} failed: ${push.error ?? ''}`,
    data: { ...push },
  });
}

export function landedOf(plan: LandPlan): Landed {
  return {
    id: plan.task.id,
    branch: plan.task.branch,
    base: plan.task.base,
    baseRef: plan.baseRef,
    commit: plan.commit,
    tree: plan.tree,
    taskTip: plan.taskTip,
    forkPoint: plan.forkPoint,
    baseTip: plan.baseTip,
    excluded: plan.exclusions.map((e) => e.path),
    rebased: plan.rebased,
    checkout: plan.checkout,
  };
}

/** The task's record of a land that moved its base: facts, state, event. */
export function recordLanded(ctx: ProjectContext, l: Landed, note: string): void {
  ctx.store.mergeData(ctx.key, l.id, {
    landed: {
      commit: l.commit,
      tree: l.tree,
      taskCommit: l.taskTip,
      forkPoint: l.forkPoint,
      base: l.base,
      baseBefore: l.baseTip,
      excluded: l.excluded,
      at: new Date().toISOString(),
    },
  });
  const task = ctx.store.getTask(ctx.key, l.id);
  if (task && task.state !== 'landed') ctx.store.transition(ctx.key, l.id, task.state, 'landed');
  ctx.store.addEvent({
    project: ctx.key,
    taskId: l.id,
    kind: 'task.landed',
    message: `landed ${l.branch} on ${l.base} as ${l.commit.slice(0, 12)}${l.rebased ? ` (rebased onto ${l.baseTip.slice(0, 12)})` : ''}${l.excluded.length ? `; left out ${l.excluded.join(', ')}` : ''}${note}`,
    data: {
      commit: l.commit,
      tree: l.tree,
      baseBefore: l.baseTip,
      excluded: l.excluded,
      rebased: l.rebased,
      checkout: l.checkout,
    },
  });
}

// ─── The operation ──────────────────────────────────────────────────────────────────────────

const landedShape = (z: Schema) =>
  z.object({
    id: z.string(),
    branch: z.string(),
    base: z.string(),
    baseRef: z.string(),
    commit: z.string(),
    tree: z.string(),
    taskTip: z.string(),
    forkPoint: z.string(),
    baseTip: z.string(),
    excluded: z.array(z.string()),
    rebased: z.boolean(),
    checkout: z.string().nullable(),
  });

/** What a land puts on the record, and what its repair needs: everything but the plan's objects is here. */
export type Landed = z.infer<ReturnType<typeof landedShape>>;

const payload = (z: Schema) => z.object({ ...baseMoveShape(z), landed: landedShape(z) });

export type LandData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    land: LandData;
  }
}

export { landedShape };

export interface LandLive {
  plan: LandPlan;
  acceptHooks: boolean;
  warnings: string[];
}

function landData(plan: LandPlan): LandData {
  return {
    baseRef: plan.baseRef,
    from: plan.baseTip,
    to: plan.commit,
    checkout: plan.checkout,
    landed: landedOf(plan),
  };
}

/**
 * The direct land (the library's `landTask`, which `land --branch-only` and programs use;
 * `warren land` goes through the merge queue): the checkout of the base follows, the base
 * moves, the land is recorded. Killed between the two moves, the checkout is put back (then
 * `land` can run again); once the ref had moved, the land is recorded.
 */
export const LAND: Operation<'land', 'checkout-moved' | 'ref-moved' | 'recorded', LandLive> = {
  op: 'land',
  payload,
  repairUnderRepoLock: true,
  steps: () => [
    checkoutMoved((d) => d.landed.base),
    refMoved((d) => `warren land ${d.landed.id}`),
    {
      name: 'recorded',
      async run({ ctx, data, live }) {
        const { plan } = live;
        await verifyLanded(ctx, plan);
        live.warnings.push(
          ...recordPlan(ctx, plan, live.acceptHooks),
          ...recordDepsStale(ctx, plan.task.id, plan.commit, plan.checkout, plan.changed),
        );
        recordLanded(ctx, data.landed, '');
      },
      recover: 'forward',
      async finish({ ctx, data }) {
        recordLanded(ctx, data.landed, ' (recorded after an interrupted land)');
        return `${data.landed.base} had moved to ${data.to.slice(0, 12)}: the land happened, and is now recorded`;
      },
    },
  ],
  repaired: (outcome, data, did) =>
    outcome === 'rolled-back'
      ? `${did.join('; ')}; \`warren land ${data.landed.id}\` can run again`
      : outcome === 'nothing-to-do'
        ? `${data.landed.base} did not move; nothing else had changed`
        : did.join('; '),
};
