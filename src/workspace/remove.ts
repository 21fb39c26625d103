import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { git } from '../git/exec.js';
import { commitsNotOn, listWorktrees, otherRefTips, revParse, statusOf } from '../git/repo.js';
import type { MountEntry } from '../system/mounts.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { validateTaskId } from './ids.js';
import { lockTask, withRepoLock } from './locks.js';
import { removeMeta } from './meta.js';
import { checkOwnership } from './ownership.js';
import { assertContained } from './paths.js';

export interface RemoveOptions {
  deleteBranch?: boolean;
}

export interface RemoveResult {
  removed: true;
  id: string;
  branch: string;
  branchDeleted: boolean;
  /** Commits on the kept branch that the base does not have. */
  unlandedCommits: number;
}

/** What later stages plug into removal: mounts they own, teardown, resources to release. */
export interface RemoveHooks {
  /** True when this mount inside the workspace is warren's own (unmounted by `release`). */
  ownsMount?(ctx: ProjectContext, task: Task, mount: MountEntry): boolean;
  /** After every guard passed, before git removes the worktree: teardown, unmount. */
  release?(ctx: ProjectContext, task: Task): Promise<void>;
  /** After the worktree and directory are gone: ports, snapshots. */
  afterRemove?(ctx: ProjectContext, task: Task): Promise<void>;
  /** True when the task's work is on the base although not by ancestry (squash-landed). */
  isLanded?(ctx: ProjectContext, task: Task): Promise<boolean>;
}

const hooks: RemoveHooks[] = [];
export function addRemoveHooks(h: RemoveHooks): void {
  hooks.push(h);
}

/** True when a later stage (e.g. cow provisioning) owns this mount inside the task's workspace. */
export function isOwnedMount(ctx: ProjectContext, task: Task, mount: MountEntry): boolean {
  return hooks.some((h) => h.ownsMount?.(ctx, task, mount) === true);
}

/** Runs every `release` hook (unmount, unlink) — also when a half-made task is rolled back. */
export async function runReleaseHooks(ctx: ProjectContext, task: Task): Promise<void> {
  for (const h of hooks) if (h.release) await h.release(ctx, task);
}

export async function isWorkLanded(ctx: ProjectContext, task: Task): Promise<boolean> {
  for (const h of hooks) if (h.isLanded && (await h.isLanded(ctx, task))) return true;
  return false;
}

/**
 * `warren rm ID`. Gathers and checks everything first (ownership, mounts, uncommitted work,
 * unlanded commits), then removes, then verifies both that git forgot the worktree and that the
 * directory is gone from disk.
 */
export async function removeTask(ctx: ProjectContext, rawId: string, options: RemoveOptions = {}): Promise<RemoveResult> {
  const id = validateTaskId(rawId);
  const lock = lockTask(ctx, id, `rm ${id}`);
  try {
    const task = ctx.store.getTask(ctx.key, id);
    if (!task) {
      throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was changed.`, { hint: 'See `warren list`.' });
    }
    assertContained(ctx.root, task.path);
    if (task.state === 'remove_failed') return await retryLeftover(ctx, task, options);

    // Gather.
    const worktrees = await listWorktrees(ctx.repo);
    const dirExists = fs.existsSync(task.path);
    if (!dirExists) {
      throw new WarrenError('OWNERSHIP_MISMATCH', `task ${id}'s workspace ${task.path} is missing from disk; nothing was changed.`, {
        hint: 'Run `warren scan` (it reports it as vanished) and `warren gc` to clear the record.',
      });
    }
    checkOwnership(ctx, task, worktrees);
    const foreignMounts = mountsUnder(readMounts(), task.path).filter((m) => !hooks.some((h) => h.ownsMount?.(ctx, task, m)));
    if (foreignMounts.length > 0) {
      throw new WarrenError(
        'WORKSPACE_MOUNTED',
        `${task.path} has ${foreignMounts.length} mount(s) inside it (${foreignMounts.map((m) => m.mountPoint).join(', ')}); git worktree remove would delete the mounted files. Nothing was removed.`,
        { hint: 'Unmount them (umount PATH) and run `warren rm` again.', details: { mounts: foreignMounts } },
      );
    }
    const dirty = await statusOf(task.path);
    if (dirty.length > 0) {
      const shown = dirty.slice(0, 20).map((e) => `${e.code.trim() || '??'} ${e.path}`);
      throw new WarrenError(
        'WORKSPACE_DIRTY',
        `task ${id} has ${dirty.length} uncommitted change(s) that removing would lose: ${shown.join(', ')}${dirty.length > 20 ? ', …' : ''}. Nothing was removed.`,
        {
          hint: `Commit them (\`warren checkpoint ${id}\`) or discard them in ${task.path}, then run \`warren rm ${id}\` again.`,
          details: { changes: dirty },
        },
      );
    }
    const baseTip = (await revParse(ctx.repo, `refs/heads/${task.base}`)) ?? (await revParse(ctx.repo, task.base));
    const unlanded = await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : []);
    const landed = await isWorkLanded(ctx, task);
    if (options.deleteBranch && !landed) await assertBranchLandedElsewhere(ctx, task);

    // Act.
    ctx.store.setState(ctx.key, id, 'removing');
    try {
      await runReleaseHooks(ctx, task);
    } catch (err) {
      ctx.store.setState(ctx.key, id, task.state);
      throw err;
    }
    const stillMounted = mountsUnder(readMounts(), task.path);
    if (stillMounted.length > 0) {
      ctx.store.setState(ctx.key, id, task.state);
      throw new WarrenError('WORKSPACE_MOUNTED', `${stillMounted.map((m) => m.mountPoint).join(', ')} is still mounted inside ${task.path}; nothing was removed.`, {
        hint: 'Unmount it and run `warren rm` again.',
      });
    }
    let gitStderr = '';
    await withRepoLock(ctx, `worktree remove ${id}`, async () => {
      // No --force: the worktree was proven clean above, and git re-checks it.
      const result = await git(['worktree', 'remove', '--', task.path], { cwd: ctx.repo.root, allowFailure: true });
      gitStderr = result.stderr.trim();
    });

    // Verify both facts: git forgot it, and the disk is clear.
    const stillListed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === task.path);
    if (stillListed) {
      ctx.store.setState(ctx.key, id, task.state);
      throw new WarrenError('REMOVE_INCOMPLETE', `git refused to remove ${task.path}: ${gitStderr || 'unknown reason'}. The workspace is as it was.`, {
        hint: 'Fix what git names and run `warren rm` again.',
      });
    }
    if (fs.existsSync(task.path)) clearLeftover(ctx, task, gitStderr);

    const branchDeleted = options.deleteBranch === true && (await deleteBranch(ctx, task));
    return finish(ctx, task, branchDeleted, unlanded.length);
  } finally {
    lock.release();
  }
}

async function finish(ctx: ProjectContext, task: Task, branchDeleted: boolean, unlandedCommits: number): Promise<RemoveResult> {
  for (const h of hooks) if (h.afterRemove) await h.afterRemove(ctx, task);
  removeMeta(task.path);
  ctx.store.deleteTask(ctx.key, task.id);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'task.removed',
    message: branchDeleted
      ? `removed ${task.path} and deleted branch ${task.branch}`
      : `removed ${task.path}; kept branch ${task.branch} (${unlandedCommits} commit(s) not on ${task.base})`,
    data: { branchDeleted, unlandedCommits },
  });
  return { removed: true, id: task.id, branch: task.branch, branchDeleted, unlandedCommits };
}

async function assertBranchLandedElsewhere(ctx: ProjectContext, task: Task): Promise<void> {
  const elsewhere = await otherRefTips(ctx.repo, [`refs/heads/${task.branch}`]);
  const onlyHere = await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, elsewhere);
  if (onlyHere.length === 0) return;
  throw new WarrenError(
    'BRANCH_UNLANDED',
    `branch ${task.branch} holds ${onlyHere.length} commit(s) that are on no other branch or ref: ${onlyHere
      .slice(0, 10)
      .map((c) => `${c.sha.slice(0, 12)} ${c.subject}`)
      .join('; ')}. Nothing was removed.`,
    {
      hint: `Land the work (\`warren land ${task.id}\`), or run \`warren rm ${task.id}\` without --delete-branch to keep the branch.`,
      details: { commits: onlyHere },
    },
  );
}

async function deleteBranch(ctx: ProjectContext, task: Task): Promise<boolean> {
  await withRepoLock(ctx, `branch delete ${task.branch}`, async () => {
    // -D after warren's own check: -d would only ask whether HEAD contains the branch.
    await git(['branch', '-D', '--', task.branch], { cwd: ctx.repo.root });
  });
  return true;
}

/**
 * git deregistered the worktree but files stayed. The worktree was proven clean before git
 * removed it, so deleting what remains loses nothing: try (by lstat, never through a link or
 * a mount), and if anything still will not go, name it, keep the row as remove_failed and
 * let `scan` find it.
 */
function clearLeftover(ctx: ProjectContext, task: Task, gitStderr: string): void {
  const failures = removeTree(task.path);
  if (!fs.existsSync(task.path)) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'task.leftover_removed',
      level: 'warn',
      message: `git left files in ${task.path} after removing the worktree; warren deleted them`,
      data: { gitStderr },
    });
    return;
  }
  ctx.store.setState(ctx.key, task.id, 'remove_failed');
  const first = failures[0];
  const cause = first ? `${first.path} (${likelyCause(first.code)})` : 'unknown files';
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'task.remove_failed',
    level: 'error',
    message: `git deregistered ${task.path} but the directory is still on disk: ${cause}`,
    data: { path: task.path, failures, gitStderr },
  });
  throw new WarrenError(
    'REMOVE_INCOMPLETE',
    `git deregistered the worktree but ${task.path} is still on disk: could not delete ${cause}. The task is kept in state remove_failed; its branch ${task.branch} is untouched and no committed work was lost.`,
    {
      hint: `Fix the cause (e.g. chattr -i FILE, or delete as the owning user), then run \`warren rm ${task.id}\` again or \`warren gc\`.`,
      details: { path: task.path, failures },
    },
  );
}

/** `rm` of a remove_failed task: git already forgot it; clear what is left on disk. */
async function retryLeftover(ctx: ProjectContext, task: Task, options: RemoveOptions): Promise<RemoveResult> {
  const listed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === task.path);
  if (listed) {
    throw new WarrenError('OWNERSHIP_MISMATCH', `task ${task.id} is in state remove_failed but git lists ${task.path} again; nothing was changed.`, {
      hint: 'Run `warren scan` and inspect the workspace.',
    });
  }
  if (mountsUnder(readMounts(), task.path).length > 0) {
    throw new WarrenError('WORKSPACE_MOUNTED', `${task.path} has a mount inside it; nothing was removed.`, { hint: 'Unmount it first.' });
  }
  const branchAlive = (await revParse(ctx.repo, `refs/heads/${task.branch}`)) !== null;
  if (options.deleteBranch && branchAlive && !(await isWorkLanded(ctx, task))) await assertBranchLandedElsewhere(ctx, task);
  if (fs.existsSync(task.path)) clearLeftover(ctx, task, '');
  const branchDeleted = options.deleteBranch === true && branchAlive && (await deleteBranch(ctx, task));
  const baseTip = await revParse(ctx.repo, task.base);
  const unlanded = branchAlive ? await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : []) : [];
  return finish(ctx, task, branchDeleted, unlanded.length);
}
