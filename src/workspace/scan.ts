import fs from 'node:fs';
import path from 'node:path';
import type { WorktreeEntry } from '../git/parse.js';
import { branchExists } from '../git/refs.js';
import { listWorktrees } from '../git/worktrees.js';
import { readMounts, type MountEntry } from '../system/mounts.js';
import type { Task, TaskState } from '../state/types.js';
import { isHolderAlive, readHolder } from '../util/lockfile.js';
import type { ProjectContext } from './context.js';
import { taskLockPath } from './locks.js';
import { madeByWarren } from './ledger.js';
import { branchRecords } from './branch-records.js';
import { isMetaFile } from './meta.js';
import { isOwnedMount } from './release.js';
import { isStrictlyInside, presenceAt, type Presence } from './paths.js';

export const STRAY_KINDS = [
  'vanished',
  'displaced',
  'stranded',
  'unclaimed',
  'prunable',
  'mounted',
  'orphan-branch',
  'foreign',
  // A task on another machine (src/run/ssh/): commits there not fetched back yet; a record whose task is gone.
  'remote-unfetched',
  'remote-orphan',
] as const;
export type StrayKind = (typeof STRAY_KINDS)[number];

export interface Stray {
  kind: StrayKind;
  path?: string;
  id?: string;
  branch?: string;
  /** Why it is a stray, in words. */
  reason: string;
  /** For a worktree git has locked: the lock's reason (possibly empty). */
  locked?: string;
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
  leftoverBranches: readonly { id: string; branch: string; reason: string }[];
  /** What is at each task's recorded path (by task ID), read with lstat: never followed. */
  presence: ReadonlyMap<string, Presence>;
}

/**
 * A task in one of these states is someone's work in progress: its records (the row and git's
 * worktree record) are never cleared by `gc`, even when its folder is briefly missing or
 * replaced — the folder may come back (a disk not yet mounted), and a pruned record would
 * strand it. `creating` (a dead `new`), `removing` and `remove_failed` are on their way out.
 */
export const LIVE_STATES: readonly TaskState[] = ['ready', 'setup_failed', 'landed'];

export function isLive(task: Task): boolean {
  return LIVE_STATES.includes(task.state);
}

/**
 * Reconciles the three sources that can disagree — the database, git's worktree list and the
 * disk — plus the mount table. Pure: `gatherScan` reads, this decides.
 */
export function classifyStrays(input: ScanInput): Stray[] {
  const strays: Stray[] = [];
  const listed = new Map(input.worktrees.map((wt) => [wt.path, wt]));
  const byPath = new Map(input.tasks.map((t) => [t.path, t]));
  const abandoned = (t: Task | undefined): boolean =>
    t !== undefined && t.state === 'creating' && !input.busy.has(t.id);

  // Paths of live tasks that git still records: reported once, as displaced, never as prunable.
  const spared = new Set<string>();
  for (const task of input.tasks) {
    if (input.busy.has(task.id)) continue;
    const presence = input.presence.get(task.id) ?? { kind: 'missing' };
    const wt = listed.get(task.path);
    const displaced = isLive(task) && wt !== undefined ? displacement(task, presence, wt) : null;
    if (displaced) {
      spared.add(task.path);
      strays.push({ kind: 'displaced', id: task.id, path: task.path, branch: task.branch, reason: displaced });
    } else if (presence.kind === 'missing') {
      strays.push({
        kind: 'vanished',
        id: task.id,
        path: task.path,
        branch: task.branch,
        reason:
          task.state === 'creating'
            ? 'a warren new that did not finish; its directory is gone'
            : `recorded, but its directory is gone from disk${wt ? '' : ' (and git has no record of it)'}`,
      });
    }
  }
  for (const entry of input.entries) {
    const task = byPath.get(entry);
    if (task && input.busy.has(task.id)) continue;
    if (spared.has(entry)) continue;
    if (!input.owned.has(entry)) {
      // Listed, never deleted: whatever it is, it is not warren's to remove.
      strays.push({
        kind: 'foreign',
        path: entry,
        reason: 'warren did not make it (not in its ledger); it is left as it is',
      });
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
    if (spared.has(wt.path)) continue;
    if (input.entries.includes(wt.path) && !input.owned.has(wt.path)) continue; // reported as foreign above
    if (wt.prunable !== null) {
      strays.push({
        kind: 'prunable',
        path: wt.path,
        ...(task ? { id: task.id } : {}),
        reason: `git: ${wt.prunable || 'prunable'}`,
      });
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
        ...(wt.locked !== null ? { locked: wt.locked } : {}),
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
    strays.push({
      kind: 'orphan-branch',
      id: leftover.id,
      branch: leftover.branch,
      reason: leftover.reason,
    });
  }
  return strays;
}

/**
 * Why a live task that git still records needs attention, or null when its folder is where it
 * should be. Said with what to do that keeps the work: put the folder back, or forget it.
 */
function displacement(task: Task, presence: Presence, wt: WorktreeEntry): string | null {
  const forget = `or, if it is gone for good, \`warren rm ${task.id}\` forgets the workspace and keeps branch ${task.branch}`;
  switch (presence.kind) {
    case 'missing':
      return `live task whose folder is missing (a disk not mounted? moved?); warren and git keep its records: put the folder back, ${forget}`;
    case 'replaced':
      return `live task whose folder was replaced by ${presence.what}; warren and git keep its records: put the workspace folder back at ${task.path}`;
    case 'folder':
      return wt.prunable === null
        ? null
        : `live task whose folder is not the worktree git recorded (git: ${wt.prunable || 'prunable'}); warren keeps git's record: \`git worktree repair ${task.path}\` in the main checkout relinks it`;
  }
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
  const leftoverBranches: { id: string; branch: string; reason: string }[] = [];
  const checkedOut = (branch: string): boolean => worktrees.some((wt) => wt.branch === `refs/heads/${branch}`);
  for (const task of tasks) {
    if (task.state !== 'creating' || busy.has(task.id)) continue;
    if (!checkedOut(task.branch) && (await branchExists(ctx.repo, task.branch)))
      leftoverBranches.push({
        id: task.id,
        branch: task.branch,
        reason: 'branch left by a warren new that did not finish',
      });
  }
  // A branch warren made whose task is gone (its record outlived the task: nothing handed it over).
  for (const record of branchRecords(ctx)) {
    if (tasks.some((t) => t.branch === record.branch) || checkedOut(record.branch)) continue;
    if (await branchExists(ctx.repo, record.branch))
      leftoverBranches.push({
        id: record.taskId,
        branch: record.branch,
        reason: `branch warren made for task ${record.taskId}, which is gone`,
      });
  }
  // A live task's own mounts (its cow layers) are part of it, not strays.
  const mounts = readMounts().filter((m) => !tasks.some((t) => isOwnedMount(ctx, t, m)));
  const presence = new Map(tasks.map((t) => [t.id, presenceAt(t.path)]));
  return { root: ctx.root, tasks, worktrees, entries, owned, mounts, busy, leftoverBranches, presence };
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
