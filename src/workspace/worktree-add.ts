import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { classifyGitStderr, isTransientGitFailure } from '../git/errors.js';
import { checkoutEmptyWorktree, indexEntryCount } from '../git/index-ops.js';
import { addEmptyWorktree } from '../git/snapshot.js';
import { branchExists, deleteBranchIfExists } from '../git/refs.js';
import { addWorktree, listWorktrees, removeWorktree } from '../git/worktrees.js';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from './context.js';
import { type LockTiming, withRepoLock } from './locks.js';
import { mainHooksDir, pinned } from './pinned.js';

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
 * repository, or when something waits for the records (`recorded`: a container made with the
 * workspace and its git directory bound), only the records are made under the lock
 * (`--no-checkout`); `recorded` is then called and the files are written outside the lock —
 * each worktree has its own index, so checkouts need not take turns. No git hook runs
 * (post-checkout would run on the host, in the new workspace): see `postCheckoutHook`.
 */
export async function addTaskWorktree(
  ctx: ProjectContext,
  branch: string,
  wsPath: string,
  baseCommit: string,
  made: { worktree: boolean; branch: boolean },
  timing: LockTiming,
  recorded: (() => void) | null = null,
): Promise<void> {
  const outside =
    recorded !== null ||
    (indexEntryCount(path.join(ctx.repo.commonDir, 'index')) ?? 0) >= CHECKOUT_OUTSIDE_LOCK_MIN_FILES;
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
  const worktree = await pinned(ctx, wsPath);
  recorded?.();
  const result = await checkoutEmptyWorktree(worktree);
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

/**
 * The main checkout's post-checkout hook when it would run (a file, executable), else null. `git
 * worktree add` would run it in the new workspace, on the host, as the user; warren's makes the
 * worktree with hooks off (src/git/worktrees.ts), and `new` says that it did not run.
 */
async function postCheckoutHook(ctx: ProjectContext): Promise<string | null> {
  const hook = path.join(await mainHooksDir(ctx), 'post-checkout');
  try {
    fs.accessSync(hook, fs.constants.X_OK);
    return fs.statSync(hook).isFile() ? hook : null;
  } catch {
    return null;
  }
}

/** Says, once the workspace is there, that its post-checkout hook (if it has one) did not run. */
export async function reportPostCheckoutNotRun(ctx: ProjectContext, taskId: string, wsPath: string): Promise<void> {
  const hook = await postCheckoutHook(ctx);
  if (!hook) return;
  ctx.store.addEvent({
    project: ctx.key,
    taskId,
    kind: 'task.hook_not_run',
    level: 'warn',
    message: `the post-checkout hook ${hook} did not run in ${wsPath}: warren runs no git hook in a workspace (it would run on the host, as you); what it prepares belongs in warren.yaml's setup:, which runs in the task's sandbox`,
    data: { hook },
  });
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
