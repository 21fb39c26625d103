import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { commitsNotOn } from '../git/history.js';
import { deleteBranch as deleteGitBranch, otherRefTips, revParse } from '../git/refs.js';
import { statusOf } from '../git/status.js';
import type { WorktreeEntry } from '../git/parse.js';
import { listWorktrees, removeWorktree, SPARE_LOCK_REASON, unlockWorktree } from '../git/worktrees.js';
import type { MountEntry } from '../system/mounts.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { lockTask, withRepoLock } from './locks.js';
import { forgetWorkspace, madeByWarren } from './ledger.js';
import { checkOwnership } from './ownership.js';
import { assertContained, presenceAt } from './paths.js';
import { requireTask } from './tasks.js';
import { validateTaskId } from './ids.js';
import { beginIntent, type Intent } from './intents.js';
import { archiveTask, snapshotTask, type Archive } from './archive.js';

export interface RemoveOptions {
  deleteBranch?: boolean;
  /**
   * Remove a task that has uncommitted or unlanded work, after saving all of it under
   * `refs/warren/archive/<ID>/<UTC time>` (src/workspace/archive.ts); the branch goes too.
   */
  discard?: boolean;
}

export interface RemoveResult {
  removed: true;
  id: string;
  branch: string;
  branchDeleted: boolean;
  /** Commits on the kept branch that the base does not have. */
  unlandedCommits: number;
  /** Set when the folder was already missing: only the records were removed. */
  folderMissing?: true;
  /** `--discard`: the archive ref everything was saved under. */
  archive?: string;
}

/** True when a feature (e.g. cow provisioning) owns this mount inside the task's workspace. */
export function isOwnedMount(ctx: ProjectContext, task: Task, mount: MountEntry): boolean {
  return ctx.lifecycle.remove.some((s) => s.ownsMount?.(ctx, task, mount) === true);
}

/**
 * Runs every feature's `release` in order (teardown, unmount) — also when a half-made task is
 * rolled back — and returns every problem they met. A step that throws is a problem too: the
 * next steps still run, so one broken teardown cannot keep a layer mounted. `inside`: all but
 * the step that holds the workspace's files (a cow checkout); `workspace`: only that one;
 * `all`: both, that one last.
 */
export async function releaseSteps(
  ctx: ProjectContext,
  task: Task,
  which: 'inside' | 'workspace' | 'all' = 'all',
): Promise<string[]> {
  const problems: string[] = [];
  const steps = ctx.lifecycle.remove;
  const ordered =
    which === 'all'
      ? [...steps.filter((s) => !s.holdsWorkspace), ...steps.filter((s) => s.holdsWorkspace)]
      : steps.filter((s) => (which === 'workspace') === (s.holdsWorkspace === true));
  for (const step of ordered) {
    if (!step.release) continue;
    try {
      problems.push(...(await step.release(ctx, task)));
    } catch (err) {
      problems.push(`${step.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

export async function isWorkLanded(ctx: ProjectContext, task: Task): Promise<boolean> {
  for (const step of ctx.lifecycle.remove) if (step.isLanded && (await step.isLanded(ctx, task))) return true;
  return false;
}

/**
 * `warren rm ID`. Gathers and checks everything first (ownership, mounts, uncommitted work,
 * unlanded commits), then removes, then verifies both that git forgot the worktree and that the
 * directory is gone from disk.
 */
export async function removeTask(
  ctx: ProjectContext,
  rawId: string,
  options: RemoveOptions = {},
): Promise<RemoveResult> {
  const id = validateTaskId(rawId);
  const lock = lockTask(ctx, id, `rm ${id}`);
  try {
    const task = requireTask(ctx, id);
    const presence = presenceAt(task.path);
    if (presence.kind === 'replaced') throw replacedError(task, presence.what);
    assertContained(ctx.root, task.path);
    if (task.state === 'remove_failed') return await retryLeftover(ctx, task, options);

    // Gather.
    const worktrees = await listWorktrees(ctx.repo);
    if (presence.kind === 'missing') return await forgetMissing(ctx, task, worktrees, options);
    const entry = await checkOwnership(ctx, task, worktrees);
    // A layer lost to a reboot is mounted again first, so the checks below see the workspace its user sees.
    for (const step of ctx.lifecycle.beforeRun) await step.run(ctx, task).catch(() => undefined);
    const foreignMounts = mountsUnder(readMounts(), task.path).filter((m) => !isOwnedMount(ctx, task, m));
    if (foreignMounts.length > 0) {
      throw new WarrenError(
        'WORKSPACE_MOUNTED',
        `${task.path} has ${foreignMounts.length} mount(s) inside it (${foreignMounts.map((m) => m.mountPoint).join(', ')}); git worktree remove would delete the mounted files. Nothing was removed.`,
        { hint: 'Unmount them (umount PATH) and run `warren rm` again.', details: { mounts: foreignMounts } },
      );
    }
    const dirty = await statusOf(task.path);
    if (dirty.length > 0 && !options.discard) {
      const shown = dirty.slice(0, 20).map((e) => `${e.code.trim() || '??'} ${e.path}`);
      throw new WarrenError(
        'WORKSPACE_DIRTY',
        `task ${id} has ${dirty.length} uncommitted change(s) that removing would lose: ${shown.join(', ')}${dirty.length > 20 ? ', …' : ''}. Nothing was removed.`,
        {
          hint: `Commit them (\`warren checkpoint ${id}\`) or discard them in ${task.path}, then run \`warren rm ${id}\` again; or \`warren rm ${id} --discard\` saves everything under refs/warren/archive/${id}/ and removes it.`,
          details: { changes: dirty },
        },
      );
    }
    const baseTip = (await revParse(ctx.repo, `refs/heads/${task.base}`)) ?? (await revParse(ctx.repo, task.base));
    const unlanded = await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : []);
    const landed = await isWorkLanded(ctx, task);
    const discard = options.discard === true;
    if (options.deleteBranch || discard) assertBranchNotCheckedOutElsewhere(task, worktrees);
    if (options.deleteBranch && !discard && !landed) await assertBranchLandedElsewhere(ctx, task);
    const tip = discard ? await revParse(ctx.repo, `refs/heads/${task.branch}`) : null;
    if (discard && !tip)
      throw new WarrenError(
        'OWNERSHIP_MISMATCH',
        `task ${id}'s branch ${task.branch} is missing; nothing was removed.`,
        { hint: 'See `warren scan`.' },
      );

    // Act. Every step is recorded: a warren killed half way is repaired by the next command.
    const deleteBranchToo = options.deleteBranch === true || discard;
    const intent = beginIntent(ctx, discard ? 'discard' : 'rm', id, {
      id,
      path: task.path,
      branch: task.branch,
      base: task.base,
      deleteBranch: deleteBranchToo,
      prevState: task.state,
      unlanded: unlanded.length,
    });
    ctx.store.transition(ctx.key, id, task.state, 'removing');
    intent.step('removing');
    const problems = await releaseSteps(ctx, task, 'inside');
    // Saved after teardown, before the workspace's own mount (a cow checkout) comes off: the
    // archive is the workspace as it is removed.
    let archive: Archive | null = null;
    if (discard && tip && problems.length === 0) {
      archive = await archiveTask(ctx, task, tip, await snapshotTask(ctx, task));
      intent.step('archived', { archive: archive.ref });
      recordArchived(ctx, task, archive, dirty.length, unlanded.length);
    }
    if (problems.length === 0) problems.push(...(await releaseSteps(ctx, task, 'workspace')));
    intent.step('released');
    const stillMounted = mountsUnder(readMounts(), task.path);
    if (problems.length > 0 || stillMounted.length > 0) {
      ctx.store.transition(ctx.key, id, 'removing', task.state);
      intent.done();
      const what = [...problems, ...stillMounted.map((m) => `${m.mountPoint} is still mounted`)];
      throw new WarrenError(
        'WORKSPACE_MOUNTED',
        `could not release what is inside ${task.path}: ${what.join('; ')}. Nothing was removed${archive ? ` (a copy of it was saved as ${archive.ref})` : ''}.`,
        {
          hint: 'Stop what uses it (fuser -m PATH), unmount it, and run `warren rm` again.',
          details: { problems: what },
        },
      );
    }
    let gitStderr = '';
    await withRepoLock(ctx, `worktree remove ${id}`, async () => {
      // A spare lock left by a gc that was killed mid-prune would make git refuse.
      if (entry.locked === SPARE_LOCK_REASON) await unlockWorktree(ctx.repo, task.path);
      // No --force: the worktree was proven clean above, and git re-checks it. --discard: everything in it was saved just now.
      gitStderr = (await removeWorktree(ctx.repo, task.path, discard)).stderr.trim();
    });

    // Verify both facts: git forgot it, and the disk is clear.
    const stillListed = (await listWorktrees(ctx.repo)).some((wt) => wt.path === task.path);
    if (stillListed) {
      ctx.store.transition(ctx.key, id, 'removing', task.state);
      intent.done();
      throw new WarrenError(
        'REMOVE_INCOMPLETE',
        `git refused to remove ${task.path}: ${gitStderr || 'unknown reason'}. The workspace is as it was.`,
        {
          hint: 'Fix what git names and run `warren rm` again.',
        },
      );
    }
    intent.step('worktree-removed');
    try {
      if (fs.existsSync(task.path)) clearLeftover(ctx, task, gitStderr);
    } catch (err) {
      intent.done(); // remove_failed is a recorded state of its own: `rm` or `gc` finishes it
      throw err;
    }

    const branchDeleted = deleteBranchToo && (await deleteBranch(ctx, task));
    intent.step('branch-deleted');
    const result = await finish(ctx, task, branchDeleted, unlanded.length, {
      intent,
      ...(archive ? { archive: archive.ref } : {}),
    });
    intent.done();
    return result;
  } finally {
    lock.release();
  }
}

async function finish(
  ctx: ProjectContext,
  task: Task,
  branchDeleted: boolean,
  unlandedCommits: number,
  options: { intent?: Intent; folderMissing?: boolean; archive?: string } = {},
): Promise<RemoveResult> {
  const { intent, folderMissing = false, archive } = options;
  for (const step of ctx.lifecycle.remove) await step.afterRemove?.(ctx, task);
  intent?.step('after-remove');
  forgetWorkspace(ctx, task.path);
  ctx.store.deleteTask(ctx.key, task.id);
  const what = folderMissing ? `forgot ${task.path} (its folder was already missing)` : `removed ${task.path}`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'task.removed',
    message: archive
      ? `discarded ${task.path} and branch ${task.branch}; everything is saved in ${archive}`
      : branchDeleted
        ? `${what} and deleted branch ${task.branch}`
        : `${what}; kept branch ${task.branch} (${unlandedCommits} commit(s) not on ${task.base})`,
    data: { branchDeleted, unlandedCommits, ...(folderMissing ? { folderMissing } : {}) },
  });
  return {
    removed: true,
    id: task.id,
    branch: task.branch,
    branchDeleted,
    unlandedCommits,
    ...(folderMissing ? { folderMissing } : {}),
    ...(archive ? { archive } : {}),
  };
}

/**
 * `rm` of a task whose folder is missing (deleted, or on a disk not mounted; `scan` lists it as
 * displaced). Nothing on disk can be deleted or lost here: what goes is git's record of the
 * path, which only this task's own `rm` ever prunes, and the row. The branch is kept unless
 * --delete-branch passes its usual checks; a folder that comes back later is left as it is
 * (`scan` then lists it as stranded, and `gc` never deletes a folder that holds anything).
 */
async function forgetMissing(
  ctx: ProjectContext,
  task: Task,
  worktrees: readonly WorktreeEntry[],
  options: RemoveOptions,
): Promise<RemoveResult> {
  const entry = worktrees.find((wt) => wt.path === task.path) ?? null;
  const discard = options.discard === true;
  const tip = await revParse(ctx.repo, `refs/heads/${task.branch}`);
  if ((options.deleteBranch || discard) && tip) assertBranchNotCheckedOutElsewhere(task, worktrees);
  if (options.deleteBranch && !discard && !(await isWorkLanded(ctx, task)))
    await assertBranchLandedElsewhere(ctx, task);
  const baseTip = (await revParse(ctx.repo, `refs/heads/${task.base}`)) ?? (await revParse(ctx.repo, task.base));
  const unlanded = await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : []);

  ctx.store.transition(ctx.key, task.id, task.state, 'removing');
  // Teardown cannot run without the folder (it is recorded as not run); nothing can be mounted inside a missing folder.
  await releaseSteps(ctx, task);
  let gitStderr = '';
  if (entry) {
    await withRepoLock(ctx, `worktree remove ${task.id}`, async () => {
      if (entry.locked === SPARE_LOCK_REASON) await unlockWorktree(ctx.repo, task.path);
      // With the folder gone, git only deletes its own record. A user's lock (a removable disk) makes git refuse.
      if (!fs.existsSync(task.path)) gitStderr = (await removeWorktree(ctx.repo, task.path)).stderr.trim();
    });
  }
  if ((await listWorktrees(ctx.repo)).some((wt) => wt.path === task.path)) {
    ctx.store.transition(ctx.key, task.id, 'removing', task.state);
    throw new WarrenError(
      'REMOVE_INCOMPLETE',
      `task ${task.id}'s folder ${task.path} is missing, and git kept its record of it: ${gitStderr || 'the folder came back meanwhile'}. The task is as it was.`,
      {
        hint: entry?.locked
          ? `git's record is locked ("${entry.locked}"): if the folder is gone for good, \`git worktree unlock ${task.path}\` and run \`warren rm ${task.id}\` again.`
          : `Run \`warren rm ${task.id}\` again.`,
      },
    );
  }
  // --discard: the folder is gone already; what is left to save is the branch.
  const archive = discard && tip ? await archiveTask(ctx, task, tip, null) : null;
  if (archive) recordArchived(ctx, task, archive, 0, unlanded.length);
  const branchDeleted = (options.deleteBranch === true || discard) && tip !== null && (await deleteBranch(ctx, task));
  return finish(ctx, task, branchDeleted, unlanded.length, {
    folderMissing: true,
    ...(archive ? { archive: archive.ref } : {}),
  });
}

/** The workspace path holds a symlink or a file: never followed, never deleted. */
function replacedError(task: Task, what: string): WarrenError {
  return new WarrenError(
    'PATH_ESCAPE',
    `task ${task.id}'s workspace ${task.path} was replaced by ${what}; warren neither follows nor deletes it. Nothing was changed: git's record and branch ${task.branch} are kept.`,
    {
      hint: `Put the workspace folder back at ${task.path} and run the command again. If it is gone for good, take away what is there now and run \`warren rm ${task.id}\`: it forgets the workspace and keeps the branch.`,
      details: { path: task.path, found: what },
    },
  );
}

function recordArchived(ctx: ProjectContext, task: Task, archive: Archive, changes: number, unlanded: number): void {
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'task.archived',
    message: `saved ${changes} uncommitted change(s) and ${unlanded} commit(s) not on ${task.base} as ${archive.ref}; \`warren restore ${task.id}\` brings them back`,
    data: { archive: archive.ref, commit: archive.commit, tip: archive.tip, changes, unlandedCommits: unlanded },
  });
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

/** git refuses to delete a branch another worktree has checked out: refused here, before anything is removed. */
function assertBranchNotCheckedOutElsewhere(task: Task, worktrees: readonly WorktreeEntry[]): void {
  const elsewhere = worktrees
    .filter((wt) => wt.path !== task.path && wt.branch === `refs/heads/${task.branch}`)
    .map((wt) => wt.path);
  if (elsewhere.length === 0) return;
  throw new WarrenError(
    'BRANCH_CHECKED_OUT',
    `branch ${task.branch} is also checked out in ${elsewhere.join(', ')}, so it cannot be deleted; nothing was removed.`,
    {
      hint: `Switch ${elsewhere.length === 1 ? 'that worktree' : 'those worktrees'} to another branch (\`git -C ${elsewhere[0] ?? ''} switch BRANCH\`), or run \`warren rm ${task.id}\` without --delete-branch to keep the branch.`,
      details: { branch: task.branch, worktrees: elsewhere },
    },
  );
}

export async function deleteBranch(ctx: ProjectContext, task: Task): Promise<boolean> {
  // -D after warren's own check: -d would only ask whether HEAD contains the branch.
  await withRepoLock(ctx, `branch delete ${task.branch}`, () => deleteGitBranch(ctx.repo, task.branch));
  return true;
}

/**
 * git deregistered the worktree but files stayed. The worktree was proven clean before git
 * removed it, so deleting what remains loses nothing: try (by lstat, never through a link or
 * a mount, and only a directory warren's ledger says it made), and if anything still will not
 * go, name it, keep the row as remove_failed and let `scan` find it.
 */
function clearLeftover(ctx: ProjectContext, task: Task, gitStderr: string): void {
  const owned = madeByWarren(ctx, task.path, [task]);
  const failures = owned ? removeTree(task.path) : [];
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
  if (task.state !== 'remove_failed') ctx.store.transition(ctx.key, task.id, 'removing', 'remove_failed');
  const first = failures[0];
  const cause = !owned
    ? 'the directory itself (warren has no record of making it, and deletes only what it made)'
    : first
      ? `${first.path} (${likelyCause(first.code)})`
      : 'unknown files';
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
  const worktrees = await listWorktrees(ctx.repo);
  const listed = worktrees.some((wt) => wt.path === task.path);
  if (listed) {
    throw new WarrenError(
      'OWNERSHIP_MISMATCH',
      `task ${task.id} is in state remove_failed but git lists ${task.path} again; nothing was changed.`,
      {
        hint: 'Run `warren scan` and inspect the workspace.',
      },
    );
  }
  if (mountsUnder(readMounts(), task.path).length > 0) {
    throw new WarrenError('WORKSPACE_MOUNTED', `${task.path} has a mount inside it; nothing was removed.`, {
      hint: 'Unmount it first.',
    });
  }
  const tip = await revParse(ctx.repo, `refs/heads/${task.branch}`);
  if ((options.deleteBranch || options.discard) && tip) assertBranchNotCheckedOutElsewhere(task, worktrees);
  if (options.deleteBranch && !options.discard && tip && !(await isWorkLanded(ctx, task)))
    await assertBranchLandedElsewhere(ctx, task);
  if (fs.existsSync(task.path)) clearLeftover(ctx, task, '');
  const baseTip = await revParse(ctx.repo, task.base);
  const unlanded = tip ? await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : []) : [];
  // git forgot the worktree before it failed (it was clean then): only the branch is left to save.
  const archive = options.discard && tip ? await archiveTask(ctx, task, tip, null) : null;
  if (archive) recordArchived(ctx, task, archive, 0, unlanded.length);
  const branchDeleted =
    (options.deleteBranch === true || options.discard === true) && tip !== null && (await deleteBranch(ctx, task));
  return finish(ctx, task, branchDeleted, unlanded.length, archive ? { archive: archive.ref } : {});
}
