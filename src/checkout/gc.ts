import fs from 'node:fs';
import path from 'node:path';
import { isOverlayMount, overlayOption, unmount } from '../provision/overlay.js';
import { readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { listDir } from '../util/list-dir.js';
import { tryAcquire } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';
import type { GcCollected } from '../workspace/lifecycle.js';
import { checkoutsDir, listSnapshots, snapshotLock, snapshotsDir } from './snapshot.js';

/**
 * `gc` for cow checkouts, this project's: the mount of a task whose record is gone comes off
 * first, then its private layer goes; then every snapshot that no task uses and nothing mounts,
 * except the newest, which stays as the start of the next snapshot (only the changed paths are
 * written then). Half-made snapshots of a warren that died go too.
 */
export async function collectCheckoutGarbage(ctx: ProjectContext): Promise<GcCollected> {
  const out: GcCollected = { removed: [], kept: [] };
  const tasks = ctx.store.listTasks(ctx.key);
  const live = new Set(tasks.map((t) => t.id));
  const tasksDir = path.join(checkoutsDir(ctx), 'tasks');

  for (const mount of readMounts()) {
    if (!isOverlayMount(mount)) continue;
    const upper = overlayOption(mount, 'upperdir');
    if (!upper?.startsWith(`${tasksDir}/`)) continue;
    const id = path.relative(tasksDir, upper).split(path.sep)[0];
    if (!id || live.has(id)) continue;
    const done = await unmount(mount.mountPoint);
    if (done.ok) out.removed.push({ kind: 'checkout_mount', path: mount.mountPoint, id, action: 'unmount' });
    else out.kept.push({ kind: 'checkout_mount', path: mount.mountPoint, reason: `unmount failed: ${done.error}` });
  }

  const mounts = readMounts().filter(isOverlayMount);
  const uppers = mounts.map((m) => overlayOption(m, 'upperdir') ?? '');
  for (const id of listDir(tasksDir)) {
    if (live.has(id)) continue;
    const dir = path.join(tasksDir, id);
    if (uppers.some((u) => u.startsWith(`${dir}/`))) {
      out.kept.push({ kind: 'checkout_layers', path: dir, reason: 'still mounted' });
      continue;
    }
    const failures = removeTree(dir);
    if (failures.length === 0) out.removed.push({ kind: 'checkout_layers', path: dir, id, action: 'delete-dir' });
    else out.kept.push({ kind: 'checkout_layers', path: dir, reason: `could not delete ${failures[0]?.path} (${failures[0]?.code})` });
  }

  const used = new Set(tasks.map((t) => t.data.checkout?.lower).filter((l): l is string => l !== undefined));
  const lowers = mounts.map((m) => overlayOption(m, 'lowerdir') ?? '');
  const newest = listSnapshots(ctx)[0]?.dir;
  for (const name of listDir(snapshotsDir(ctx))) {
    if (name.endsWith('.lock')) continue;
    const dir = path.join(snapshotsDir(ctx), name);
    if (dir === newest) continue;
    const tree = path.join(dir, 'tree');
    if (used.has(tree) || lowers.some((l) => l.split(':').includes(tree))) continue;
    const commit = name.replace(/^\.tmp-/, '').replace(/-\d+$/, '');
    // Held while a snapshot is made and until it is mounted: not garbage yet.
    const lock = tryAcquire(snapshotLock(ctx, commit), 'gc');
    if (!lock.ok) {
      out.kept.push({ kind: 'checkout_snapshot', path: dir, reason: 'being made or mounted by a running warren' });
      continue;
    }
    try {
      const failures = removeTree(dir);
      if (failures.length === 0) out.removed.push({ kind: 'checkout_snapshot', path: dir, action: 'delete-dir' });
      else out.kept.push({ kind: 'checkout_snapshot', path: dir, reason: `could not delete ${failures[0]?.path} (${failures[0]?.code})` });
    } finally {
      lock.lock.release();
      fs.rmSync(snapshotLock(ctx, commit), { force: true });
    }
  }
  return out;
}
