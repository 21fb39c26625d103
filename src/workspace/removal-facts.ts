import { WarrenError } from '../errors.js';
import { commitsNotOn } from '../git/history.js';
import type { StatusEntry, WorktreeEntry } from '../git/parse.js';
import { otherRefTips, revParse, revParseMany } from '../git/refs.js';
import { statusOf } from '../git/status.js';
import { listWorktrees } from '../git/worktrees.js';
import type { Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import type { ProjectContext } from './context.js';
import { checkOwnership } from './ownership.js';
import { assertContained, presenceAt } from './paths.js';
import { isOwnedMount, isWorkLanded } from './release.js';
import { pinned } from './pinned.js';

/**
 * What `rm` reads before it changes anything, and its guards on what it read: every refusal here
 * leaves the task, its workspace, its branch and git's records as they were.
 */

export interface RemoveOptions {
  deleteBranch?: boolean;
  /**
   * Remove a task that has uncommitted or unlanded work, after saving all of it under
   * `refs/warren/archive/<ID>/<UTC time>` (src/workspace/archive.ts); the branch goes too.
   */
  discard?: boolean;
}

/** Everything removal's guards need, read before anything changes. */
export interface RemovalFacts {
  task: Task;
  /** whole: the workspace is there; missing: its folder is gone; leftover: git forgot it, files stayed (`remove_failed`). */
  folder: 'whole' | 'missing' | 'leftover';
  worktrees: readonly WorktreeEntry[];
  /** git's record of the workspace, when it has one. */
  entry: WorktreeEntry | null;
  /** The branch's tip, or null when the branch is gone. */
  tip: string | null;
  /** Commits on the branch that its base does not have. */
  unlanded: number;
  /** The work is on the base although not by ancestry (squash-landed). */
  landed: boolean;
  /** Uncommitted changes (a whole folder only). */
  dirty: readonly StatusEntry[];
  /** Mounts inside the folder that no feature owns (a whole folder), or any mount (leftover). */
  mounts: readonly string[];
}

export async function gatherRemoval(ctx: ProjectContext, task: Task): Promise<RemovalFacts> {
  const presence = presenceAt(task.path);
  if (presence.kind === 'replaced') throw replacedError(task, presence.what);
  assertContained(ctx.root, task.path);
  const worktrees = await listWorktrees(ctx.repo);
  const folder = task.state === 'remove_failed' ? 'leftover' : presence.kind === 'missing' ? 'missing' : 'whole';
  let entry = worktrees.find((wt) => wt.path === task.path) ?? null;
  let dirty: StatusEntry[] = [];
  let mounts: string[] = [];
  if (folder === 'whole') {
    entry = await checkOwnership(ctx, task, worktrees);
    // A layer lost to a reboot is mounted again first, so the checks see the workspace its user sees.
    for (const step of ctx.lifecycle.beforeRun) await step.run(ctx, task).catch(() => undefined);
    mounts = mountsUnder(readMounts(), task.path)
      .filter((m) => !isOwnedMount(ctx, task, m))
      .map((m) => m.mountPoint);
    dirty = await statusOf(await pinned(ctx, task.path));
  } else if (folder === 'leftover') {
    mounts = mountsUnder(readMounts(), task.path).map((m) => m.mountPoint);
  }
  const [tip, baseBranchTip] = await revParseMany(ctx.repo, [`refs/heads/${task.branch}`, `refs/heads/${task.base}`]);
  const baseTip = baseBranchTip ?? (await revParse(ctx.repo, task.base));
  const unlanded = tip
    ? (await commitsNotOn(ctx.repo, `refs/heads/${task.branch}`, baseTip ? [baseTip] : [])).length
    : 0;
  const landed = tip ? await isWorkLanded(ctx, task) : false;
  return { task, folder, worktrees, entry, tip, unlanded, landed, dirty, mounts };
}

/** Removal's guards on the facts alone. Pure. */
export function checkRemoval(f: RemovalFacts, options: RemoveOptions): void {
  const { task } = f;
  const discard = options.discard === true;
  if (f.folder === 'leftover' && f.entry) {
    throw new WarrenError(
      'OWNERSHIP_MISMATCH',
      `task ${task.id} is in state remove_failed but git lists ${task.path} again; nothing was changed.`,
      {
        hint: 'Run `warren scan` and inspect the workspace.',
      },
    );
  }
  if (f.mounts.length > 0) {
    throw new WarrenError(
      'WORKSPACE_MOUNTED',
      `${task.path} has ${f.mounts.length} mount(s) inside it (${f.mounts.join(', ')}); git worktree remove would delete the mounted files. Nothing was removed.`,
      { hint: 'Unmount them (umount PATH) and run `warren rm` again.', details: { mounts: f.mounts } },
    );
  }
  if (f.dirty.length > 0 && !discard) {
    const shown = f.dirty.slice(0, 20).map((e) => `${e.code.trim() || '??'} ${e.path}`);
    throw new WarrenError(
      'WORKSPACE_DIRTY',
      `task ${task.id} has ${f.dirty.length} uncommitted change(s) that removing would lose: ${shown.join(', ')}${f.dirty.length > 20 ? ', …' : ''}. Nothing was removed.`,
      {
        hint: `Commit them (\`warren checkpoint ${task.id}\`) or discard them in ${task.path}, then run \`warren rm ${task.id}\` again; or \`warren rm ${task.id} --discard\` saves everything under refs/warren/archive/${task.id}/ and removes it.`,
        details: { changes: f.dirty },
      },
    );
  }
  if ((options.deleteBranch || discard) && f.tip) {
    // git refuses to delete a branch another worktree has checked out: refused here, before anything is removed.
    const elsewhere = f.worktrees
      .filter((wt) => wt.path !== task.path && wt.branch === `refs/heads/${task.branch}`)
      .map((wt) => wt.path);
    if (elsewhere.length > 0) {
      throw new WarrenError(
        'BRANCH_CHECKED_OUT',
        `branch ${task.branch} is also checked out in ${elsewhere.join(', ')}, so it cannot be deleted; nothing was removed.`,
        {
          hint: `Switch ${elsewhere.length === 1 ? 'that worktree' : 'those worktrees'} to another branch (\`git -C ${elsewhere[0] ?? ''} switch BRANCH\`), or run \`warren rm ${task.id}\` without --delete-branch to keep the branch.`,
          details: { branch: task.branch, worktrees: elsewhere },
        },
      );
    }
  }
  if (discard && f.folder === 'whole' && !f.tip) {
    throw new WarrenError(
      'OWNERSHIP_MISMATCH',
      `task ${task.id}'s branch ${task.branch} is missing; nothing was removed.`,
      {
        hint: 'See `warren scan`.',
      },
    );
  }
}

/** `--delete-branch` without `--discard` deletes only a branch whose commits are on some other ref (or landed by squash). */
export async function checkBranchLanded(ctx: ProjectContext, f: RemovalFacts, options: RemoveOptions): Promise<void> {
  if (!options.deleteBranch || options.discard || f.landed || !f.tip) return;
  const { task } = f;
  const onlyHere = await commitsNotOn(
    ctx.repo,
    `refs/heads/${task.branch}`,
    await otherRefTips(ctx.repo, [`refs/heads/${task.branch}`]),
  );
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
