import fs from 'node:fs';
import type { z } from 'zod';
import { WarrenError } from '../errors.js';
import { branchFacts, deleteBranchIfExists, deleteRefAt, revParse } from '../git/refs.js';
import { listWorktrees, removeWorktree } from '../git/worktrees.js';
import type { Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { lexists } from '../util/lexists.js';
import type { ProjectContext } from './context.js';
import { newTaskFailed } from './create-failed.js';
import type { CreateOptions, CreateStep } from './types.js';
import { branchRecord, forgetBranch, recordBranch } from './branch-records.js';
import { taskTypes, validateTaskId, validateTaskType } from './ids.js';
import { forgetWorkspace, recordMade } from './ledger.js';
import { lockTask, withRepoLock } from './locks.js';
import { endPrepared, startLive, startsWhileCheckingOut, type NewTaskLive } from './new-live.js';
import { metaPathFor, writeMeta } from './meta.js';
import { assertNoTask, checkedBranch, checkSlot, defaultBase, validateBase } from './new-guards.js';
import { runOperation, type Direction, type Operation, type Schema, type Scope, type Step } from './operation.js';
import { runnerFor } from '../config/runner.js';
import { assertContained } from './paths.js';
import { afterRemoveSteps, releaseSteps } from './release.js';
import { reportStep } from './reporter.js';
import { recordFastForward, syncBase, type SyncOutcome } from './sync.js';
import { addTaskWorktree, reportPostCheckoutNotRun } from './worktree-add.js';

export type { CreateOptions } from './types.js';

/**
 * `warren new TYPE ID`: validate → gather and check everything, before anything is made →
 * the `new` operation (below): the task's row, its worktree, the ownership record beside it,
 * then each feature's create step (provisioning, the shared-git fingerprint, ports, risk,
 * setup), then `ready`. A failure after the first mutation undoes what was made, and so does
 * the next command after a warren killed half way.
 */
export async function createTask(ctx: ProjectContext, options: CreateOptions): Promise<Task> {
  // Validate: pure checks and read-only git, before any lock or file.
  const type = validateTaskType(options.type, taskTypes(ctx.config));
  const id = validateTaskId(options.id);
  const branch = checkedBranch(type, id);
  if (options.base !== undefined) validateBase(options.base);
  // The features' own guards, before the first mutation.
  for (const step of ctx.lifecycle.create) await step.check?.(ctx, options);

  // An existing task is named as such before its lock is tried: "it exists" says more than "busy".
  assertNoTask(ctx, id);
  const lock = lockTask(ctx, id, `new ${branch}`);
  try {
    assertNoTask(ctx, id);
    const base = options.base ?? (await defaultBase(ctx));
    if (!base) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        'the main worktree has a detached HEAD, so there is no default base; nothing was created.',
        { hint: 'Pass --base BRANCH.' },
      );
    }
    // One git call answers: is the base a branch (its commit and upstream), and is the task's branch taken?
    const facts = await branchFacts(ctx.repo, [base, branch]);
    const baseBranch = facts.get(base) ?? null;
    const baseRev = baseBranch ? null : await revParse(ctx.repo, base);
    if (!baseBranch && !baseRev && !(await revParse(ctx.repo, 'HEAD'))) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        `this repository has no commits yet, so there is no ${JSON.stringify(base)} to branch from; nothing was created.`,
        { hint: 'Make a first commit (e.g. `git commit --allow-empty -m init`), then run `warren new` again.' },
      );
    }
    if (!baseBranch && !baseRev) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        `base ${JSON.stringify(base)} is not a branch or commit of this repository; nothing was created.`,
        { hint: 'Pass --base with an existing branch, tag or commit.' },
      );
    }
    const wsPath = await checkSlot(ctx, id, branch, facts.has(branch));

    let sync: SyncOutcome = { kind: 'no-upstream' };
    const upstream = baseBranch?.upstream;
    if (options.sync !== false && upstream)
      sync = await reportStep(ctx.reporter, `syncing ${base} from ${upstream.remote}`, () =>
        syncBase(ctx, base, upstream),
      );
    recordFastForward(ctx, id, base, sync);
    const baseCommit = syncedCommit(sync) ?? baseBranch?.commit ?? baseRev;
    if (!baseCommit)
      throw new WarrenError('BASE_UNKNOWN', `base ${base} vanished while creating; nothing was created.`);

    stopIfInterrupted(options);
    const live = startLive(ctx, options, { type, base, sync, tip: baseCommit });
    await runOperation(ctx, NEW, id, { id, branch, path: wsPath, baseCommit }, live).finally(() => endPrepared(live));
    return ctx.store.getTask(ctx.key, id) ?? fail(`task ${id} vanished after it was made`);
  } finally {
    lock.release();
  }
}

// ─── The operation ──────────────────────────────────────────────────────────────────────────

const payload = (z: Schema) =>
  z.object({
    id: z.string(),
    branch: z.string(),
    path: z.string(),
    /** The base commit the task is made from (its record's `baseCommit`). */
    baseCommit: z.string(),
    /** `restore`: the archive it came from. */
    archive: z.string().optional(),
  });

export type NewTaskData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    new: NewTaskData;
    restore: NewTaskData;
  }
}

export type NewStepName =
  'row-inserted' | 'worktree-added' | 'files-restored' | 'meta-written' | `after-${string}` | 'ready';
type NewStep = Step<NewStepName, NewTaskData, NewTaskLive>;

/** Ctrl-C (the command's signal): stop before the next step; the runner undoes what was made. */
function stopIfInterrupted(options: CreateOptions): void {
  if (options.signal?.aborted)
    throw new WarrenError('CREATE_FAILED', 'interrupted (ctrl-c)', {
      hint: 'Run `warren new` again when you want the task.',
    });
}

/**
 * Until the task has left `creating` (setup moved it to `setup_failed`, or it is `ready`), a
 * half-made task holds nobody's work (it was never handed over): it is undone. After, it is kept.
 */
async function backUnlessMade({ ctx, data }: Scope<NewTaskData>): Promise<Direction> {
  const row = ctx.store.getTask(ctx.key, data.id);
  return row && row.state !== 'creating' ? 'forward' : 'back';
}

/** The task's row, in state `creating`. Undone: what the features keep beside it, the ledger's records, the row. */
const rowInserted: NewStep = {
  name: 'row-inserted',
  async run({ ctx, data, live }) {
    const runner = runnerFor(ctx.config, live.options);
    ctx.store.insertTask({
      project: ctx.key,
      id: data.id,
      type: live.type,
      branch: data.branch,
      path: data.path,
      base: live.base,
      baseCommit: data.baseCommit,
      state: 'creating',
      // The task's own sandbox from the start: how its checkout and layers are made depends on it (as root).
      data: {
        ...(live.options.sandbox ? { sandbox: live.options.sandbox } : {}),
        // Where it runs, fixed at `new` (its own `--runner`, else warren.yaml's): a later change moves no task.
        ...(runner !== 'local' || live.options.runner ? { runner } : {}),
      },
    });
  },
  async undo({ ctx, data }) {
    const row = ctx.store.getTask(ctx.key, data.id);
    if (!row || row.state !== 'creating' || fs.existsSync(data.path)) return;
    forgetWorkspace(ctx, data.path);
    await afterRemoveSteps(ctx, row).catch(() => undefined);
    ctx.store.deleteTask(ctx.key, data.id);
    return 'task record deleted';
  },
  recover: { decide: backUnlessMade },
};

/**
 * The worktree on the task's branch: a copy-on-write checkout when warren.yaml asks for one and
 * the machine can, else `git worktree add`. Undone: every feature's release first (a layer
 * mounted inside must come off: git and a recursive delete both go through a mount), then
 * git's record, the folder, and the branch when this run made it. While anything is still
 * mounted inside, the workspace is left on disk and named, never deleted through the mount.
 */
const worktreeAdded: NewStep = {
  name: 'worktree-added',
  async run({ ctx, data, live }) {
    recordMade(ctx, data.path, 'workspace', data.id);
    recordBranch(ctx, data.id, data.branch, live.tip);
    const row = ctx.store.getTask(ctx.key, data.id) ?? fail(`task ${data.id} has no row`);
    await reportStep(ctx.reporter, `checking out ${data.branch}`, async () => {
      // A restore makes its branch at the archived tip with `git worktree add`; a cow checkout is of the base.
      if (!live.restore && (await ctx.lifecycle.checkout?.add(ctx, row))) {
        Object.assign(live.made, { worktree: true, branch: true });
      } else {
        // What needs only git's records (a container task's container) starts while git checks the files out.
        const start = await startsWhileCheckingOut(ctx, live);
        const recorded = start && (() => start(row));
        await addTaskWorktree(ctx, data.branch, data.path, live.tip, live.made, live.repoLock, recorded);
      }
    });
    await reportPostCheckoutNotRun(ctx, data.id, data.path);
  },
  async undo({ ctx, data, live, finished }) {
    const undone: string[] = [];
    const row = ctx.store.getTask(ctx.key, data.id);
    const problems = row && lexists(data.path) ? await releaseSteps(ctx, row) : [];
    for (const p of problems) undone.push(`(release failed: ${p})`);
    const mounted = mountsUnder(readMounts(), data.path);
    if (mounted.length > 0) {
      // The row stays in `creating`, so scan and gc find it.
      throw new Error(
        `${undone.length > 0 ? `${undone.join(', ')}; ` : ''}kept ${data.path}: still mounted inside at ${mounted.map((m) => m.mountPoint).join(', ')}; unmount it, then run \`warren gc\``,
      );
    }
    // Failed inside `git worktree add`: only a branch this run made goes (git refuses one that
    // exists, which is then someone else's). Killed inside it, the run's memory is gone: the
    // branch goes when warren's record says this task made it and it is still at the commit it
    // was made at (nothing was committed on it since).
    const record = branchRecord(ctx, data.branch);
    const branchIsOurs = finished || live?.made.branch === true;
    const recordedHere = live === null && record !== null && record.taskId === data.id;
    await withRepoLock(ctx, `undo ${data.branch}`, async () => {
      const listed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === data.path);
      if (listed) {
        // --force is safe here: the worktree was made by this run moments ago, and nothing is mounted in it.
        await removeWorktree(ctx.repo, data.path, true);
        undone.push(`worktree ${data.path} removed`);
      }
      if (lexists(data.path)) {
        const failures = removeTree(data.path);
        if (failures.length > 0) {
          throw new Error(`could not delete ${failures[0]?.path}: ${failures[0]?.code}; run \`warren scan\``);
        }
        if (!listed) undone.push(`directory ${data.path} removed`);
      }
      if (branchIsOurs && (await deleteBranchIfExists(ctx.repo, data.branch))) {
        undone.push(`branch ${data.branch} deleted`);
      } else if (
        !branchIsOurs &&
        recordedHere &&
        (await deleteRefAt(ctx.repo, `refs/heads/${data.branch}`, record.tip))
      ) {
        undone.push(`branch ${data.branch} deleted (made by the interrupted run, still at ${record.tip.slice(0, 12)})`);
      }
      if (record) forgetBranch(ctx, data.branch);
    });
    return undone.join(', ');
  },
  recover: { decide: backUnlessMade },
};

/** `restore`: the archived files and index, put in before anything runs. Undone with the worktree. */
const filesRestored: NewStep = {
  name: 'files-restored',
  async run({ data, live }) {
    await live.restore?.populate(data.path);
  },
  recover: { decide: backUnlessMade },
};

/** The ownership record beside the workspace, and the task's first event. Undone with the worktree. */
const metaWritten: NewStep = {
  name: 'meta-written',
  async run({ ctx, data, live }) {
    stopIfInterrupted(live.options);
    assertContained(ctx.root, data.path);
    const row = ctx.store.getTask(ctx.key, data.id) ?? fail(`task ${data.id} has no row`);
    recordMade(ctx, metaPathFor(data.path), 'meta', data.id);
    writeMeta({
      version: 1,
      project: ctx.key,
      taskId: data.id,
      branch: data.branch,
      path: data.path,
      createdAt: row.createdAt,
    });
    const { base, sync, repoLock, restore, tip } = live;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: data.id,
      kind: 'task.created',
      message: restore
        ? `restored ${data.branch} at ${data.path} from ${restore.from} (branch at ${tip.slice(0, 12)}; first made from ${base} ${data.baseCommit.slice(0, 12)})`
        : `created ${data.branch} at ${data.path} from ${base} (${data.baseCommit.slice(0, 12)})`,
      data: {
        branch: data.branch,
        path: data.path,
        base,
        baseCommit: data.baseCommit,
        sync,
        ...(repoLock.heldMs === undefined
          ? {}
          : { repoLock: { waitedMs: repoLock.waitedMs ?? 0, heldMs: repoLock.heldMs } }),
        ...(restore ? { restored: { archive: restore.from, tip } } : {}),
      },
    });
  },
  recover: { decide: backUnlessMade },
};

/**
 * A feature's create step. Each sees the task as the steps before it left it (their recorded
 * facts included). Undone by that feature's release and after-remove steps, which the
 * worktree's and the row's undos run. Throwing undoes the whole task; a step may instead leave
 * it in a state of its own (setup moves it to `setup_failed`), which keeps it.
 */
function featureStep(step: CreateStep<unknown>, index: number): NewStep {
  return {
    name: `after-${step.name}`,
    async run({ ctx, data, live }) {
      const task = ctx.store.getTask(ctx.key, data.id) ?? fail(`task ${data.id} has no row`);
      if (task.state === 'creating') stopIfInterrupted(live.options);
      await step.run(ctx, task, live.options, await live.prepared[index]);
    },
    recover: { decide: backUnlessMade },
  };
}

/** The task is handed over: `ready`, unless a feature left it in a state of its own. */
const ready: NewStep = {
  name: 'ready',
  async run({ ctx, data, live }) {
    if (ctx.store.getTask(ctx.key, data.id)?.state !== 'creating') return;
    stopIfInterrupted(live.options);
    ctx.store.transition(ctx.key, data.id, 'creating', 'ready');
  },
  recover: { decide: backUnlessMade },
};

/** The steps of `new`, and of `restore` (with its files put in before anything runs). */
export function newTaskSteps(lifecycle: { create: readonly CreateStep<unknown>[] }, restoring: boolean): NewStep[] {
  return [
    rowInserted,
    worktreeAdded,
    ...(restoring ? [filesRestored] : []),
    metaWritten,
    ...lifecycle.create.map(featureStep),
    ready,
  ];
}

/**
 * `new`. Killed half way, before the task was handed over, it is undone like a failed one (it
 * holds nobody's work), after which the same `new` succeeds; once the task reached its final
 * state (ready, or setup_failed) there is nothing to undo.
 */
export const NEW: Operation<'new', NewStepName, NewTaskLive> = {
  op: 'new',
  payload,
  steps: (lifecycle) => newTaskSteps(lifecycle, false),
  failed: newTaskFailed,
  repaired: (outcome, data, did) =>
    outcome === 'rolled-back'
      ? `undone (${did.join(', ')}); \`warren new\` can make task ${data.id} again`
      : outcome === 'nothing-to-do'
        ? `task ${data.id} had been made, or nothing had been`
        : did.join('; '),
};

/** The base's commit once syncing moved or confirmed it; null when there was nothing to sync. */
function syncedCommit(sync: SyncOutcome): string | null {
  switch (sync.kind) {
    case 'no-upstream':
      return null;
    case 'fast-forwarded':
      return sync.to;
    default:
      return sync.commit;
  }
}

/** A step found the world not as its earlier steps left it: a bug or another process, never the user's input. */
function fail(what: string): never {
  throw new Error(what);
}
