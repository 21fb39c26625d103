import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { MountEntry } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { pruneExcludes } from './exclude.js';
import { taskManifestDir, taskOverlayDir } from './layout.js';
import { mountOverlay, overlayAt, unmount } from './overlay.js';
import { provisionRecords, type ProvisionRecord } from './types.js';

/** Mount points of a task's cow paths. */
export function cowMountPoints(task: Task): string[] {
  return provisionRecords(task.data)
    .filter((r) => r.mode === 'cow')
    .map((r) => path.join(task.path, r.path));
}

export function ownsMount(task: Task, mount: MountEntry): boolean {
  return mount.fsType === 'overlay' && cowMountPoints(task).includes(mount.mountPoint);
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
  const ordered = [...records].sort((a, b) => Number(b.mode === 'cow') - Number(a.mode === 'cow'));
  for (const r of ordered) {
    const target = path.join(task.path, r.path);
    if (r.mode !== 'cow' && problems.length > 0 && !options.removeFiles) break;
    if (r.mode === 'cow') {
      if (overlayAt(target)) {
        const done = await unmount(target);
        if (!done.ok) {
          problems.push(`${target}: ${done.error}`);
          ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind: 'provision.unmount_failed', level: 'error', message: `could not unmount ${target}: ${done.error}`, data: { path: target } });
          continue;
        }
        ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind: 'provision.unmounted', message: `unmounted the overlay at ${r.path}`, data: { path: r.path } });
      }
      if (options.removeFiles) {
        const left = removeEmptyDir(target); // the mount point: empty once unmounted; anything else is kept and named
        if (left) problems.push(`${target}: ${left}`);
        else if (r.upper) removeTree(path.dirname(r.upper));
      }
    } else if (r.mode === 'share') {
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
 * Mounts again every cow layer that is not mounted (after a reboot, or a manual umount): on
 * `status`, `provision`, and before commands run in the workspace.
 */
export async function ensureMounted(ctx: ProjectContext, task: Task): Promise<string[]> {
  const remounted: string[] = [];
  for (const r of provisionRecords(task.data)) {
    if (r.mode !== 'cow' || !r.lower || !r.upper || !r.work) continue;
    const target = path.join(task.path, r.path);
    if (overlayAt(target)) continue;
    if (!fs.existsSync(r.lower)) {
      throw new WarrenError('PROVISION_FAILED', `the snapshot behind ${r.path} (${r.lower}) is gone, so its overlay cannot be mounted again; the workspace's private changes in ${r.upper} are kept.`, {
        hint: `Run \`warren provision ${task.id} --refresh\` to provision it again.`,
      });
    }
    for (const d of [r.upper, r.work, target]) fs.mkdirSync(d, { recursive: true });
    const mounted = await mountOverlay(r.lower, r.upper, r.work, target);
    if (!mounted.ok) throw new WarrenError('PROVISION_FAILED', `mounting the overlay for ${r.path} again failed: ${mounted.error}; nothing else was changed.`);
    ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind: 'provision.remount', level: 'warn', message: `${r.path} was not mounted; mounted its overlay again`, data: { path: r.path } });
    remounted.push(r.path);
  }
  return remounted;
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
