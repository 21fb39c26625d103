import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from '../../system/remove-tree.js';
import { layersForSandbox, overlaySupport } from '../cow-support.js';
import { sandboxKindFor } from '../../config/sandbox.js';
import { layerDirs } from '../layout.js';
import { checkLayerPaths, FUSE_OVERLAY_FSTYPE, mountOverlay, overlayAt } from '../../system/overlay.js';
import { installCommand, installedFacts, isNodeModules } from '../snapshots/installed.js';
import { ensureSnapshot, lastGoodSnapshot, snapshotKey, type Snapshot } from '../snapshots/snapshot.js';
import type { InstalledFacts, ProvisionItem } from '../types.js';
import { containedFacts, provisionCopy, recordBase, reportContained, type ModeEnv, type ModeOutcome } from './modes.js';

/**
 * `cow`: an overlay whose lower layer is the shared snapshot and whose upper layer is this
 * workspace's alone. As root it is mounted here, for everyone; not root, fuse-overlayfs mounts
 * it here for the user's own processes; failing that (`namespaced`) only the layers and the
 * empty mount point are made here, and every command warren runs in the workspace mounts it in
 * its own namespace. Where overlay cannot be mounted, the best isolated
 * copy, and an event saying which and why.
 */
export async function provisionCow(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = recordBase(env, item);
  const support = await overlaySupport(env.ctx.store.home);
  const source = fs.lstatSync(rec.source);
  const unsupported = !support.ok
    ? support.reason
    : !source.isDirectory()
      ? `${item.path} is not a directory, and overlay layers are directories`
      : null;
  if (unsupported !== null) return fallBack(env, item, dst, unsupported);
  const key = snapshotKey(item.path, rec.source, rec.lockfile ?? null);
  const home = env.ctx.store.home;
  const containIn = { repoRoot: env.ctx.repo.root, budget: env.budget.limit };
  // A node_modules is checked against its lockfile before it becomes the snapshot for that lockfile.
  const verify = isNodeModules(item.path) ? { verify: () => installedFacts(env.ctx.repo.root, item.path) } : {};
  const taken = await ensureSnapshot(
    home,
    key,
    { path: item.path, source: rec.source, lockfile: rec.lockfile ?? null },
    env.progress,
    containIn,
    verify,
  );
  let snap: Snapshot;
  let stale: InstalledFacts | undefined;
  if (taken === null) throw new Error('ensureSnapshot returned nothing without existingOnly');
  if ('refused' in taken) {
    // The main checkout's install is stale: the last good snapshot, else a copy of what is there; either way the task is stale.
    stale = taken.refused;
    const good = lastGoodSnapshot(home, rec.source, item.path);
    const reused = good
      ? await ensureSnapshot(home, good.key, good, env.progress, containIn, { existingOnly: true })
      : null;
    if (reused === null || 'refused' in reused) {
      staleEvent(env, item.path, stale, `a copy of the main checkout's stale ${item.path}`);
      const outcome = await provisionCopy(
        env,
        item,
        dst,
        `the main checkout's ${item.path} does not match ${stale.lockfile ?? 'package.json'} and there is no earlier snapshot`,
      );
      return 'record' in outcome ? { record: { ...outcome.record, installed: stale } } : outcome;
    }
    snap = reused;
    staleEvent(
      env,
      item.path,
      stale,
      `the last good snapshot (${snap.meta.key.slice(0, 12)}, taken ${snap.meta.createdAt}${snap.meta.lockfile ? ` from ${snap.meta.lockfile.path} as it was then` : ''})`,
    );
  } else {
    snap = taken;
  }
  try {
    if (snap.created) {
      env.event(
        'provision.snapshot',
        'info',
        `took snapshot ${key.slice(0, 12)} of ${item.path}: ${snap.meta.entries} entries in ${snap.meta.ms} ms (first time only)`,
        {
          path: item.path,
          snapshot: key,
          entries: snap.meta.entries,
          bytes: snap.meta.bytes,
          ms: snap.meta.ms,
        },
      );
    }
    const { upper, work } = layerDirs(env.ctx, env.task.id, item.path);
    fs.mkdirSync(upper, { recursive: true });
    fs.mkdirSync(work, { recursive: true });
    fs.mkdirSync(dst, { recursive: true });
    // As root, a sandboxed task's layer too: the sandbox runs as another uid, which root's overlay
    // (no idmapped mounts) cannot be given; one mounted in each command's namespace can (sandbox-uid.ts).
    const forSandbox = support.ok && support.how === 'global' && layersForSandbox(sandboxKindFor(env.ctx, env.task));
    const namespaced = (support.ok && support.how === 'namespaced') || forSandbox;
    const fuse = support.ok && support.how === 'fuse';
    // Namespaced, each run makes the mount; what can be checked now is that its options can carry the paths.
    const mounted = namespaced
      ? checkLayerPaths(snap.tree, upper, work, dst)
      : await mountOverlay(snap.tree, upper, work, dst, fuse);
    if (!mounted.ok) {
      // The mount is the probe: the kernel or this file system said no. Fall back, saying why.
      fs.rmdirSync(dst);
      removeTree(path.dirname(upper));
      // Not root, inside a cow checkout (itself fuse-overlayfs): fusermount, running as root, may not enter another FUSE mount without allow_other.
      const nested =
        fuse && overlayAt(env.task.path)?.fsType === FUSE_OVERLAY_FSTYPE
          ? '; the workspace is itself a fuse-overlayfs checkout, and fusermount cannot mount inside another FUSE mount unless /etc/fuse.conf allows allow_other'
          : '';
      return fallBack(
        env,
        item,
        dst,
        `mounting ${fuse ? 'fuse-overlayfs' : 'overlay'} failed (${mounted.error})${nested}`,
      );
    }
    // The snapshot was made contained when it was taken; every workspace made from it says so.
    const contained = { outsideLinks: snap.meta.outsideLinks ?? [], stripped: snap.meta.stripped ?? [] };
    reportContained(env, item.path, contained);
    return {
      record: {
        ...rec,
        mode: 'cow',
        isolated: true,
        method: namespaced ? 'overlay (user namespace)' : fuse ? 'fuse-overlayfs' : 'overlay',
        ...(namespaced ? { namespaced: true } : {}),
        ...(fuse ? { fuse: true } : {}),
        entries: snap.meta.entries,
        bytes: snap.meta.bytes,
        ms: Date.now() - started,
        snapshot: snap.meta.key,
        lower: snap.tree,
        upper,
        work,
        ...containedFacts(contained),
        // Stale: the lockfile the snapshot was taken from, so `status` compares the workspace's with it.
        ...(stale
          ? { installed: stale, ...(snap.meta.lockfile ? { lockfile: snap.meta.lockfile } : {}) }
          : snap.meta.installed
            ? { installed: snap.meta.installed }
            : {}),
      },
    };
  } finally {
    snap.lock.release();
  }
}

/** Says that the main checkout's install is stale, what this workspace got instead, and what to do. */
export function staleEvent(env: ModeEnv, itemPath: string, stale: InstalledFacts, used: string): void {
  const cmd = installCommand(stale.manager, stale.lockfile);
  const id = env.task.id;
  env.event(
    'provision.install_stale',
    'warn',
    `${itemPath}: the main checkout's ${itemPath} does not match ${stale.lockfile ?? 'package.json'} (${stale.why ?? 'it differs'}), so no snapshot was taken of it; this workspace got ${used} and is stale. Reinstall in the main checkout (${cmd}) and run \`warren provision ${id} --refresh\`, or install in the workspace: \`warren exec ${id} -- ${cmd}\``,
    { path: itemPath, lockfile: stale.lockfile, why: stale.why ?? '', used },
  );
}

/** The next rung of the ladder: the best isolated copy (clone where the file system can), with an event saying which and why. */
async function fallBack(env: ModeEnv, item: ProvisionItem, dst: string, reason: string): Promise<ModeOutcome> {
  const outcome = await provisionCopy(env, item, dst, reason);
  if ('record' in outcome) {
    env.event(
      'provision.fallback',
      'warn',
      `${item.path}: cow fell back to ${outcome.record.method} because ${reason}`,
      {
        path: item.path,
        requested: 'cow',
        used: outcome.record.method,
        reason,
      },
    );
  }
  return outcome;
}
