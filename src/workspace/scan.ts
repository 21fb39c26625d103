import fs from 'node:fs';
import path from 'node:path';
import type { WorktreeEntry } from '../git/parse.js';
import { branchExists } from '../git/refs.js';
import { listWorktrees } from '../git/worktrees.js';
import { readMounts, type MountEntry } from '../system/mounts.js';
import type { Task } from '../state/types.js';
import { isHolderAlive, readHolder } from '../util/lockfile.js';
import type { ProjectContext } from './context.js';
import { taskLockPath } from './locks.js';
import { madeByWarren } from './ledger.js';
import { isMetaFile } from './meta.js';
import { isOwnedMount } from './remove.js';
import { isStrictlyInside } from './paths.js';

export const STRAY_KINDS = ['vanished', 'stranded', 'unclaimed', 'prunable', 'mounted', 'orphan_branch', 'foreign'] as const;
export type StrayKind = (typeof STRAY_KINDS)[number];

export interface Stray {
  kind: StrayKind;
  path?: string;
  id?: string;
  branch?: string;
  /** Why it is a stray, in words. */
  reason: string;
}

export interface ScanInput {
  root: string;
  tasks: readonly Task[];
  worktrees: readonly WorktreeEntry[];
  /** Canonical paths of the entries in the root (metadata files excluded). */
  entries: readonly string[];
  /** The entries warren made (its ledger, or a workspace of an older warren with matching metadata). */
  owned: ReadonlySet<string>;
  mounts: readonly MountEntry[];
  /** IDs whose task lock is held by a live process: work in progress, not strays. */
  busy: ReadonlySet<string>;
  /** Branches of dead `creating` rows that still exist. */
  leftoverBranches: readonly { id: string; branch: string }[];
}

/**
 * Reconciles the three sources that can disagree — the database, git's worktree list and the
 * disk — plus the mount table. Pure: `gatherScan` reads, this decides.
 */
export function classifyStrays(input: ScanInput): Stray[] {
  const strays: Stray[] = [];
  const listed = new Map(input.worktrees.map((wt) => [wt.path, wt]));
  const onDisk = new Set(input.entries);
  const byPath = new Map(input.tasks.map((t) => [t.path, t]));
  const abandoned = (t: Task | undefined): boolean => t !== undefined && t.state === 'creating' && !input.busy.has(t.id);

  for (const task of input.tasks) {
    if (input.busy.has(task.id)) continue;
    if (!onDisk.has(task.path)) {
      strays.push({
        kind: 'vanished',
        id: task.id,
        path: task.path,
        branch: task.branch,
        reason: task.state === 'creating' ? 'a warren new that did not finish; its directory is gone' : 'recorded, but its directory is gone from disk',
      });
    }
  }
  for (const entry of input.entries) {
    const task = byPath.get(entry);
    if (task && input.busy.has(task.id)) continue;
    if (!input.owned.has(entry)) {
      // Listed, never deleted: whatever it is, it is not warren's to remove.
      strays.push({ kind: 'foreign', path: entry, reason: 'warren did not make it (not in its ledger); it is left as it is' });
      continue;
    }
    if (!listed.has(entry)) {
      strays.push({
        kind: 'stranded',
        path: entry,
        ...(task ? { id: task.id, branch: task.branch } : { id: path.basename(entry) }),
        reason:
          task?.state === 'remove_failed'
            ? 'git deregistered it but files remain (remove_failed)'
            : 'a directory in the workspace root that git does not list',
      });
    }
  }
  for (const wt of input.worktrees) {
    if (!isStrictlyInside(input.root, wt.path)) continue;
    const task = byPath.get(wt.path);
    if (task && input.busy.has(task.id)) continue;
    if (onDisk.has(wt.path) && !input.owned.has(wt.path)) continue; // reported as foreign above
    if (wt.prunable !== null) {
      strays.push({ kind: 'prunable', path: wt.path, ...(task ? { id: task.id } : {}), reason: `git: ${wt.prunable || 'prunable'}` });
      continue;
    }
    if (!task || abandoned(task)) {
      const branch = wt.branch?.replace(/^refs\/heads\//, '');
      const initializing = wt.locked !== null && /initializing/.test(wt.locked);
      strays.push({
        kind: 'unclaimed',
        path: wt.path,
        ...(task ? { id: task.id } : {}),
        ...(branch ? { branch } : {}),
        reason: initializing
          ? 'locked "initializing": left by a git worktree add that was killed'
          : task
            ? 'a warren new that did not finish (no live process holds its lock)'
            : 'git lists it under the workspace root but no task claims it',
      });
    }
  }
  for (const mount of input.mounts) {
    if (!isStrictlyInside(input.root, mount.mountPoint)) continue;
    const owner = input.tasks.find((t) => mount.mountPoint === t.path || isStrictlyInside(t.path, mount.mountPoint));
    strays.push({
      kind: 'mounted',
      path: mount.mountPoint,
      ...(owner ? { id: owner.id } : {}),
      reason: `${mount.fsType} mounted inside the workspace root`,
    });
  }
  for (const leftover of input.leftoverBranches) {
    strays.push({ kind: 'orphan_branch', id: leftover.id, branch: leftover.branch, reason: 'branch left by a warren new that did not finish' });
  }
  return strays;
}

export function isTaskBusy(ctx: ProjectContext, id: string): boolean {
  const holder = readHolder(taskLockPath(ctx, id));
  return holder !== null && isHolderAlive(holder);
}

export async function gatherScan(ctx: ProjectContext): Promise<ScanInput> {
  const tasks = ctx.store.listTasks(ctx.key);
  const worktrees = await listWorktrees(ctx.repo);
  let names: string[] = [];
  try {
    names = fs.readdirSync(ctx.root);
  } catch {
    names = [];
  }
  // A root that is now a symlink is not followed: its entries would be somewhere else's.
  if (isSymlink(ctx.root)) names = [];
  const entries = names.filter((n) => !isMetaFile(n) && !n.startsWith('.')).map((n) => path.join(ctx.root, n));
  const owned = new Set([...entries, ...worktrees.map((wt) => wt.path)].filter((p) => madeByWarren(ctx, p, tasks)));
  const busy = new Set(tasks.filter((t) => isTaskBusy(ctx, t.id)).map((t) => t.id));
  const leftoverBranches: { id: string; branch: string }[] = [];
  for (const task of tasks) {
    if (task.state !== 'creating' || busy.has(task.id)) continue;
    const checkedOut = worktrees.some((wt) => wt.branch === `refs/heads/${task.branch}`);
    if (!checkedOut && (await branchExists(ctx.repo, task.branch))) leftoverBranches.push({ id: task.id, branch: task.branch });
  }
  // A live task's own mounts (its cow layers) are part of it, not strays.
  const mounts = readMounts().filter((m) => !tasks.some((t) => isOwnedMount(ctx, t, m)));
  return { root: ctx.root, tasks, worktrees, entries, owned, mounts, busy, leftoverBranches };
}

export async function scan(ctx: ProjectContext): Promise<{ strays: Stray[] }> {
  return { strays: classifyStrays(await gatherScan(ctx)) };
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
