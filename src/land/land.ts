import { WarrenError } from '../errors.js';
import { indexMatches, moveCheckout } from '../git/index-ops.js';
import { compareAndSwapRef, revParse } from '../git/refs.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withRepoLock, withTaskLock } from '../workspace/locks.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
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
    const planOptions = { branchOnly, ...(options.message ? { message: options.message } : {}), ...(options.acceptHooks ? { acceptHooks: true } : {}) };
    let plan = await planLand(ctx, task, planOptions);

    if (branchOnly) {
      const warnings = recordPlan(ctx, plan, options.acceptHooks === true);
      const previous = task.data.reviewPush?.commit ?? '';
      const push = await withRepoLock(ctx, `push ${task.branch}`, () => pushRef(ctx, remote ?? 'origin', plan.commit, `refs/heads/${task.branch}`, previous));
      if (push.ok) ctx.store.mergeData(ctx.key, id, { reviewPush: { remote: push.remote, ref: push.ref, commit: plan.commit, at: new Date().toISOString() } });
      recordPush(ctx, id, push);
      return { ...resultOf(plan), warnings, push };
    }

    // Another land may move the base between our plan and the lock: plan again on the new tip
    // (planning writes objects only), a few times, then give up with nothing moved.
    for (let attempt = 1; ; attempt++) {
      const current = plan;
      const moved = await withRepoLock(ctx, `land ${id} onto ${task.base}`, () => moveBase(ctx, current));
      if (moved) break;
      if (attempt >= MOVE_ATTEMPTS) throw movedError(plan);
      plan = await planLand(ctx, task, planOptions);
    }
    await verifyLanded(ctx, plan);

    const warnings = recordPlan(ctx, plan, options.acceptHooks === true);
    const excluded = plan.exclusions.map((e) => e.path);
    ctx.store.mergeData(ctx.key, id, {
      landed: { commit: plan.commit, tree: plan.tree, taskCommit: plan.taskTip, forkPoint: plan.forkPoint, base: task.base, baseBefore: plan.baseTip, excluded, at: new Date().toISOString() },
    });
    if (task.state !== 'landed') ctx.store.transition(ctx.key, id, task.state, 'landed');
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'task.landed',
      message: `landed ${task.branch} on ${task.base} as ${plan.commit.slice(0, 12)}${plan.rebased ? ` (rebased onto ${plan.baseTip.slice(0, 12)})` : ''}${excluded.length ? `; left out ${excluded.join(', ')}` : ''}`,
      data: { commit: plan.commit, tree: plan.tree, baseBefore: plan.baseTip, excluded, rebased: plan.rebased, checkout: plan.checkout },
    });
    const landed: LandResult = { ...resultOf(plan), warnings, landed: true, checkoutUpdated: plan.checkout };
    if (remote === null) return landed;
    const push = await withRepoLock(ctx, `push ${task.base}`, () => pushRef(ctx, remote, plan.commit, plan.baseRef));
    recordPush(ctx, id, push);
    return { ...landed, push };
  });
}

function resultOf(plan: LandPlan): LandResult {
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
function recordPlan(ctx: ProjectContext, plan: LandPlan, acceptHooks: boolean): string[] {
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
async function moveBase(ctx: ProjectContext, plan: LandPlan): Promise<boolean> {
  const now = await revParse(ctx.repo, plan.baseRef);
  if (now !== plan.baseTip) return false;
  if (plan.checkout) {
    const ff = await moveCheckout(plan.checkout, plan.baseTip, plan.commit);
    if (ff.exitCode !== 0) {
      throw new WarrenError('CHECKOUT_DIRTY', `could not bring ${plan.checkout} (which has ${plan.task.base} checked out) forward: ${ff.stderr.trim()}. Nothing was changed.`, {
        hint: `Commit or stash the changes in ${plan.checkout}, then land again.`,
      });
    }
  }
  if (await compareAndSwapRef(ctx.repo, plan.baseRef, plan.commit, plan.baseTip, `warren land ${plan.task.id}`)) return true;
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
  return false;
}

function movedError(plan: LandPlan): WarrenError {
  return new WarrenError('BASE_DIVERGED', `${plan.task.base} moved while task ${plan.task.id} was being landed; nothing was landed and ${plan.task.base} keeps its new tip.`, {
    hint: `Run \`warren land ${plan.task.id}\` again: it rebases onto the new tip.`,
  });
}

async function verifyLanded(ctx: ProjectContext, plan: LandPlan): Promise<void> {
  const tip = await revParse(ctx.repo, plan.baseRef);
  if (tip !== plan.commit) {
    throw new WarrenError('INTERNAL', `after landing, ${plan.baseRef} is at ${tip ?? 'nothing'} instead of ${plan.commit}.`);
  }
  if (plan.checkout && plan.changed.length > 0) {
    if (!(await indexMatches(plan.checkout, plan.commit, plan.changed))) {
      throw new WarrenError('INTERNAL', `${plan.task.base} landed as ${plan.commit.slice(0, 12)} but the index of ${plan.checkout} does not match it; run \`git status\` there.`);
    }
  }
}

function recordPush(ctx: ProjectContext, id: string, push: PushOutcome): void {
  ctx.store.addEvent({
    project: ctx.key,
    taskId: id,
    kind: push.ok ? 'land.pushed' : 'land.push_failed',
    level: push.ok ? 'info' : 'error',
    message: push.ok ? `pushed ${push.commit.slice(0, 12)} to ${push.remote} ${push.ref}` : `pushing ${push.commit.slice(0, 12)} to ${push.remote} ${push.ref} failed: ${push.error ?? ''}`,
    data: { ...push },
  });
}
