import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { EventKind, EventPayloads } from '../state/events.js';
import { formatBytes, overBudget, type Budget } from './budget.js';
import { bestCopyMethod, hardlinkTree, startCopy } from './copy.js';
import { layerDirs, manifestFile } from './layout.js';
import { manifestTotals, takeManifest, withoutInodes, writeManifest } from './manifest.js';
import { checkLayerPaths, FUSE_OVERLAY_FSTYPE, mountOverlay, overlayAt, overlaySupport } from './overlay.js';
import { ensureSnapshot, lockfileFor, snapshotKey } from './snapshot.js';
import type { ProvisionItem, ProvisionRecord } from './types.js';

/** What one mode hands back: a record, or a reason it skipped the path. */
export type ModeOutcome = { record: ProvisionRecord } | { skip: 'over-budget'; detail: string };

export interface ModeEnv {
  ctx: ProjectContext;
  task: Task;
  budget: { limit: Budget; used: Budget };
  progress(line: string): void;
  /** Records an event; the CLI shows every warning event itself, so a warning is not also a progress line. */
  event<K extends EventKind>(kind: K, level: 'info' | 'warn', message: string, data: EventPayloads[K]): void;
}

function base(env: ModeEnv, item: ProvisionItem): Pick<ProvisionRecord, 'path' | 'requested' | 'source'> & { lockfile?: ProvisionRecord['lockfile'] } {
  const source = path.join(env.ctx.repo.root, item.path);
  // Only an install folder comes from a lockfile; `.env` beside package-lock.json does not.
  const lock = fs.statSync(source, { throwIfNoEntry: false })?.isDirectory() ? lockfileFor(env.ctx.repo.root, item.path) : null;
  return { path: item.path, requested: item.mode, source, ...(lock ? { lockfile: lock } : {}) };
}

/**
 * `cp` starts at once; meanwhile one walk of the source gives the budget check and the manifest
 * (cp -a keeps size and mtime, so the source's facts are the copy's, inodes aside). The walk
 * is much faster than the copy, so the whole costs what `cp -a` costs; over budget, the copy
 * is killed and what it had made deleted before anything more is written.
 */
export async function provisionCopy(env: ModeEnv, item: ProvisionItem, dst: string, fallback?: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = base(env, item);
  const method = await bestCopyMethod(path.dirname(dst));
  const abort = new AbortController();
  let total: number | null = null; // known once the manifest walk below is done
  const copying = startCopy(rec.source, dst, method, abort.signal, (written) =>
    env.progress(`warren: copying ${item.path}: ${formatBytes(written)}${total ? ` of ${formatBytes(total)} (${Math.min(99, Math.floor((written * 100) / total))}%)` : ''}…`),
  );
  copying.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  let facts: ReturnType<typeof takeManifest>;
  try {
    facts = takeManifest(rec.source);
  } catch (err) {
    abort.abort();
    await copying.catch(() => undefined);
    removeTree(dst);
    throw err;
  }
  const counted = manifestTotals(facts);
  const over = overBudget(env.budget.used, env.budget.limit, counted);
  if (over) {
    abort.abort();
    await copying.catch(() => undefined);
    removeTree(dst);
    return { skip: 'over-budget', detail: `${item.path}: ${over}` };
  }
  total = counted.bytes;
  env.budget.used.entries += counted.entries;
  env.budget.used.bytes += counted.bytes;
  if (counted.entries > 2000) env.progress(`warren: copying ${item.path} (${counted.entries} entries)…`);
  // Written while cp still runs; a failed copy takes its manifest with it.
  const manifest = manifestFile(env.ctx, env.task.id, item.path);
  writeManifest(manifest, withoutInodes(facts));
  try {
    await copying;
  } catch (err) {
    fs.rmSync(manifest, { force: true });
    throw err;
  }
  return {
    record: { ...rec, mode: 'copy', isolated: true, method, entries: counted.entries, bytes: counted.bytes, ms: Date.now() - started, manifest, ...(fallback ? { fallback } : {}) },
  };
}

export async function provisionHardlink(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = base(env, item);
  env.progress(`warren: linking ${item.path}…`);
  const outcome = await hardlinkTree(rec.source, dst);
  // Inodes matter here: the same inode with a new size or mtime is a write through the link.
  const snapshot = takeManifest(dst);
  const manifest = manifestFile(env.ctx, env.task.id, item.path);
  writeManifest(manifest, snapshot);
  const { entries, bytes } = manifestTotals(snapshot);
  const linked = outcome.linked ?? Object.values(snapshot.entries).filter((f) => f[0] !== 'd').length;
  if (outcome.filled > 0 || outcome.failed.length > 0) {
    if (outcome.failed.length === 0) env.progress(`warren: ${item.path}: ${outcome.filled} file(s) could not be hard-linked and were copied instead`);
    env.event(
      'provision.fill',
      outcome.failed.length > 0 ? 'warn' : 'info',
      `${item.path}: the kernel refused to hard-link ${outcome.filled + outcome.failed.length} file(s); ${outcome.filled} copied instead${outcome.failed.length > 0 ? `, ${outcome.failed.length} could not be copied either (${outcome.failed.slice(0, 5).map((f) => f.path).join(', ')})` : ''}`,
      { path: item.path, linked, filled: outcome.filled, failed: outcome.failed.slice(0, 100) },
    );
  }
  if (outcome.failed.length > 0) {
    throw new WarrenError('PROVISION_FAILED', `${item.path}: ${outcome.failed.length} file(s) could neither be hard-linked nor copied (first: ${outcome.failed[0]?.path}: ${outcome.failed[0]?.error})`);
  }
  return {
    record: { ...rec, mode: 'hardlink', isolated: false, method: 'cp -al', entries, bytes, ms: Date.now() - started, manifest, linked, filled: outcome.filled },
  };
}

export async function provisionShare(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = base(env, item);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.symlinkSync(rec.source, dst, 'junction');
  // Taken of the shared source: `status` reports what anyone changed there since.
  const manifest = manifestFile(env.ctx, env.task.id, item.path);
  writeManifest(manifest, takeManifest(rec.source));
  return { record: { ...rec, mode: 'share', isolated: false, method: 'symlink', entries: 1, bytes: 0, ms: Date.now() - started, manifest } };
}

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
  const rec = base(env, item);
  const support = await overlaySupport(env.ctx.store.home);
  const source = fs.lstatSync(rec.source);
  const unsupported = !support.ok ? support.reason : !source.isDirectory() ? `${item.path} is not a directory, and overlay layers are directories` : null;
  if (unsupported !== null) return fallBack(env, item, dst, unsupported);
  const key = snapshotKey(item.path, rec.source, rec.lockfile ?? null);
  const snap = await ensureSnapshot(env.ctx.store.home, key, { path: item.path, source: rec.source, lockfile: rec.lockfile ?? null }, env.progress);
  try {
    if (snap.created) {
      env.event('provision.snapshot', 'info', `took snapshot ${key.slice(0, 12)} of ${item.path}: ${snap.meta.entries} entries in ${snap.meta.ms} ms (first time only)`, {
        path: item.path,
        snapshot: key,
        entries: snap.meta.entries,
        bytes: snap.meta.bytes,
        ms: snap.meta.ms,
      });
    }
    const { upper, work } = layerDirs(env.ctx, env.task.id, item.path);
    fs.mkdirSync(upper, { recursive: true });
    fs.mkdirSync(work, { recursive: true });
    fs.mkdirSync(dst, { recursive: true });
    const namespaced = support.ok && support.how === 'namespaced';
    const fuse = support.ok && support.how === 'fuse';
    // Namespaced, each run makes the mount; what can be checked now is that its options can carry the paths.
    const mounted = namespaced ? checkLayerPaths(snap.tree, upper, work, dst) : await mountOverlay(snap.tree, upper, work, dst, fuse);
    if (!mounted.ok) {
      // The mount is the probe: the kernel or this file system said no. Fall back, saying why.
      fs.rmdirSync(dst);
      removeTree(path.dirname(upper));
      // Not root, inside a cow checkout (itself fuse-overlayfs): fusermount, running as root, may not enter another FUSE mount without allow_other.
      const nested = fuse && overlayAt(env.task.path)?.fsType === FUSE_OVERLAY_FSTYPE ? '; the workspace is itself a fuse-overlayfs checkout, and fusermount cannot mount inside another FUSE mount unless /etc/fuse.conf allows allow_other' : '';
      return fallBack(env, item, dst, `mounting ${fuse ? 'fuse-overlayfs' : 'overlay'} failed (${mounted.error})${nested}`);
    }
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
        snapshot: key,
        lower: snap.tree,
        upper,
        work,
      },
    };
  } finally {
    snap.lock.release();
  }
}

/** The next rung of the ladder: the best isolated copy (clone where the file system can), with an event saying which and why. */
async function fallBack(env: ModeEnv, item: ProvisionItem, dst: string, reason: string): Promise<ModeOutcome> {
  const outcome = await provisionCopy(env, item, dst, reason);
  if ('record' in outcome) {
    env.event('provision.fallback', 'warn', `${item.path}: cow fell back to ${outcome.record.method} because ${reason}`, {
      path: item.path,
      requested: 'cow',
      used: outcome.record.method,
      reason,
    });
  }
  return outcome;
}
