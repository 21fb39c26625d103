import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { classifyGitStderr } from '../git/errors.js';
import { deleteBranchIfExists } from '../git/refs.js';
import { addEmptyWorktree, setWorktreeConfig } from '../git/snapshot.js';
import { listWorktrees, removeWorktree } from '../git/worktrees.js';
import { layersForSandbox, overlaySupport, SANDBOXED_CHECKOUT } from '../provision/cow-support.js';
import type { SandboxKind } from '../config/sandbox.js';
import { checkLayerPaths, deadMount, mountOverlay, overlayAt, unmount } from '../system/overlay.js';
import type { Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from '../workspace/context.js';
import { readHolder } from '../util/lockfile.js';
import { withRepoLock } from '../workspace/locks.js';
import { indexEntryCount } from '../git/index-ops.js';
import { checkoutsDir, ensureCheckoutSnapshot } from './snapshot.js';
import type { CheckoutFacts } from './types.js';

/**
 * A copy-on-write checkout: `git worktree add --no-checkout`, then an overlay mounted on the
 * workspace (lower: the base commit's shared snapshot; upper: this workspace's own layer, which
 * also holds the worktree's `.git` file), and the snapshot's index copied into the worktree's
 * git folder, so git sees every file clean without reading one. Where any of it cannot be done,
 * what was made is undone and the caller makes a plain `git worktree add`, with an event
 * saying why.
 */

/**
 * `checkout: auto` uses cow at or above this many tracked files. Measured with
 * `npm run bench checkout` (docs/benchmarks.md): below it, `git worktree add` is as fast.
 */
export const AUTO_COW_MIN_FILES = 1_000;

/** The per-worktree stat policy that keeps the copied index valid on the overlay (inode numbers and ctime differ there). */
const WORKTREE_CONFIG: [string, string][] = [
  ['core.checkStat', 'minimal'],
  ['core.trustCtime', 'false'],
];

export function taskLayers(
  ctx: Pick<ProjectContext, 'store' | 'key'>,
  id: string,
): { dir: string; upper: string; work: string } {
  const dir = path.join(checkoutsDir(ctx), 'tasks', id);
  return { dir, upper: path.join(dir, 'upper'), work: path.join(dir, 'work') };
}

export interface CheckoutRequest {
  id: string;
  /** Null: a detached worktree (the merge queue's integration workspace). */
  branch: string | null;
  path: string;
  commit: string;
  /** Record the facts on the task row (a task has one; a queue gate does not). */
  record: boolean;
  /** The sandbox the workspace's commands run in: as root, a bwrap one gets no cow checkout (cow-support.ts). */
  sandbox: SandboxKind;
}

export type CheckoutOutcome = { made: true; facts: CheckoutFacts } | { made: false; reason: string | null };

/** Whether this repository asks for cow here, or null (and why not, null when it simply asked for git). */
export function wantsCow(ctx: ProjectContext): { cow: true } | { cow: false; reason: string | null } {
  const mode = ctx.config.checkout;
  if (mode === 'git') return { cow: false, reason: null };
  if (mode === 'auto') {
    const files = indexEntryCount(path.join(ctx.repo.commonDir, 'index'));
    if (files === null || files < AUTO_COW_MIN_FILES) return { cow: false, reason: null };
  }
  return { cow: true };
}

/** Makes the worktree as a cow checkout, or undoes what it made and says why not. Never throws for a machine that cannot. */
export async function addCowCheckout(
  ctx: ProjectContext,
  req: CheckoutRequest,
  progress: (line: string) => void,
): Promise<CheckoutOutcome> {
  const started = Date.now();
  const support = await overlaySupport(ctx.store.home);
  if (!support.ok) return { made: false, reason: support.reason };
  if (layersForSandbox(req.sandbox)) return { made: false, reason: SANDBOXED_CHECKOUT };
  if (support.how === 'namespaced') {
    return {
      made: false,
      reason: `not root, and fuse-overlayfs cannot mount here (${support.noFuse ?? 'unknown'}); an overlay seen only inside warren's own runs would leave the checkout empty for git and every other tool`,
    };
  }
  const fuse = support.how === 'fuse';
  const layers = taskLayers(ctx, req.id);
  const snap = await ensureCheckoutSnapshot(ctx, req.commit, progress);
  try {
    if (snap.created) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: req.record ? req.id : null,
        kind: 'checkout.snapshot',
        message: `made the checkout snapshot of ${req.commit.slice(0, 12)}: ${snap.meta.files} files in ${snap.meta.ms} ms${snap.meta.from ? ` (from ${snap.meta.from.slice(0, 12)}'s, ${snap.meta.changed} changed paths written)` : ''}`,
        data: {
          commit: req.commit,
          from: snap.meta.from,
          changed: snap.meta.changed,
          files: snap.meta.files,
          ms: snap.meta.ms,
        },
      });
    }
    const unsafe = checkLayerPaths(snap.tree, layers.upper, layers.work, req.path);
    if (!unsafe.ok) return { made: false, reason: unsafe.error };
    const added = await withRepoLock(ctx, `worktree add --no-checkout ${req.branch ?? req.id}`, () =>
      addEmptyWorktree(ctx.repo, req.branch, req.path, req.commit),
    );
    if (added.exitCode !== 0) {
      // git refuses a branch that already exists before it makes anything: that one is someone else's.
      await undoWorktree(ctx, req, classifyGitStderr(added.stderr) !== 'GIT_BRANCH_EXISTS');
      return { made: false, reason: `git worktree add --no-checkout failed (${added.stderr.trim().split('\n')[0]})` };
    }
    const facts: CheckoutFacts = {
      mode: 'cow',
      commit: req.commit,
      lower: snap.tree,
      upper: layers.upper,
      work: layers.work,
      ...(fuse ? { fuse: true } : {}),
    };
    // Recorded before the mount: rm, gc and crash recovery find the mount from it.
    if (req.record) ctx.store.mergeData(ctx.key, req.id, { checkout: facts });
    removeTree(layers.dir);
    fs.mkdirSync(layers.upper, { recursive: true });
    fs.mkdirSync(layers.work, { recursive: true });
    // The .git file stays under the mount too: unmounted, the folder is still git's worktree.
    const dotGit = fs.readFileSync(path.join(req.path, '.git'), 'utf8');
    fs.writeFileSync(path.join(layers.upper, '.git'), dotGit);
    const mounted = await mountOverlay(snap.tree, layers.upper, layers.work, req.path, fuse);
    if (!mounted.ok) {
      if (req.record) ctx.store.mergeData(ctx.key, req.id, { checkout: undefined });
      removeTree(layers.dir);
      await undoWorktree(ctx, req);
      return {
        made: false,
        reason: `mounting ${fuse ? 'fuse-overlayfs' : 'overlay'} on ${req.path} failed (${mounted.error})`,
      };
    }
    const gitDir = gitDirOf(dotGit, req.path);
    fs.copyFileSync(snap.index, path.join(gitDir, 'index'));
    await setWorktreeConfig(ctx.repo, req.path, WORKTREE_CONFIG);
    const ms = Date.now() - started;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: req.record ? req.id : null,
      kind: 'checkout.cow',
      message: `checked out ${req.commit.slice(0, 12)} copy-on-write (${fuse ? 'fuse-overlayfs' : 'overlay'} over the shared snapshot, ${snap.meta.files} files) in ${ms} ms`,
      data: { commit: req.commit, method: fuse ? 'fuse-overlayfs' : 'overlay', ms },
    });
    return { made: true, facts };
  } finally {
    snap.lock.release();
  }
}

function gitDirOf(dotGit: string, wsPath: string): string {
  const m = /^gitdir: (.+)$/m.exec(dotGit);
  if (!m?.[1])
    throw new WarrenError('GIT_FAILED', `${wsPath}/.git does not name a git folder; nothing else was changed.`);
  return path.resolve(wsPath, m[1].trim());
}

/** A no-checkout worktree this call made moments ago: it holds no one's work and nothing is mounted in it. */
async function undoWorktree(ctx: ProjectContext, req: CheckoutRequest, madeBranch = true): Promise<void> {
  await withRepoLock(ctx, `undo worktree add ${req.branch ?? req.id}`, async () => {
    if ((await listWorktrees(ctx.repo)).some((wt) => wt.path === req.path))
      await removeWorktree(ctx.repo, req.path, true);
    if (mountsUnder(readMounts(), req.path).length === 0) removeTree(req.path);
    if (req.branch && madeBranch) await deleteBranchIfExists(ctx.repo, req.branch);
  });
}

export function ownsCheckoutMount(task: Task, mountPoint: string): boolean {
  return task.data.checkout?.mode === 'cow' && mountPoint === task.path;
}

/**
 * Unmounts a cow checkout (the features' own mounts inside it first came off in their own
 * release) and, once nothing is mounted inside, takes git's record of the worktree: unmounted,
 * the folder holds only the `.git` file, and git (which compares it with the index) would
 * call that a worktree with every file deleted. Its contents were checked clean before this
 * ran. Never deletes through a mount: anything still mounted is left, and named.
 */
export async function releaseCheckout(
  ctx: ProjectContext,
  task: Pick<Task, 'id' | 'path' | 'data'>,
  record: boolean,
): Promise<string[]> {
  const facts = task.data.checkout;
  if (facts?.mode !== 'cow') return [];
  if (overlayAt(task.path)) {
    const off = await unmount(task.path);
    if (!off.ok) return [`${task.path}: ${off.error}`];
    ctx.store.addEvent({
      project: ctx.key,
      taskId: record ? task.id : null,
      kind: 'checkout.unmounted',
      message: `unmounted the copy-on-write checkout at ${task.path}`,
      data: { path: task.path },
    });
  }
  const still = mountsUnder(readMounts(), task.path);
  if (still.length > 0) return still.map((m) => `${m.mountPoint} is still mounted`);
  const left = fs.existsSync(task.path) ? fs.readdirSync(task.path).filter((n) => n !== '.git') : [];
  if (left.length > 0)
    return [`${task.path} holds ${left.slice(0, 3).join(', ')} under its checkout's mount point; it was left as it is`];
  await underRepoLock(ctx, `worktree remove ${task.id}`, async () => {
    if ((await listWorktrees(ctx.repo)).some((wt) => wt.path === task.path))
      await removeWorktree(ctx.repo, task.path, true);
  });
  removeTree(task.path);
  return [];
}

/**
 * The repository lock, unless this process holds it already: `gc` releases a crashed task's
 * steps while it holds the lock, and `rm` and a rolled-back `new` without it.
 */
async function underRepoLock(ctx: ProjectContext, purpose: string, fn: () => Promise<void>): Promise<void> {
  if (readHolder(path.join(ctx.repo.commonDir, 'warren-repo.lock'))?.pid === process.pid) return fn();
  return withRepoLock(ctx, purpose, fn);
}

/** After the workspace is gone: its private layer. */
export function forgetCheckout(ctx: ProjectContext, id: string): void {
  removeTree(taskLayers(ctx, id).dir);
}

/**
 * Mounts a cow checkout again when it is not mounted (after a reboot, a manual umount, or a
 * fuse-overlayfs daemon that died), keeping its private layer. Before any command runs in it.
 */
export async function ensureCheckoutMounted(ctx: ProjectContext, task: Task): Promise<boolean> {
  const facts = task.data.checkout;
  if (facts?.mode !== 'cow' || !fs.existsSync(task.path)) return false;
  if (overlayAt(task.path)) {
    if (!deadMount(task.path)) return false;
    const off = await unmount(task.path);
    if (!off.ok)
      throw new WarrenError(
        'WORKSPACE_MOUNTED',
        `the checkout of ${task.id} at ${task.path} is dead (its fuse-overlayfs daemon is gone) and could not be unmounted: ${off.error}; nothing was run.`,
      );
  }
  if (!fs.existsSync(facts.lower)) {
    throw new WarrenError(
      'PROVISION_FAILED',
      `the checkout snapshot behind ${task.id} (${facts.lower}) is gone, so its overlay cannot be mounted; its private changes in ${facts.upper} are kept.`,
      {
        hint: `Copy what you need from ${facts.upper}, then \`warren rm ${task.id}\` and make it again.`,
      },
    );
  }
  for (const d of [facts.upper, facts.work]) fs.mkdirSync(d, { recursive: true });
  const mounted = await mountOverlay(facts.lower, facts.upper, facts.work, task.path, facts.fuse === true);
  if (!mounted.ok)
    throw new WarrenError(
      'PROVISION_FAILED',
      `mounting the checkout of ${task.id} again failed: ${mounted.error}; nothing was run.`,
    );
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'checkout.remount',
    level: 'warn',
    message: `the checkout at ${task.path} was not mounted; mounted it again`,
    data: { path: task.path },
  });
  return true;
}
