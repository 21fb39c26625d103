import { WarrenError } from '../errors.js';
import { indexMatches, moveCheckout } from '../git/index-ops.js';
import { compareAndSwapRef, revParse } from '../git/refs.js';
import { beginIntent, type Intent, type RecoverFn } from '../workspace/intents.js';
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
    let intent: Intent | null = null;
    for (let attempt = 1; ; attempt++) {
      const current = plan;
      intent = await withRepoLock(ctx, `land ${id} onto ${task.base}`, () => moveBase(ctx, current));
      if (intent) break;
      if (attempt >= MOVE_ATTEMPTS) throw movedError(plan);
      plan = await planLand(ctx, task, planOptions);
    }
    await verifyLanded(ctx, plan);

    const warnings = [
      ...recordPlan(ctx, plan, options.acceptHooks === true),
      ...recordDepsStale(ctx, id, plan.commit, plan.checkout, plan.changed),
    ];
    recordLanded(ctx, landedOf(plan), '');
    intent.step('recorded');
    intent.done();
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

/**
 * The only mutation. Under the repository lock: re-check the base tip, fast-forward the
 * checkout of the base (read-tree -m -u refuses before writing anything if local changes
 * would be overwritten), then move the ref by compare-and-swap; if the ref moved meanwhile,
 * the checkout is put back.
 */
async function moveBase(ctx: ProjectContext, plan: LandPlan): Promise<Intent | null> {
  const now = await revParse(ctx.repo, plan.baseRef);
  if (now !== plan.baseTip) return null;
  // The checkout and the ref move from here: a warren killed between them is repaired by the next command.
  const intent = beginIntent(ctx, 'land', plan.task.id, { ...landedOf(plan) });
  if (plan.checkout) {
    const ff = await moveCheckout(plan.checkout, plan.baseTip, plan.commit);
    if (ff.exitCode !== 0) {
      intent.done();
      throw new WarrenError(
        'CHECKOUT_DIRTY',
        `could not bring ${plan.checkout} (which has ${plan.task.base} checked out) forward: ${ff.stderr.trim()}. Nothing was changed.`,
        {
          hint: `Commit or stash the changes in ${plan.checkout}, then land again.`,
        },
      );
    }
    intent.step('checkout-moved');
  }
  if (await compareAndSwapRef(ctx.repo, plan.baseRef, plan.commit, plan.baseTip, `warren land ${plan.task.id}`)) {
    intent.step('ref-moved');
    return intent;
  }
  intent.done();
  if (plan.checkout) {
    // The ref did not move: the checkout must go back, or it would show the task's files as staged changes.
    const back = await moveCheckout(plan.checkout, plan.commit, plan.baseTip);
    if (back.exitCode !== 0) {
      throw new WarrenError(
        'CHECKOUT_DIRTY',
        `${plan.task.base} moved while task ${plan.task.id} was landing, so nothing was landed, but ${plan.checkout} could not be put back to ${plan.baseTip.slice(0, 12)}: ${back.stderr.trim()}. Its index and files now hold the task's squash (${plan.commit.slice(0, 12)}) while ${plan.task.base} does not; the task branch is untouched.`,
        {
          hint: `In ${plan.checkout}, run \`git read-tree -m -u ${plan.commit.slice(0, 12)} HEAD\` (or \`git reset --keep HEAD\`) to return it to ${plan.task.base}, then land again. Do not commit what it shows as staged.`,
          details: { checkout: plan.checkout, squash: plan.commit, base: plan.baseTip },
        },
      );
    }
  }
  return null;
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

/** What a land puts on the record, and what its repair needs: everything but the plan's objects is here. */
export interface Landed {
  id: string;
  branch: string;
  base: string;
  baseRef: string;
  commit: string;
  tree: string;
  taskTip: string;
  forkPoint: string;
  baseTip: string;
  excluded: string[];
  rebased: boolean;
  checkout: string | null;
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

/**
 * A land whose warren died between moving the main checkout and moving the base ref: the
 * checkout shows the task's files as staged changes while the base is where it was. The
 * checkout is put back (then `land` can run again). Once the ref had moved, the land happened:
 * it is recorded.
 */
export const recoverLand: RecoverFn = async (ctx, intent) => {
  const l = intent.data as unknown as Landed;
  if (intent.step === 'begun') return { outcome: 'nothing-to-do', message: 'it had moved nothing' };
  if (intent.step === 'recorded')
    return {
      outcome: 'nothing-to-do',
      message: `task ${l.id} had landed as ${l.commit.slice(0, 12)} (a push it was asked for did not run)`,
    };
  return withRepoLock(ctx, `recover land ${l.id}`, async () => {
    const tip = await revParse(ctx.repo, l.baseRef);
    if (tip === l.commit) {
      recordLanded(ctx, l, ' (recorded after an interrupted land)');
      return {
        outcome: 'rolled-forward' as const,
        message: `${l.base} had moved to ${l.commit.slice(0, 12)}: the land happened, and is now recorded`,
      };
    }
    if (!l.checkout)
      return { outcome: 'nothing-to-do' as const, message: `${l.base} did not move; nothing else had changed` };
    // HEAD of the checkout is the base branch; its index and files hold the squash.
    const back = await moveCheckout(l.checkout, l.commit, tip ?? l.baseTip);
    if (back.exitCode !== 0) {
      return {
        outcome: 'failed' as const,
        message: `${l.checkout} holds the squash ${l.commit.slice(0, 12)} of task ${l.id} while ${l.base} is at ${(tip ?? '?').slice(0, 12)}, and could not be put back: ${back.stderr.trim()}. Do not commit what it shows as staged; run \`git read-tree -m -u ${l.commit.slice(0, 12)} HEAD\` there`,
      };
    }
    return {
      outcome: 'rolled-back' as const,
      message: `${l.checkout} was put back to ${l.base}; \`warren land ${l.id}\` can run again`,
    };
  });
};
