import fs from 'node:fs';
import type { z } from 'zod';
import { commitsNotOn } from '../git/history.js';
import { headOrNull } from '../git/index-ops.js';
import { branchExists, deleteBranch, otherRefTips } from '../git/refs.js';
import { statusOf } from '../git/status.js';
import { pruneWorktrees, removeWorktree, unlockWorktree } from '../git/worktrees.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { withRepoLock } from './locks.js';
import { forgetWorkspace, madeByWarren } from './ledger.js';
import { branchRecord, branchRecords, forgetBranch } from './branch-records.js';
import type { GcAsk, GcCollected } from './types.js';
import { releaseSteps } from './release.js';
import { runOperation, type Operation, type Schema } from './operation.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { presenceAt, type Presence } from './paths.js';
import { gatherScan, classifyStrays, isLive, type Stray } from './scan.js';
import { pinned } from './pinned.js';

/** What gc learned about a stray before deciding. */
export interface StrayFacts {
  stray: Stray;
  task: Task | null;
  /** For worktrees and branches: uncommitted changes, or commits on no other ref. */
  uncommitted: number;
  unlandedCommits: number;
  /** For stranded directories: does it hold anything at all? */
  empty: boolean;
  /** For unclaimed worktrees: what is at the path (a locked record's folder may be missing). */
  presence: Presence;
  /** The facts could not be read: the stray is kept, with this as the reason. */
  unreadable: string | null;
}

export type GcAction =
  | { kind: 'forget-row'; stray: Stray; task: Task }
  | { kind: 'delete-dir'; stray: Stray; path: string; task: Task | null }
  | { kind: 'remove-worktree'; stray: Stray; path: string; force: boolean; task: Task | null }
  | { kind: 'prune'; stray: Stray; spare: ReadonlySet<string> }
  | { kind: 'delete-branch'; stray: Stray; branch: string; task: Task | null };

export interface GcPlan {
  actions: GcAction[];
  kept: { path: string; kind: string; reason: string }[];
}

/**
 * Decides what is provably safe to remove. Pure: nothing with uncommitted or unlanded work, and
 * never the records of a live task (`spare`: their paths, which git's prune must leave alone).
 */
export function planGc(facts: readonly StrayFacts[], spare: ReadonlySet<string> = new Set()): GcPlan {
  const actions: GcAction[] = [];
  const kept: GcPlan['kept'] = [];
  const keep = (f: StrayFacts, reason: string) =>
    kept.push({ path: f.stray.path ?? f.stray.branch ?? '', kind: f.stray.kind, reason });
  for (const f of facts) {
    const { stray, task } = f;
    if (f.unreadable !== null) {
      keep(f, `warren could not read it (${f.unreadable}), so it cannot prove it holds no work`);
      continue;
    }
    switch (stray.kind) {
      case 'vanished':
        // The directory is gone already and git has no record of it; the branch (and its commits) stays. Only the row goes.
        if (task) actions.push({ kind: 'forget-row', stray, task });
        break;
      case 'displaced':
        keep(f, stray.reason);
        break;
      case 'prunable':
        actions.push({ kind: 'prune', stray, spare });
        break;
      case 'stranded':
        if (task?.state === 'remove_failed') actions.push({ kind: 'delete-dir', stray, path: stray.path ?? '', task });
        else if (f.empty) actions.push({ kind: 'delete-dir', stray, path: stray.path ?? '', task });
        else
          keep(
            f,
            'git does not know this directory, so warren cannot prove it holds no work; inspect it and delete it by hand',
          );
        break;
      case 'unclaimed':
        if (task?.state === 'creating') {
          // A warren new that died: never handed to anyone, so it holds no one's work.
          actions.push({ kind: 'remove-worktree', stray, path: stray.path ?? '', force: true, task });
        } else if (f.presence.kind !== 'folder') {
          // git keeps a locked record whose folder is gone (a removable disk, say): it comes back with the disk.
          keep(f, unclaimedElsewhere(stray, f.presence));
        } else if (f.uncommitted > 0) {
          keep(f, `it has ${f.uncommitted} uncommitted change(s)`);
        } else if (f.unlandedCommits > 0) {
          keep(f, `its HEAD has ${f.unlandedCommits} commit(s) on no other ref`);
        } else {
          actions.push({ kind: 'remove-worktree', stray, path: stray.path ?? '', force: false, task });
        }
        break;
      case 'orphan-branch':
        if (f.unlandedCommits > 0) keep(f, `branch holds ${f.unlandedCommits} commit(s) on no other ref`);
        else actions.push({ kind: 'delete-branch', stray, branch: stray.branch ?? '', task });
        break;
      case 'mounted':
        keep(f, 'something is mounted here; unmount it first (warren never deletes through a mount)');
        break;
      case 'foreign':
        keep(
          f,
          'warren did not make it (not in its ledger), so it never deletes it; remove it yourself if you mean to',
        );
        break;
    }
  }
  return { actions, kept };
}

function unclaimedElsewhere(stray: Stray, presence: Presence): string {
  const where =
    presence.kind === 'missing'
      ? 'is missing'
      : presence.kind === 'replaced'
        ? `was replaced by ${presence.what}`
        : 'is there';
  if (stray.locked === undefined)
    return `its folder ${where}; warren never removes a worktree through a link or without its folder`;
  return `git's record is locked${stray.locked ? ` ("${stray.locked}")` : ''} and its folder ${where} (on a disk not mounted?); if it is gone for good, \`git worktree unlock ${stray.path ?? ''}\` and \`warren gc\` prune it`;
}

/** Each stray's facts on their own: one that cannot be read is kept and named, and the rest are still collected. */
async function gatherFacts(
  ctx: ProjectContext,
  strays: readonly Stray[],
  tasks: readonly Task[],
): Promise<StrayFacts[]> {
  const facts: StrayFacts[] = [];
  for (const stray of strays) {
    const task =
      tasks.find(
        (t) => (stray.id !== undefined && t.id === stray.id) || (stray.path !== undefined && t.path === stray.path),
      ) ?? null;
    const f: StrayFacts = {
      stray,
      task,
      uncommitted: 0,
      unlandedCommits: 0,
      empty: false,
      presence: { kind: 'folder' },
      unreadable: null,
    };
    try {
      await readFacts(ctx, f);
    } catch (err) {
      f.unreadable = err instanceof Error ? err.message : String(err);
    }
    facts.push(f);
  }
  return facts;
}

async function readFacts(ctx: ProjectContext, f: StrayFacts): Promise<void> {
  const { stray } = f;
  if (stray.kind === 'unclaimed' && stray.path) {
    f.presence = presenceAt(stray.path);
    if (f.presence.kind !== 'folder') return;
    // Pinned like a task's: a worktree nobody claims may hold anything, its git pointers included.
    const wt = await pinned(ctx, stray.path);
    f.uncommitted = (await statusOf(wt).catch(() => [{ code: '??', path: '(status failed)' }])).length;
    const head = await headOrNull(wt);
    if (head) {
      const own = stray.branch ? [`refs/heads/${stray.branch}`] : [];
      f.unlandedCommits = (await commitsNotOn(ctx.repo, head, await otherRefTips(ctx.repo, own))).length;
    }
  }
  if (stray.kind === 'orphan-branch' && stray.branch) {
    const others = await otherRefTips(ctx.repo, [`refs/heads/${stray.branch}`]);
    f.unlandedCommits = (await commitsNotOn(ctx.repo, `refs/heads/${stray.branch}`, others)).length;
  }
  if (stray.kind === 'stranded' && stray.path) {
    try {
      f.empty = fs.readdirSync(stray.path).length === 0;
    } catch {
      f.empty = false;
    }
  }
}

export type GcResult = GcCollected;

/** `warren gc`: removes the strays that are provably safe to remove and says why it kept the rest. */
export async function gc(ctx: ProjectContext, ask: GcAsk = { hosts: false }): Promise<GcResult> {
  const input = await gatherScan(ctx);
  const strays = classifyStrays(input);
  const spare = new Set(input.tasks.filter(isLive).map((t) => t.path));
  const plan = planGc(await gatherFacts(ctx, strays, input.tasks), spare);
  const live: GcLive = { plan, tasks: input.tasks, removed: [], kept: [...plan.kept], ask };
  await runOperation(ctx, GC, null, { actions: plan.actions.length }, live);
  // Records of branches that are gone and whose task is gone: nothing left to decide about.
  const tasks = ctx.store.listTasks(ctx.key);
  for (const record of branchRecords(ctx)) {
    if (!tasks.some((t) => t.branch === record.branch) && !(await branchExists(ctx.repo, record.branch)))
      forgetBranch(ctx, record.branch);
  }
  const { removed, kept } = live;
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'gc',
    level: kept.length > 0 ? 'warn' : 'info',
    message: `gc removed ${removed.length} stray(s), kept ${kept.length}`,
    data: { removed, kept },
  });
  return { removed, kept };
}

/**
 * A task's row goes. A task that was handed over (ready, setup_failed, landed) leaves its branch
 * to the user, as `rm` does. One that never was, or was on its way out (a `new` or an `rm` that
 * died), leaves a branch only warren made: it goes too when it holds no commit of its own.
 */
async function forgetTaskRow(ctx: ProjectContext, task: Task, live: GcLive): Promise<void> {
  ctx.store.deleteTask(ctx.key, task.id);
  const record = branchRecord(ctx, task.branch);
  if (!record) return;
  if (isLive(task) || !(await branchExists(ctx.repo, task.branch))) {
    forgetBranch(ctx, task.branch);
    return;
  }
  const ref = `refs/heads/${task.branch}`;
  const own = (await commitsNotOn(ctx.repo, ref, await otherRefTips(ctx.repo, [ref]))).length;
  if (own > 0) {
    live.kept.push({
      path: task.branch,
      kind: 'orphan-branch',
      reason: `branch warren made for task ${task.id}, which is gone, holds ${own} commit(s) on no other ref`,
    });
    return;
  }
  await deleteBranch(ctx.repo, task.branch);
  forgetBranch(ctx, task.branch);
  live.removed.push({ kind: 'orphan-branch', id: task.id, branch: task.branch, action: 'delete-branch' });
}

const payload = (z: Schema) => z.object({ actions: z.number() });

declare module '../state/intents.js' {
  interface IntentPayloads {
    gc: z.infer<ReturnType<typeof payload>>;
  }
}

export interface GcLive {
  plan: GcPlan;
  ask: GcAsk;
  tasks: readonly Task[];
  removed: GcResult['removed'];
  kept: GcResult['kept'];
}

/** One planned action, checked again as it is done: what it removed goes in `live.removed`, what it kept and why in `live.kept`. */
async function collectStray(ctx: ProjectContext, action: GcAction, live: GcLive): Promise<void> {
  const { removed, kept } = live;
  const { stray } = action;
  const entry = {
    kind: stray.kind,
    action: action.kind,
    ...(stray.path ? { path: stray.path } : {}),
    ...(stray.id ? { id: stray.id } : {}),
    ...(stray.branch ? { branch: stray.branch } : {}),
  };
  try {
    if (await act(ctx, action, live)) removed.push(entry);
  } catch (err) {
    kept.push({
      path: stray.path ?? stray.branch ?? '',
      kind: stray.kind,
      reason: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Does one action; false when a check at the moment of acting kept the stray (said in `live.kept`). */
async function act(ctx: ProjectContext, action: GcAction, live: GcLive): Promise<boolean> {
  const { kept } = live;
  const { stray } = action;
  switch (action.kind) {
    case 'forget-row':
      forgetWorkspace(ctx, action.task.path);
      await forgetTaskRow(ctx, action.task, live);
      break;
    case 'prune':
      await pruneWorktrees(ctx.repo, action.spare);
      break;
    case 'delete-dir': {
      // Checked again at the moment of deleting: the plan is only as old as the scan.
      if (!madeByWarren(ctx, action.path, live.tasks)) {
        kept.push({
          path: action.path,
          kind: stray.kind,
          reason: 'warren did not make it (not in its ledger), so it never deletes it',
        });
        return false;
      }
      const failures = removeTree(action.path);
      if (fs.existsSync(action.path)) {
        const first = failures[0];
        kept.push({
          path: action.path,
          kind: stray.kind,
          reason: `could not delete ${first ? `${first.path} (${likelyCause(first.code)})` : 'it'}`,
        });
        return false;
      }
      forgetWorkspace(ctx, action.path);
      if (action.task) await forgetTaskRow(ctx, action.task, live);
      break;
    }
    case 'remove-worktree': {
      if (!madeByWarren(ctx, action.path, live.tasks)) {
        kept.push({
          path: action.path,
          kind: stray.kind,
          reason: 'warren did not make it (not in its ledger), so it never removes it',
        });
        return false;
      }
      // Unmount what later stages mounted inside first (a crashed `new` may have left a
      // cow layer): git would delete through a mount, and warren never does.
      const problems = action.task ? await releaseSteps(ctx, action.task) : [];
      const mounted = mountsUnder(readMounts(), action.path);
      if (mounted.length > 0 || problems.length > 0) {
        kept.push({
          path: action.path,
          kind: stray.kind,
          reason: [...problems, ...mounted.map((m) => `still mounted inside: ${m.mountPoint}`)].join('; '),
        });
        return false;
      }
      if (action.force) await unlockWorktree(ctx.repo, action.path);
      const result = await removeWorktree(ctx.repo, action.path, action.force);
      if (result.exitCode !== 0) {
        kept.push({ path: action.path, kind: stray.kind, reason: `git refused: ${result.stderr.trim()}` });
        return false;
      }
      forgetWorkspace(ctx, action.path);
      if (action.task) await forgetTaskRow(ctx, action.task, live);
      break;
    }
    case 'delete-branch':
      await deleteBranch(ctx.repo, action.branch);
      forgetBranch(ctx, action.branch);
      if (action.task && !fs.existsSync(action.task.path)) ctx.store.deleteTask(ctx.key, action.task.id);
      break;
  }
  return true;
}

/**
 * `gc`. Each of its actions is whole or not begun, so a `gc` killed half way has nothing to
 * repair: what it had not done is still a stray the next `gc` collects.
 */
export const GC: Operation<'gc', 'strays-collected' | 'features-collected', GcLive> = {
  op: 'gc',
  payload,
  steps: () => [
    {
      name: 'strays-collected',
      async run({ ctx, live }) {
        await withRepoLock(ctx, 'gc', async () => {
          for (const action of live.plan.actions) await collectStray(ctx, action, live);
        });
      },
      recover: 'forward',
    },
    {
      // What each feature leaves beside the workspaces (snapshots, logs, archives).
      name: 'features-collected',
      async run({ ctx, live }) {
        const { removed, kept } = live;
        for (const step of ctx.lifecycle.gc) {
          // One feature that cannot collect does not stop the others.
          try {
            const extra = await step.collect(ctx, live.ask);
            removed.push(...extra.removed);
            kept.push(...extra.kept);
          } catch (err) {
            kept.push({
              path: '',
              kind: step.name,
              reason: `could not collect: ${err instanceof Error ? err.message : String(err)}`,
            });
          }
        }
      },
      recover: 'forward',
    },
  ],
  repaired: () => 'what it had not collected is still there for the next `warren gc`',
};
