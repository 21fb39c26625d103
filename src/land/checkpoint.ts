import { WarrenError } from '../errors.js';
import {
  commitStaged,
  hasStagedChanges,
  headOf,
  stageAll,
  stagedNames,
  unstage,
  unstageAll,
} from '../git/index-ops.js';
import { checkIgnored } from '../git/status.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import type { z } from 'zod';
import { runOperation, type Operation, type Schema } from '../workspace/operation.js';
import { configuredHooksPath, pinned } from '../workspace/pinned.js';
import type { Worktree } from '../git/worktree.js';
import { withTaskLock } from '../workspace/locks.js';
import { checkHooks, type Drift, type Fingerprint } from './fingerprint.js';
import { prepareCommitHooks, runHooksBeforeCommit, runPostCommit, type HookRun } from './commit-hooks.js';
import type { GitResult } from '../git/exec.js';
import { recordDrift } from './record.js';
import { excludePathspecs, isProvisioned, provisionedPaths } from './provisioned.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
import { loadTask } from './task.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { commitRemote } from '../run/ssh/remote-task.js';

export interface CheckpointOptions {
  message?: string;
  acceptHooks?: boolean;
  /** Skip the pre-commit and commit-msg hooks (as `git commit --no-verify`): for hooks that cannot run in a worktree or in the sandbox. */
  noVerify?: boolean;
}

export interface CheckpointResult {
  /** The new commit, or null when there was nothing to commit. */
  commit: string | null;
  /** The branch tip after the call. */
  head: string;
  branch: string;
  /** Set when nothing was committed. */
  nothingToCommit: boolean;
  /** Provisioned paths someone had staged by hand, taken back out of the index. */
  unstaged: string[];
  /** Shared-git changes that were not refused (also recorded as events). */
  warnings: string[];
  /** The commit hooks it ran (each a run of the task, in its boundary) and how long each took. */
  hooks: HookRun[];
}

/** "pre-commit 9.8 s, commit-msg 0.1 s": what a checkpoint's time went to, beside its result. */
export function hookTimes(hooks: readonly HookRun[]): string {
  return hooks.map((h) => `${h.hook} ${(h.ms / 1000).toFixed(1)} s`).join(', ');
}

/**
 * `warren checkpoint ID`: everything in the workspace, committed on its branch, except warren's
 * own provisioned paths. Runs in the workspace's own index; commits in different worktrees do
 * not share a lock, so checkpoints of different tasks run in parallel.
 */
export async function checkpointTask(
  ctx: ProjectContext,
  rawId: string,
  options: CheckpointOptions = {},
): Promise<CheckpointResult> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `checkpoint ${id}`, async () => {
    const task = loadTask(ctx, id);
    // A task on another machine: committed there (its own checkpoint, its hooks in its boundary), then fetched back and checked.
    if (remoteHostName(task) !== null) {
      const committed = await commitRemote(ctx, task, options);
      return {
        commit: committed.commit,
        head: committed.head,
        branch: task.branch,
        nothingToCommit: committed.commit === null,
        unstaged: [],
        warnings: [],
        hooks: [],
      };
    }
    // On its branch, nothing half done — except a merge: this commit concludes it (the documented
    // way to bring the base in after a conflict).
    await assertWorkspaceState(ctx.repo, task, { allow: ['merge'] });
    const wt = await pinned(ctx, task.path);
    const { current, drift } = await checkHooks(
      task,
      wt,
      await configuredHooksPath(ctx),
      options.acceptHooks === true,
      'the checkpoint',
    );
    const provisioned = provisionedPaths(ctx, task);

    // Only paths git would otherwise stage need an exclude: naming an ignored path in a pathspec
    // makes `git add` fail ("paths are ignored") after it has staged the rest.
    const excluded = excludePathspecs(await notIgnored(wt, provisioned));
    const message = options.message?.trim() || `checkpoint: ${id} ${new Date().toISOString()}`;
    const live: CheckpointLive = {
      excluded,
      provisioned,
      fingerprint: { current, drift },
      acceptHooks: options.acceptHooks === true,
      noVerify: options.noVerify === true,
      unstaged: [],
      warnings: [],
      refused: false,
      hooks: [],
      wt,
    };
    const head = await headOf(wt);
    const done = await runOperation(
      ctx,
      CHECKPOINT,
      id,
      { id, path: task.path, branch: task.branch, head, message },
      live,
    );
    const commit = done.commit ?? null;
    return {
      commit,
      head: commit ?? head,
      branch: task.branch,
      nothingToCommit: commit === null,
      unstaged: live.unstaged,
      warnings: live.warnings,
      hooks: live.hooks,
    };
  });
}

/**
 * Takes provisioned paths staged by hand (or by a hook) back out of the index, with an event.
 * Returns what stays staged when it took nothing out (null when it did: the index changed).
 */
async function unstageProvisioned(ctx: ProjectContext, id: string, live: CheckpointLive): Promise<string[] | null> {
  const staged = await stagedNames(live.wt);
  const found = live.provisioned.filter((p) => staged.some((s) => isProvisioned(s, [p])));
  if (found.length === 0) return staged;
  // reset, not rm --cached: a provisioned path that is also tracked goes back to HEAD's version.
  await unstage(live.wt, found);
  live.unstaged.push(...found.filter((p) => !live.unstaged.includes(p)));
  ctx.store.addEvent({
    project: ctx.key,
    taskId: id,
    kind: 'checkpoint.unstaged_provisioned',
    level: 'warn',
    message: `took provisioned path(s) ${found.join(', ')} out of the index; warren's own paths are never committed`,
    data: { paths: found },
  });
  return null;
}

/** The paths among `paths` that git does not ignore in `cwd` (e.g. a `share` symlink under a `dir/` pattern). */
async function notIgnored(cwd: Worktree, paths: readonly string[]): Promise<string[]> {
  const ignored = await checkIgnored(cwd, paths);
  return paths.filter((p) => !ignored.has(p));
}

// ─── The operation ──────────────────────────────────────────────────────────────────────────

const payload = (z: Schema) =>
  z.object({
    id: z.string(),
    path: z.string(),
    branch: z.string(),
    /** The branch tip before: a commit is known made by HEAD having moved. */
    head: z.string(),
    message: z.string(),
    nothing: z.boolean().optional(),
    commit: z.string().optional(),
  });

type CheckpointData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    checkpoint: CheckpointData;
  }
}

export interface CheckpointLive {
  /** Pathspecs that keep warren's provisioned paths out of `git add`. */
  excluded: string[];
  provisioned: string[];
  fingerprint: { current: Fingerprint; drift: Drift | null };
  acceptHooks: boolean;
  noVerify: boolean;
  /** Provisioned paths someone had staged by hand, taken back out. */
  unstaged: string[];
  warnings: string[];
  /** A hook (or git) refused the commit: what was staged stays staged, as `git commit` leaves it. */
  refused: boolean;
  /** The hooks run, with their times. */
  hooks: HookRun[];
  /** The workspace, pinned: git there is given its directories and runs no hook; `hooksDir` holds the hooks checkpoint runs. */
  wt: Worktree;
}

/**
 * `checkpoint`: stage everything but warren's own paths, commit, record. Killed after staging,
 * the index goes back to HEAD (every file is untouched) and `checkpoint` can run again; once
 * HEAD moved, the commit is on the branch and only its event is recorded.
 */
export const CHECKPOINT: Operation<'checkpoint', 'staged' | 'committed' | 'recorded', CheckpointLive> = {
  op: 'checkpoint',
  payload,
  steps: () => [
    {
      name: 'staged',
      async run({ ctx, data, live }) {
        await stageAll(live.wt, live.excluded);
        // A provisioned path staged earlier by hand (`git add -f node_modules`) is taken back out.
        const staged = await unstageProvisioned(ctx, data.id, live);
        const task = loadTask(ctx, data.id);
        const { current, drift } = live.fingerprint;
        live.warnings.push(...recordDrift(ctx, task, 'checkpoint', current, drift, live.acceptHooks));
        // The names just read say whether anything is staged; after an unstage, git is asked again.
        return { nothing: staged ? staged.length === 0 : !(await hasStagedChanges(live.wt)) };
      },
      async undo({ ctx, data, live, finished }) {
        // Cut off inside `git add`, or refused by a hook: the index is as git left it.
        if (!finished || live?.refused) return;
        await unstageAll(live?.wt ?? (await pinned(ctx, data.path)));
        return `what it had staged in ${data.path} was unstaged (every file is as it was)`;
      },
      recover: 'back',
    },
    {
      name: 'committed',
      async run({ ctx, data, live }) {
        if (data.nothing) return;
        const hooks = await prepareCommitHooks(ctx, loadTask(ctx, data.id), live.wt);
        let result: GitResult;
        try {
          // The hooks run inside the task's boundary; the commit is then made here, with git's own hooks off.
          const message = await runHooksBeforeCommit(hooks, data.message, live.noVerify);
          await unstageProvisioned(ctx, data.id, live); // a pre-commit may have staged one
          result = await commitStaged(live.wt, message, hooks.author);
        } catch (err) {
          // Refused by a hook, or a link planted in the git directory meanwhile: what is staged stays staged.
          if (!(err instanceof WarrenError) || (err.code !== 'COMMAND_FAILED' && err.code !== 'WORKSPACE_TAMPERED')) {
            throw err;
          }
          live.refused = true;
          live.hooks = hooks.ran;
          if (err.code === 'COMMAND_FAILED') throw err;
          throw new WarrenError(
            err.code,
            `${err.message} (The checkpoint had staged the changes before its hooks ran: they stay staged, and nothing was committed.)`,
            { ...(err.hint ? { hint: err.hint } : {}), details: err.details },
          );
        }
        if (result.exitCode !== 0) {
          live.refused = true;
          throw new WarrenError(
            'COMMAND_FAILED',
            `git commit in ${data.path} failed: ${result.stderr.trim() || `exit ${result.exitCode}`}. The changes are staged in the workspace; no file was lost.`,
            {
              hint: `Fix what git reports, then run \`warren checkpoint ${data.id}\` again.`,
              details: { stderr: result.stderr },
            },
          );
        }
        const postCommit = await runPostCommit(hooks);
        if (postCommit) live.warnings.push(postCommit);
        live.hooks = hooks.ran;
        if (live.noVerify) {
          const warning = `the pre-commit and commit-msg hooks were skipped (--no-verify) for this checkpoint of ${data.id}`;
          ctx.store.addEvent({
            project: ctx.key,
            taskId: data.id,
            kind: 'checkpoint.no_verify',
            level: 'warn',
            message: warning,
            data: {},
          });
          live.warnings.push(warning);
        }
        return { commit: await headOf(live.wt) };
      },
      recover: {
        decide: async ({ ctx, data }) =>
          (await headOf(await pinned(ctx, data.path))) !== data.head ? 'forward' : 'back',
      },
    },
    {
      name: 'recorded',
      async run({ ctx, data, live }) {
        if (!data.commit) {
          ctx.store.addEvent({
            project: ctx.key,
            taskId: data.id,
            kind: 'checkpoint.nothing',
            message: `nothing to commit; ${data.branch} stays at ${data.head.slice(0, 12)}`,
            data: { head: data.head },
          });
          return;
        }
        ctx.store.addEvent({
          project: ctx.key,
          taskId: data.id,
          kind: 'checkpoint',
          message: `committed ${data.commit.slice(0, 12)} on ${data.branch}: ${data.message.split('\n')[0] ?? ''}${live?.hooks.length ? ` (hooks: ${hookTimes(live.hooks)})` : ''}`,
          data: { commit: data.commit, ...(live?.hooks.length ? { hooks: live.hooks } : {}) },
        });
      },
      recover: 'forward',
      async finish({ ctx, data }) {
        const commit = await headOf(await pinned(ctx, data.path));
        if (commit === data.head) return;
        ctx.store.addEvent({
          project: ctx.key,
          taskId: data.id,
          kind: 'checkpoint',
          message: `committed ${commit.slice(0, 12)} on ${data.branch} (recorded after an interrupted checkpoint)`,
          data: { commit },
        });
        return `the commit ${commit.slice(0, 12)} is on ${data.branch}`;
      },
    },
  ],
  repaired: (outcome, data, did) =>
    outcome === 'rolled-back'
      ? `${did.join('; ')}; \`warren checkpoint ${data.id}\` can run again`
      : outcome === 'nothing-to-do'
        ? 'it had changed nothing'
        : did.join('; '),
};
