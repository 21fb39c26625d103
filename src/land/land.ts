import type { z } from 'zod';
import type { Schema } from '../workspace/operation.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withRepoLock, withTaskLock } from '../workspace/locks.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
import { loadTask } from './task.js';
import { planLand, type LandPlan } from './plan.js';
import { pushRef, resolveRemote, type PushOutcome } from './push.js';
import { recordDrift } from './record.js';
import { assertSettingsTrusted } from '../trust/trust.js';

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
  /** The merge queue's entry it landed through (not with branchOnly). */
  entry?: number;
}

/**
 * `warren land ID --branch-only`: the squash is built as `land` would build it (planLand writes
 * objects only) and pushed to the task's own branch for review; no base moves. Every land that
 * moves a base goes through the merge queue and its gate (queue/operations.ts `landTask`).
 */
export async function buildForReview(
  ctx: ProjectContext,
  rawId: string,
  options: Omit<LandOptions, 'branchOnly'> = {},
): Promise<LandResult> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `land ${id} --branch-only`, async () => {
    assertSettingsTrusted(ctx, `Nothing was built or pushed for task ${id}.`);
    const task = loadTask(ctx, id);
    // This task's worktree, on its branch, with no git operation half done; else the state is named.
    await assertWorkspaceState(ctx.repo, task);
    const remote = await resolveRemote(ctx, options.push ?? true, task.base);
    const plan = await planLand(ctx, task, {
      branchOnly: true,
      ...(options.message ? { message: options.message } : {}),
      ...(options.acceptHooks ? { acceptHooks: true } : {}),
    });
    const warnings = recordPlan(ctx, plan, options.acceptHooks === true);
    const previous = task.data.reviewPush?.commit ?? '';
    const push = await withRepoLock(ctx, `push ${task.branch}`, () =>
      pushRef(ctx, remote, plan.commit, `refs/heads/${task.branch}`, previous),
    );
    if (push.ok)
      ctx.store.mergeData(ctx.key, id, {
        reviewPush: { remote: push.remote, ref: push.ref, commit: plan.commit, at: new Date().toISOString() },
      });
    recordPush(ctx, id, push);
    return { ...resultOf(plan), warnings, push };
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
  if (plan.settingsChanged.length > 0) {
    const message = `task ${task.id} changes warren.yaml's security settings (${plan.settingsChanged.join('; ')}); once it has landed, warren runs nothing in this repository's tasks until you review and trust them (\`warren trust\`)`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'land.settings_changed',
      level: 'warn',
      message,
      data: { changed: plan.settingsChanged, commit: plan.commit },
    });
    warnings.push(message);
  }
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

export { landedShape };
