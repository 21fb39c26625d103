import fs from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import { classifyGitStderr, isTransientGitFailure } from '../git/errors.js';
import { isValidBaseRef, isValidBranchName, MAX_BASE_LENGTH } from '../git/refname.js';
import { commitsNotOn } from '../git/history.js';
import { checkoutEmptyWorktree, indexEntryCount, runPostCheckoutHook } from '../git/index-ops.js';
import { addEmptyWorktree } from '../git/snapshot.js';
import { branchExists, branchFacts, currentBranch, deleteBranchIfExists, otherRefTips, revParse } from '../git/refs.js';
import { addWorktree, listWorktrees, removeWorktree } from '../git/worktrees.js';
import type { Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { lexists } from '../util/lexists.js';
import { ensureRoot, type ProjectContext } from './context.js';
import { branchFor, taskTypes, validateTaskId, validateTaskType } from './ids.js';
import { type LockTiming, lockTask, withRepoLock } from './locks.js';
import { forgetWorkspace, recordMade } from './ledger.js';
import { metaPathFor, writeMeta } from './meta.js';
import { assertContained, workspacePathFor } from './paths.js';
import { beginIntent, intentSteps, type RecoverFn } from './intents.js';
import { releaseSteps } from './remove.js';
import { recordFastForward, syncBase, type SyncOutcome } from './sync.js';

export interface CreateOptions {
  type: string;
  id: string;
  /** Default: the branch checked out in the main worktree. */
  base?: string;
  /** Fetch and fast-forward the base first (default true). */
  sync?: boolean;
  /** Run setup commands (default true). */
  setup?: boolean;
  /** This task's sandbox, overriding warren.yaml's `sandbox:` (stored on the task). */
  sandbox?: 'none' | 'bwrap';
  /** Refuse to create a medium-or-higher risk task that would run without a sandbox. */
  requireSandbox?: boolean;
  /** `warren restore`: the branch is made at `tip` (not the base), and `populate` puts the saved files in place before anything runs. */
  restore?: RestoreSource;
}

export interface RestoreSource {
  /** Where the branch is made: the archived branch tip. */
  tip: string;
  /** The base commit the task was first made from. */
  baseCommit: string;
  /** The archive, in words for the event (its ref). */
  from: string;
  populate(wsPath: string): Promise<void>;
}

/**
 * `warren new TYPE ID`: validate → gather and check everything → act (row, worktree, metadata,
 * then the lifecycle's create steps in order) → record. Any failure after the first mutation
 * undoes what was made.
 */
export async function createTask(ctx: ProjectContext, options: CreateOptions): Promise<Task> {
  // Validate: pure checks and read-only git, before any lock or file.
  // A restored task keeps the type it was archived with, even one warren.yaml no longer lists.
  const type = validateTaskType(options.type, options.restore ? [options.type] : taskTypes(ctx.config));
  const id = validateTaskId(options.id);
  const branch = branchFor(type, id);
  if (!isValidBranchName(branch)) {
    throw new WarrenError(
      'BRANCH_INVALID',
      `branch name ${JSON.stringify(branch)} breaks git's branch-name rules (git check-ref-format --branch). Nothing was created.`,
      {
        hint: 'Pick a task ID that makes a valid branch name.',
      },
    );
  }

  if (options.base !== undefined) validateBase(options.base);

  // The features' own guards, before the first mutation.
  for (const step of ctx.lifecycle.create) await step.check?.(ctx, options);

  const lock = lockTask(ctx, id, `new ${branch}`);
  try {
    // Gather and check.
    if (ctx.store.getTask(ctx.key, id)) {
      throw new WarrenError('TASK_EXISTS', `task ${id} already exists in this repository; nothing was changed.`, {
        hint: `Use \`warren show ${id}\`, or remove it with \`warren rm ${id}\` first.`,
      });
    }
    const base = options.base ?? (await defaultBase(ctx));
    if (!base) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        'the main worktree has a detached HEAD, so there is no default base; nothing was created.',
        {
          hint: 'Pass --base BRANCH.',
        },
      );
    }
    // One git call answers: is the base a branch (its commit and upstream), and is the task's branch taken?
    const facts = await branchFacts(ctx.repo, [base, branch]);
    const baseBranch = facts.get(base) ?? null;
    const baseRev = baseBranch ? null : await revParse(ctx.repo, base);
    if (!baseBranch && !baseRev) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        `base ${JSON.stringify(base)} is not a branch or commit of this repository; nothing was created.`,
        {
          hint: 'Pass --base with an existing branch, tag or commit.',
        },
      );
    }
    await ensureRoot(ctx);
    const wsPath = workspacePathFor(ctx.root, id);
    if (lexists(wsPath)) {
      throw new WarrenError(
        'WORKSPACE_EXISTS',
        `${wsPath} already exists but no task ${id} is recorded; nothing was changed.`,
        {
          hint: 'Run `warren scan` to see what it is, and `warren gc` to clear what is safe to remove.',
        },
      );
    }
    if (facts.has(branch)) {
      // Say whether it holds work: a branch left by something that died holds none, and is safe to delete.
      const own = await commitsNotOn(
        ctx.repo,
        `refs/heads/${branch}`,
        await otherRefTips(ctx.repo, [`refs/heads/${branch}`]),
      );
      throw new WarrenError(
        'BRANCH_EXISTS',
        `branch ${branch} already exists (${own.length === 0 ? 'it holds no commit of its own: everything on it is on other refs' : `it holds ${own.length} commit(s) on no other ref, newest ${own[0]?.sha.slice(0, 12)} ${own[0]?.subject}`}); nothing was created.`,
        {
          hint:
            own.length === 0
              ? `If nothing else uses it, delete it (\`git branch -D ${branch}\`) and run \`warren new\` again, or pick another ID.`
              : `Pick another ID, or keep that work elsewhere first (e.g. \`git branch -m ${branch} ${branch}-old\`).`,
          details: { branch, ownCommits: own.length },
        },
      );
    }

    let sync: SyncOutcome = { kind: 'no-upstream' };
    if (options.sync !== false && !options.restore && baseBranch?.upstream)
      sync = await syncBase(ctx, base, baseBranch.upstream);
    recordFastForward(ctx, id, base, sync);
    const baseCommit = options.restore?.baseCommit ?? syncedCommit(sync) ?? baseBranch?.commit ?? baseRev;
    if (!baseCommit)
      throw new WarrenError('BASE_UNKNOWN', `base ${base} vanished while creating; nothing was created.`);

    // Act. The steps' own reads run meanwhile; each is awaited by its step.
    const steps = ctx.lifecycle.create;
    const prepared = steps.map((step) => (step.prepare ? step.prepare(ctx, options) : Promise.resolve(undefined)));
    for (const p of prepared) p.catch(() => undefined); // a failure surfaces when its step awaits it, or is moot after a rollback
    // From here on every step is recorded: a warren killed half way is repaired by the next command.
    const intent = beginIntent(ctx, options.restore ? 'restore' : 'new', id, { id, branch, path: wsPath, baseCommit });
    const task = ctx.store.insertTask({
      project: ctx.key,
      id,
      type,
      branch,
      path: wsPath,
      base,
      baseCommit,
      state: 'creating',
      data: {},
    });
    intent.step('row-inserted');
    const made = { worktree: false, branch: false };
    const repoLock: LockTiming = {};
    try {
      recordMade(ctx, wsPath, 'workspace', id);
      // A restore makes its branch at the archived tip with `git worktree add`; a cow checkout is of the base.
      if (!options.restore && (await ctx.lifecycle.checkout?.add(ctx, task)))
        Object.assign(made, { worktree: true, branch: true });
      else await addTaskWorktree(ctx, branch, wsPath, options.restore?.tip ?? baseCommit, made, repoLock);
      intent.step('worktree-added');
      if (options.restore) {
        await options.restore.populate(wsPath);
        intent.step('files-restored');
      }
      assertContained(ctx.root, wsPath);
      recordMade(ctx, metaPathFor(wsPath), 'meta', id);
      writeMeta({ version: 1, project: ctx.key, taskId: id, branch, path: wsPath, createdAt: task.createdAt });
      intent.step('meta-written');
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'task.created',
        message: options.restore
          ? `restored ${branch} at ${wsPath} from ${options.restore.from} (branch at ${options.restore.tip.slice(0, 12)}; first made from ${base} ${baseCommit.slice(0, 12)})`
          : `created ${branch} at ${wsPath} from ${base} (${baseCommit.slice(0, 12)})`,
        data: {
          branch,
          path: wsPath,
          base,
          baseCommit,
          sync,
          ...(repoLock.heldMs === undefined
            ? {}
            : { repoLock: { waitedMs: repoLock.waitedMs ?? 0, heldMs: repoLock.heldMs } }),
          ...(options.restore ? { restored: { archive: options.restore.from, tip: options.restore.tip } } : {}),
        },
      });
      for (const [i, step] of steps.entries()) {
        // Each step sees the task as the steps before it left it (their recorded facts included).
        const now = ctx.store.getTask(ctx.key, id) ?? task;
        await step.run(ctx, now, options, await prepared[i]);
        intent.step(`after-${step.name}`);
      }
      const final = ctx.store.getTask(ctx.key, id);
      if (final?.state === 'creating') ctx.store.transition(ctx.key, id, 'creating', 'ready');
      intent.step('ready');
      intent.done();
    } catch (err) {
      const undone = await rollback(ctx, id, branch, wsPath, made);
      intent.done();
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'task.create_failed',
        level: 'error',
        message: `creating task ${id} failed (${errorMessage(err)}); undone: ${undone.join(', ') || 'nothing was made'}`,
        data: { undone },
      });
      throw new WarrenError(
        'CREATE_FAILED',
        `creating task ${id} failed: ${errorMessage(err)}. Undone: ${undone.join(', ') || 'nothing had been made'}; ${baseAfter(base, sync)}.`,
        { hint: isWarrenError(err) ? err.hint : 'Fix the cause and run `warren new` again.', cause: err },
      );
    }
    return ctx.store.getTask(ctx.key, id) ?? task;
  } finally {
    lock.release();
  }
}

/** `--base` is bad input (exit 2) unless it can name a branch, tag or commit: never handed to git otherwise. */
function validateBase(base: string): void {
  if (isValidBaseRef(base)) return;
  const shown =
    base.length > 80 ? `${JSON.stringify(base.slice(0, 80))}… (${base.length} characters)` : JSON.stringify(base);
  throw new WarrenError(
    'BRANCH_INVALID',
    `base ${shown} is not a branch, tag or commit name (git's ref-name rules, at most ${MAX_BASE_LENGTH} characters); nothing was created.`,
    {
      hint: 'Pass --base with an existing branch, tag or commit.',
    },
  );
}

/** The branch checked out in the main worktree (null when detached), read when the repository was opened if it could be. */
async function defaultBase(ctx: ProjectContext): Promise<string | null> {
  const main = ctx.repo.main;
  if (!main) return currentBranch(ctx.repo.root);
  return main.head?.startsWith('refs/heads/') ? main.head.slice('refs/heads/'.length) : null;
}

/** What a failed `new` left of the base: as it was, or fast-forwarded to its upstream (not undone: that is the upstream's history). */
function baseAfter(base: string, sync: SyncOutcome): string {
  if (sync.kind !== 'fast-forwarded') return 'the base and the main checkout are as they were';
  return `${base} stays fast-forwarded to ${sync.upstream} (${sync.to.slice(0, 12)}, from ${sync.from.slice(0, 12)})${sync.checkout ? `, and ${sync.checkout} with it` : ''}`;
}

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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * At or above this many tracked files (the main checkout's index), the worktree's files are
 * written outside the repository lock. `git worktree add` of 5,000 files took 1.7–2.9 s here,
 * of which `--no-checkout` (what needs the lock: the branch and git's record of the worktree)
 * took 0.1–0.17 s; below this the extra process costs more than a shorter hold saves.
 */
export const CHECKOUT_OUTSIDE_LOCK_MIN_FILES = 1000;

/**
 * `git worktree add` under the repository lock, retried on transient failures. A failed attempt
 * can leave its new branch behind; that branch is deleted before the next try. In a large
 * repository only the records are made under the lock (`--no-checkout`); the files are then
 * written outside it — each worktree has its own index, so checkouts need not take turns — and
 * the post-checkout hook runs as `git worktree add` would have run it.
 */
async function addTaskWorktree(
  ctx: ProjectContext,
  branch: string,
  wsPath: string,
  baseCommit: string,
  made: { worktree: boolean; branch: boolean },
  timing: LockTiming,
): Promise<void> {
  const outside = (indexEntryCount(path.join(ctx.repo.commonDir, 'index')) ?? 0) >= CHECKOUT_OUTSIDE_LOCK_MIN_FILES;
  await withRepoLock(
    ctx,
    `worktree add ${branch}`,
    async () => {
      for (let attempt = 1; ; attempt++) {
        const result = outside
          ? await addEmptyWorktree(ctx.repo, branch, wsPath, baseCommit)
          : await addWorktree(ctx.repo, branch, wsPath, baseCommit);
        if (result.exitCode === 0) {
          made.worktree = true;
          made.branch = true;
          return;
        }
        // git refuses a branch that already exists before it makes anything: one made after this
        // command read the branches is someone else's, and the rollback must not delete it.
        if (classifyGitStderr(result.stderr) === 'GIT_BRANCH_EXISTS') {
          throw new WarrenError(
            'BRANCH_EXISTS',
            `branch ${branch} was made by something else while this task was being created; it is left as it is.`,
            {
              hint: 'Pick another ID, or look at what made that branch.',
              details: { branch, argv: result.argv, stderr: result.stderr },
            },
          );
        }
        if (await branchExists(ctx.repo, branch)) made.branch = true;
        if (attempt >= 4 || !isTransientGitFailure(result.stderr)) {
          throw new WarrenError('CREATE_FAILED', `git worktree add failed: ${result.stderr.trim()}`, {
            details: { argv: result.argv, exitCode: result.exitCode, stderr: result.stderr },
          });
        }
        await cleanupPartialAdd(ctx, branch, wsPath, made);
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    },
    timing,
  );
  if (!outside) return;
  for (const step of [() => checkoutEmptyWorktree(wsPath), () => runPostCheckoutHook(wsPath, baseCommit)]) {
    const result = await step();
    if (result.exitCode !== 0) {
      throw new WarrenError(
        'CREATE_FAILED',
        `${result.argv.join(' ')} failed in the new worktree: ${result.stderr.trim()}`,
        {
          details: { argv: result.argv, exitCode: result.exitCode, stderr: result.stderr },
        },
      );
    }
  }
}

/** A failed `worktree add` of this call's own: nothing in it is anyone's work, and nothing is mounted in it yet. */
async function cleanupPartialAdd(
  ctx: ProjectContext,
  branch: string,
  wsPath: string,
  made: { branch: boolean },
): Promise<void> {
  const listed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === wsPath);
  if (listed) await removeWorktree(ctx.repo, wsPath, true);
  removeTree(wsPath);
  if (made.branch) {
    await deleteBranchIfExists(ctx.repo, branch);
    made.branch = false;
  }
}

/**
 * Undoes a half-made task. Everything here was made by this call, so it holds no one's work —
 * but a later step may have mounted something inside it, and git and a recursive delete both
 * go through a mount. So the features' release steps unmount first, and the mount table is read
 * again: while anything is still mounted inside, the workspace is left on disk (and named), never
 * deleted through the mount.
 */
async function rollback(
  ctx: ProjectContext,
  id: string,
  branch: string,
  wsPath: string,
  made: { worktree: boolean; branch: boolean },
): Promise<string[]> {
  const undone: string[] = [];
  const row = ctx.store.getTask(ctx.key, id);
  const problems = row && lexists(wsPath) ? await releaseSteps(ctx, row) : [];
  for (const p of problems) undone.push(`(release failed: ${p})`);
  const mounted = mountsUnder(readMounts(), wsPath);
  if (mounted.length > 0) {
    undone.push(
      `(kept ${wsPath}: still mounted inside at ${mounted.map((m) => m.mountPoint).join(', ')}; unmount it, then run \`warren gc\`)`,
    );
    return undone; // the row stays in `creating`, so scan and gc find it
  }
  try {
    await withRepoLock(ctx, `rollback ${branch}`, async () => {
      const listed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === wsPath);
      if (listed) {
        // --force is safe here: the worktree was created by this call moments ago, and nothing is mounted in it.
        await removeWorktree(ctx.repo, wsPath, true);
        undone.push(`worktree ${wsPath} removed`);
      }
      if (lexists(wsPath)) {
        const failures = removeTree(wsPath);
        if (failures.length > 0) undone.push(`(could not delete ${failures[0]?.path}: ${failures[0]?.code})`);
        else if (!listed) undone.push(`directory ${wsPath} removed`);
      }
      if (made.branch && (await deleteBranchIfExists(ctx.repo, branch))) undone.push(`branch ${branch} deleted`);
    });
  } catch (err) {
    undone.push(`(cleanup incomplete: ${errorMessage(err)}; run \`warren scan\`)`);
  }
  if (!fs.existsSync(wsPath)) {
    forgetWorkspace(ctx, wsPath);
    await afterRemoveSteps(ctx, row);
    ctx.store.deleteTask(ctx.key, id);
    undone.push('task record deleted');
  }
  return undone;
}

/**
 * A `new` whose warren died before the task was handed over: undone like a failed one (it was
 * never reported as made, so it holds nobody's work), after which the same `new` succeeds. Once
 * the task reached its final state (ready, or setup_failed) there is nothing to undo.
 */
export const recoverNew: RecoverFn = async (ctx, intent) => {
  const { id, branch, path: wsPath } = intent.data as { id: string; branch: string; path: string };
  if (intent.step === 'begun') return { outcome: 'nothing-to-do', message: 'it had made nothing' };
  const row = ctx.store.getTask(ctx.key, id);
  if (row && row.state !== 'creating')
    return { outcome: 'nothing-to-do', message: `task ${id} had been made (${row.state})` };
  const steps = intentSteps(intent.op, ctx.lifecycle);
  const made = {
    worktree: (await listWorktrees(ctx.repo)).some((wt) => wt.path === wsPath),
    branch: steps.indexOf(intent.step) >= steps.indexOf('worktree-added'),
  };
  const undone = await rollback(ctx, id, branch, wsPath, made);
  const kept = ctx.store.getTask(ctx.key, id) !== null;
  return kept
    ? { outcome: 'failed', message: `could not undo it all: ${undone.join(', ')}` }
    : { outcome: 'rolled-back', message: `undone (${undone.join(', ')}); \`warren new\` can make it again` };
};

/** What the features keep beside a workspace (ports, layers, manifests) goes with the rolled-back row. */
async function afterRemoveSteps(ctx: ProjectContext, row: Task | null): Promise<void> {
  if (!row) return;
  for (const step of ctx.lifecycle.remove) await step.afterRemove?.(ctx, row).catch(() => undefined);
}
