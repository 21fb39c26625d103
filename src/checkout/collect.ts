import fs from 'node:fs';
import path from 'node:path';
import { isOverlayMount, overlayOption, unmount } from '../system/overlay.js';
import { statusOf } from '../git/status.js';
import { removeWorktree } from '../git/worktrees.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { listDir } from '../util/list-dir.js';
import { tryAcquire } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';
import { withRepoLock } from '../workspace/locks.js';
import type { GcCollected } from '../workspace/types.js';
import { checkoutsDir, listSnapshots, snapshotLock, snapshotsDir } from './snapshot.js';
import { pinned } from '../workspace/pinned.js';
import { recordRemoval } from '../workspace/gc-record.js';

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
    // Its private layer is the workspace's uncommitted work: a workspace with any is kept.
    const dirty = await pinned(ctx, mount.mountPoint)
      .then((wt) => statusOf(wt))
      .catch((err: unknown) => [{ path: err instanceof Error ? err.message : String(err) }]);
    if (dirty.length > 0) {
      out.kept.push({
        kind: 'checkout_mount',
        path: mount.mountPoint,
        reason: `its task is gone, but it holds uncommitted changes (${dirty
          .slice(0, 3)
          .map((d) => d.path)
          .join(', ')}); commit or copy them, then run \`git worktree remove --force ${mount.mountPoint}\``,
      });
      continue;
    }
    const done = await unmount(mount.mountPoint);
    if (!done.ok) {
      out.kept.push({ kind: 'checkout_mount', path: mount.mountPoint, reason: `unmount failed: ${done.error}` });
      continue;
    }
    out.removed.push({ kind: 'checkout_mount', path: mount.mountPoint, id, action: 'unmount' });
    // Clean, and unmounted: what is left is git's record and the .git file. Never through a mount.
    if (mountsUnder(readMounts(), mount.mountPoint).length === 0) {
      await withRepoLock(ctx, `gc: worktree remove ${mount.mountPoint}`, () =>
        removeWorktree(ctx.repo, mount.mountPoint, true),
      );
      removeTree(mount.mountPoint);
      out.removed.push({ kind: 'checkout_worktree', path: mount.mountPoint, id, action: 'remove-worktree' });
    }
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
    const held = listDir(path.join(dir, 'upper')).filter((n) => n !== '.git');
    if (held.length > 0) {
      out.kept.push({
        kind: 'checkout_layers',
        path: dir,
        reason: `its task is gone, but its private layer holds changes (${held.slice(0, 3).join(', ')}); copy what you need, then delete it`,
      });
      continue;
    }
    recordRemoval(out, 'checkout_layers', dir, removeTree(dir), id);
  }

  const lowers = mounts.map((m) => overlayOption(m, 'lowerdir') ?? '');
  const newest = listSnapshots(ctx)[0]?.dir;
  for (const name of listDir(snapshotsDir(ctx))) {
    if (name.endsWith('.lock')) continue;
    const dir = path.join(snapshotsDir(ctx), name);
    const tree = path.join(dir, 'tree');
    const users = tasks.filter((t) => t.data.checkout?.lower === tree).map((t) => t.id);
    // Kept, and said: what keeps it, and how it goes.
    if (dir === newest || users.length > 0 || lowers.some((l) => l.split(':').includes(tree))) {
      if (!name.startsWith('.'))
        out.kept.push({
          kind: 'checkout_snapshot',
          path: dir,
          reason:
            users.length > 0
              ? `the checkout of task(s) ${users.join(', ')}; gc removes it once none uses it (\`warren rm ${users[0]}\`)`
              : dir === newest
                ? 'the newest checkout snapshot, which the next task starts from; gc removes it once a newer one is made'
                : 'mounted; gc removes it once it is unmounted',
        });
      continue;
    }
    const commit = name.replace(/^\.tmp-/, '').replace(/-\d+$/, '');
    // Held while a snapshot is made and until it is mounted: not garbage yet.
    const lock = tryAcquire(snapshotLock(ctx, commit), 'gc');
    if (!lock.ok) {
      out.kept.push({ kind: 'checkout_snapshot', path: dir, reason: 'being made or mounted by a running warren' });
      continue;
    }
    try {
      recordRemoval(out, 'checkout_snapshot', dir, removeTree(dir));
    } finally {
      lock.lock.release();
      fs.rmSync(snapshotLock(ctx, commit), { force: true });
    }
  }
  return out;
}
