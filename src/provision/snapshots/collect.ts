import fs from 'node:fs';
import path from 'node:path';
import { readMounts } from '../../system/mounts.js';
import { removeTree } from '../../system/remove-tree.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { GcResult } from '../../workspace/gc.js';
import { tryAcquire } from '../../util/lockfile.js';
import { overlaysRoot } from '../layout.js';
import { isOverlayMount, overlayOption, unmount } from '../../system/overlay.js';
import { readSnapshotMeta, sha256File, snapshotLockPath, snapshotsDir } from './snapshot.js';
import { shellCommand } from '../../util/shell.js';
import { provisionRecords } from '../types.js';
import { listDir } from '../../util/list-dir.js';
import { recordRemoval } from '../../workspace/gc-record.js';

type Collected = { removed: GcResult['removed']; kept: { path: string; kind: string; reason: string }[] };

/**
 * `gc` for provisioning: warren-owned overlay mounts (upper layer under $WARREN_HOME/overlays)
 * of tasks that no longer exist are unmounted and their layers deleted; snapshots that no
 * task of any project uses and nothing mounts are deleted, and so are manifests of gone tasks.
 */
export async function collectProvisionGarbage(ctx: ProjectContext): Promise<Collected> {
  const out: Collected = { removed: [], kept: [] };
  const home = ctx.store.home;
  const allTasks = ctx.store.listTasks();
  const live = new Set(allTasks.map((t) => `${t.project}/${t.id}`));

  // Mounts first: a layer is never deleted while mounted.
  const ovRoot = overlaysRoot(home);
  for (const mount of readMounts()) {
    if (!isOverlayMount(mount)) continue;
    const upper = overlayOption(mount, 'upperdir');
    if (!upper || !upper.startsWith(`${ovRoot}/`)) continue;
    const [project, id] = path.relative(ovRoot, upper).split(path.sep);
    if (!project || !id || live.has(`${project}/${id}`)) continue;
    const done = await unmount(mount.mountPoint);
    if (done.ok) out.removed.push({ kind: 'mounted', path: mount.mountPoint, id, action: 'unmount' });
    else out.kept.push({ kind: 'mounted', path: mount.mountPoint, reason: `umount failed: ${done.error}` });
  }

  const mountedUppers = new Set(
    readMounts()
      .map((m) => overlayOption(m, 'upperdir'))
      .filter((u): u is string => u !== null),
  );
  for (const project of listDir(ovRoot)) {
    if (project.startsWith('.')) continue;
    for (const id of listDir(path.join(ovRoot, project))) {
      if (live.has(`${project}/${id}`)) continue;
      const dir = path.join(ovRoot, project, id);
      if ([...mountedUppers].some((u) => u.startsWith(`${dir}/`))) {
        out.kept.push({ kind: 'overlay_layers', path: dir, reason: 'still mounted' });
        continue;
      }
      const failures = removeTree(dir);
      if (failures.length === 0) out.removed.push({ kind: 'overlay_layers', path: dir, id, action: 'delete-dir' });
      else
        out.kept.push({
          kind: 'overlay_layers',
          path: dir,
          reason: `could not delete ${failures[0]?.path} (${failures[0]?.code})`,
        });
    }
  }

  // Manifests of tasks that are gone (a rolled-back `new`, a record lost in a crash).
  const manifests = path.join(home, 'provision');
  for (const project of listDir(manifests)) {
    for (const id of listDir(path.join(manifests, project))) {
      if (live.has(`${project}/${id}`)) continue;
      const dir = path.join(manifests, project, id);
      if (removeTree(dir).length === 0) out.removed.push({ kind: 'manifests', path: dir, id, action: 'delete-dir' });
    }
  }

  const used = new Set(
    allTasks
      .flatMap((t) => provisionRecords(t.data).map((r) => r.snapshot))
      .filter((k): k is string => k !== undefined),
  );
  const mountedLowers = readMounts().map((m) => overlayOption(m, 'lowerdir') ?? '');
  for (const name of listDir(snapshotsDir(home))) {
    if (name.endsWith('.lock') || name.endsWith('.takeover')) continue;
    const dir = path.join(snapshotsDir(home), name);
    const key = name.replace(/^\.tmp-/, '').replace(/-\d+$/, '');
    if (used.has(key) || mountedLowers.some((l) => l.split(':').some((p) => p.startsWith(`${dir}/`)))) {
      const users = allTasks
        .filter((t) => provisionRecords(t.data).some((r) => r.snapshot === key))
        .map((t) => (t.project === ctx.key ? t.id : `${t.id} (another repository)`));
      if (!name.startsWith('.'))
        out.kept.push({
          kind: 'snapshot',
          path: dir,
          reason:
            users.length > 0
              ? `a dependency snapshot in use by task(s) ${users.slice(0, 5).join(', ')}${users.length > 5 ? ` and ${users.length - 5} more` : ''}; gc removes it once no task uses it (\`warren rm ${users[0]}\`)`
              : 'mounted; gc removes it once it is unmounted',
        });
      continue;
    }
    const current = currentGateSnapshot(dir);
    if (current) {
      out.kept.push({
        kind: 'snapshot',
        path: dir,
        reason: `${current}; the next task and merge-queue gate use it (\`${shellCommand(['rm', '-r', '--', dir])}\` removes it, and the next gate installs it again)`,
      });
      continue;
    }
    // Held while a snapshot is being taken and until it is mounted: not garbage yet.
    const lock = tryAcquire(snapshotLockPath(home, key), 'gc');
    if (!lock.ok) {
      out.kept.push({ kind: 'snapshot', path: dir, reason: 'being taken or mounted by a running warren' });
      continue;
    }
    try {
      recordRemoval(out, 'snapshot', dir, removeTree(dir));
    } finally {
      lock.lock.release();
      fs.rmSync(snapshotLockPath(home, key), { force: true });
    }
  }
  return out;
}

/**
 * A snapshot the merge queue's gate installed, whose lockfile is still the main checkout's: the
 * main checkout's own folder may be an older install, so it could not be taken again from there.
 * What it is, for the kept list; null for any other snapshot.
 */
function currentGateSnapshot(dir: string): string | null {
  const meta = readSnapshotMeta(dir);
  if (meta?.builtBy !== 'gate' || !meta.lockfile || !meta.source.endsWith(`/${meta.path}`)) return null;
  const root = meta.source.slice(0, -meta.path.length - 1);
  if (sha256File(path.join(root, meta.lockfile.path)) !== meta.lockfile.sha256) return null;
  return `the merge queue installed ${meta.path} from ${root}'s current ${meta.lockfile.path}`;
}
