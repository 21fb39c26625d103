import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { RunMount } from '../system/run-mounts.js';
import { readMounts, type MountEntry } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import { lexists } from '../util/lexists.js';
import type { ProjectContext } from '../workspace/context.js';
import { isInside } from '../workspace/paths.js';
import { pruneExcludes } from './modes/exclude.js';
import { taskManifestDir, taskOverlayDir } from './layout.js';
import {
  checkLayerPaths,
  deadMount,
  isOverlayMount,
  mountOverlay,
  overlayAt,
  overlayOptions,
  unmount,
  unmountAll,
} from '../system/overlay.js';
import { describeReplacement, replacedRecords, replacementAt } from './modes/replaced.js';
import { provisionRecords, type ProvisionRecord } from './types.js';
import { modeKind } from './modes/kinds.js';

/** Mount points of a task's global cow mounts (a namespaced one is never mounted on the host). */
export function cowMountPoints(task: Task): string[] {
  return provisionRecords(task.data)
    .filter((r) => modeKind(r.mode).layered && !r.namespaced)
    .map((r) => path.join(task.path, r.path));
}

export function ownsMount(task: Task, mount: MountEntry): boolean {
  return isOverlayMount(mount) && cowMountPoints(task).includes(mount.mountPoint);
}

/**
 * Unmounts a task's overlays and unlinks its share links; with `removeFiles`, also deletes the
 * provisioned copies and private layers (refresh, or undoing a failed provisioning). Never
 * deletes through a mount: a path still mounted is left and named.
 */
export async function releaseRecords(
  ctx: ProjectContext,
  task: Task,
  records: readonly ProvisionRecord[],
  options: { removeFiles: boolean },
): Promise<string[]> {
  const problems: string[] = [];
  // Mounts first: if one will not come off, the caller refuses, and the links are still as they were.
  const ordered = [...records].sort((a, b) => Number(modeKind(b.mode).layered) - Number(modeKind(a.mode).layered));
  // A namespaced layer is mounted only inside runs, and goes with each; there is nothing to unmount.
  // The others that are mounted come off together (unmountAll: one umount as root).
  const table = readMounts();
  const unmounted = await unmountAll(
    ordered
      .filter((r) => modeKind(r.mode).layered && !r.namespaced && overlayAt(path.join(task.path, r.path), table))
      .map((r) => path.join(task.path, r.path)),
  );
  let after: MountEntry[] | undefined; // the table once they are off, read when first needed
  for (const r of ordered) {
    const target = path.join(task.path, r.path);
    if (!modeKind(r.mode).layered && problems.length > 0 && !options.removeFiles) break;
    if (modeKind(r.mode).layered) {
      const done = unmounted.get(target);
      if (done) {
        if (!done.ok) {
          problems.push(`${target}: ${done.error}`);
          ctx.store.addEvent({
            project: ctx.key,
            taskId: task.id,
            kind: 'provision.unmount_failed',
            level: 'error',
            message: `could not unmount ${target}: ${done.error}`,
            data: { path: target },
          });
          continue;
        }
        ctx.store.addEvent({
          project: ctx.key,
          taskId: task.id,
          kind: 'provision.unmounted',
          message: `unmounted the overlay at ${r.path}`,
          data: { path: r.path },
        });
      }
      if (options.removeFiles) {
        after ??= readMounts();
        const replaced = replacementAt(target, after);
        if (replaced) {
          problems.push(`${describeReplacement(target, replaced)}, which is kept; move it away (or delete it) first`);
          continue;
        }
        const left = removeEmptyDir(target); // the mount point: empty once unmounted; anything else is kept and named
        if (left) problems.push(`${target}: ${left}`);
        else if (r.upper) {
          const failures = removeTree(path.dirname(r.upper));
          if (failures.length > 0)
            problems.push(`${path.dirname(r.upper)}: could not delete ${failures[0]?.path} (${failures[0]?.code})`);
        }
      }
    } else if (modeKind(r.mode).sharesSource) {
      if (isSymlink(target)) fs.unlinkSync(target);
    } else if (options.removeFiles) {
      const failures = removeTree(target);
      if (failures.length > 0) problems.push(`${target}: could not delete ${failures[0]?.path} (${failures[0]?.code})`);
    }
  }
  return problems;
}

/** After `rm`: the task's private layers and manifests, and exclude lines no task needs now. */
export async function forgetTask(ctx: ProjectContext, task: Task): Promise<void> {
  removeTree(taskOverlayDir(ctx, task.id));
  removeTree(taskManifestDir(ctx, task.id));
  const needed = ctx.store
    .listTasks(ctx.key)
    .filter((t) => t.id !== task.id)
    .flatMap((t) => provisionRecords(t.data).map((r) => r.path));
  await pruneExcludes(ctx, needed);
}

/**
 * Mounts again every global cow layer that is not mounted (after a reboot, or a manual umount):
 * on `status`, `provision`, and before commands run in the workspace. Namespaced layers are
 * mounted by each run instead (`runMounts`). Never over a path something else replaced
 * (src/provision/modes/replaced.ts): that would hide it.
 */
export async function ensureMounted(ctx: ProjectContext, task: Task): Promise<string[]> {
  const remounted: string[] = [];
  // Read once: a pnpm workspace's task has 17 layers, and a machine of many tasks a mount table
  // of hundreds of overlays (a read and parse each was most of a `status` or `rm`).
  const table = readMounts();
  for (const r of provisionRecords(task.data)) {
    if (!modeKind(r.mode).layered || r.namespaced || !r.lower || !r.upper || !r.work) continue;
    const target = path.join(task.path, r.path);
    let unmounted = false;
    if (overlayAt(target, table)) {
      if (!deadMount(target)) continue;
      // A fuse-overlayfs whose daemon died: the mount is there, and serves nothing. Off, then on again.
      const off = await unmount(target);
      if (!off.ok)
        throw new WarrenError(
          'PROVISION_FAILED',
          `the overlay for ${r.path} is dead (its fuse-overlayfs daemon is gone) and could not be unmounted: ${off.error}; nothing else was changed.`,
        );
      unmounted = true;
    }
    if (replacementAt(target, unmounted ? readMounts() : table)) continue;
    assertSnapshot(task, r, r.lower, r.upper);
    for (const d of [r.upper, r.work]) fs.mkdirSync(d, { recursive: true });
    // A parent replaced by a symlink would carry a global mount out of the workspace.
    if (!plainMountPoint(task, target))
      throw new WarrenError(
        'PROVISION_FAILED',
        `${target}, where ${r.path}'s copy-on-write layer is mounted, is no longer a plain directory of the workspace (a parent is a link?); nothing was mounted.`,
        { hint: `Put the folder back and run \`warren provision ${task.id}\`.` },
      );
    const mounted = await mountOverlay(r.lower, r.upper, r.work, target, r.fuse === true);
    if (!mounted.ok)
      throw new WarrenError(
        'PROVISION_FAILED',
        `mounting the overlay for ${r.path} again failed: ${mounted.error}; nothing else was changed.`,
      );
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'provision.remount',
      level: 'warn',
      message: `${r.path} was not mounted; mounted its overlay again`,
      data: { path: r.path },
    });
    remounted.push(r.path);
  }
  return remounted;
}

/**
 * The mounts a command in this workspace needs in its own namespace: one per namespaced cow
 * layer. Threat: the mount point is a path in a branch an agent can change; a symlink there (or
 * in a parent) would carry the mount elsewhere in the run's view, so it must be a real
 * directory inside the workspace. A missing layer or mount point is made again (empty). One
 * something else replaced (a folder filled outside warren, a file, a link) is not mounted over:
 * the run sees what is there, as every other process of the user does.
 */
export function runMounts(task: Task): RunMount[] {
  const mounts: RunMount[] = [];
  for (const r of provisionRecords(task.data)) {
    if (!modeKind(r.mode).layered || !r.namespaced || !r.lower || !r.upper || !r.work) continue;
    const target = path.join(task.path, r.path);
    if (replacementAt(target)) continue;
    assertSnapshot(task, r, r.lower, r.upper);
    for (const d of [r.upper, r.work]) fs.mkdirSync(d, { recursive: true });
    if (!plainMountPoint(task, target)) {
      throw new WarrenError(
        'PROVISION_FAILED',
        `${target}, where ${r.path}'s copy-on-write layer is mounted for each command, is no longer a plain directory of the workspace; nothing was run.`,
        {
          hint: `Remove what is there and run \`warren provision ${task.id} --refresh\`.`,
        },
      );
    }
    const checked = checkLayerPaths(r.lower, r.upper, r.work, target);
    if (!checked.ok)
      throw new WarrenError(
        'PROVISION_FAILED',
        `${r.path}'s copy-on-write layer cannot be mounted: ${checked.error}; nothing was run.`,
      );
    mounts.push({
      fsType: 'overlay',
      options: overlayOptions(r.lower, r.upper, r.work, true),
      target,
      layers: { lower: r.lower, upper: r.upper, work: r.work },
    });
  }
  return mounts;
}

/** True when `target` is a directory at its own real path, made (empty) if it was gone, never through a link. */
function plainMountPoint(task: Task, target: string): boolean {
  if (!lexists(target)) {
    let parent = path.dirname(target);
    while (!lexists(parent)) parent = path.dirname(parent);
    if (!isInside(task.path, fs.realpathSync(parent))) return false;
    fs.mkdirSync(target, { recursive: true });
  }
  return fs.lstatSync(target).isDirectory() && fs.realpathSync(target) === target;
}

/** Before a run: each cow path whose layer was replaced, said once per run (event and a line). */
export function warnReplaced(ctx: ProjectContext, task: Task): void {
  for (const { record, replacement } of replacedRecords(task)) {
    const message = `${describeReplacement(record.path, replacement)}, so warren does not mount the layer over it (that would hide it) and this command sees what is there; \`warren status ${task.id}\` says what changed against the layer's snapshot; move it away to use the layer again`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'provision.replaced',
      level: 'warn',
      message,
      data: { path: record.path, ...replacement },
    });
    ctx.reporter.line(`warren: warn: ${message}`);
  }
}

function assertSnapshot(task: Task, r: ProvisionRecord, lower: string, upper: string): void {
  if (fs.existsSync(lower)) return;
  throw new WarrenError(
    'PROVISION_FAILED',
    `the snapshot behind ${r.path} (${lower}) is gone, so its overlay cannot be mounted; the workspace's private changes in ${upper} are kept.`,
    {
      hint: `Run \`warren provision ${task.id} --refresh\` to provision it again.`,
    },
  );
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function removeEmptyDir(dir: string): string | null {
  try {
    fs.rmdirSync(dir);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? null : `could not remove the mount point (${code})`;
  }
}
