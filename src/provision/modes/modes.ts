import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { removeTree } from '../../system/remove-tree.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { EventKind, EventPayloads } from '../../state/events.js';
import { formatBytes, overBudget, type Budget } from './budget.js';
import { bestCopyMethod, hardlinkTree, startCopy } from './copy.js';
import { layerDirs, manifestFile } from '../layout.js';
import {
  containTree,
  findingsForCopy,
  newFindings,
  noteEntry,
  scanTree,
  type Contained,
  type Findings,
} from './contain.js';
import {
  manifestTotals,
  retakeManifest,
  takeManifest,
  withoutInodes,
  writeManifest,
  type Manifest,
} from '../status/manifest.js';
import { overlaySupport } from '../cow-support.js';
import { checkLayerPaths, FUSE_OVERLAY_FSTYPE, mountOverlay, overlayAt } from '../../system/overlay.js';
import { installCommand, installedFacts, isNodeModules } from '../snapshots/installed.js';
import { ensureSnapshot, lastGoodSnapshot, lockfileFor, snapshotKey, type Snapshot } from '../snapshots/snapshot.js';
import type { InstalledFacts, ProvisionItem, ProvisionRecord } from '../types.js';

/** What one mode hands back: a record, or a reason it skipped the path. */
export type ModeOutcome = { record: ProvisionRecord } | { skip: 'over-budget'; detail: string };

export interface ModeEnv {
  ctx: ProjectContext;
  task: Task;
  budget: { limit: Budget; used: Budget };
  progress(line: string): void;
  /**
   * The tree whose lockfiles decide the snapshot key (default: the main checkout). The merge
   * queue's gate passes the integrated tree, so a snapshot built for its lockfile is the one used.
   */
  lockfileRoot?: string;
  /** Records an event; the CLI shows every warning event itself, so a warning is not also a progress line. */
  event<K extends EventKind>(kind: K, level: 'info' | 'warn', message: string, data: EventPayloads[K]): void;
}

function base(
  env: ModeEnv,
  item: ProvisionItem,
): Pick<ProvisionRecord, 'path' | 'requested' | 'source'> & { lockfile?: ProvisionRecord['lockfile'] } {
  const source = path.join(env.ctx.repo.root, item.path);
  // Only an install folder comes from a lockfile; `.env` beside package-lock.json does not.
  const lock = fs.statSync(source, { throwIfNoEntry: false })?.isDirectory()
    ? lockfileFor(env.lockfileRoot ?? env.ctx.repo.root, item.path)
    : null;
  return { path: item.path, requested: item.mode, source, ...(lock ? { lockfile: lock } : {}) };
}

/**
 * `cp` starts at once; meanwhile one walk of the source gives the budget check and the manifest
 * (cp -a keeps size and mtime, so the source's facts are the copy's, inodes aside) and finds
 * what containment must look at. On an idle machine the walk runs beside cp on another core,
 * so the whole costs what `cp -a` costs; over budget, the copy is killed and what it had made
 * deleted before anything more is written.
 */
export async function provisionCopy(
  env: ModeEnv,
  item: ProvisionItem,
  dst: string,
  fallback?: string,
): Promise<ModeOutcome> {
  return (await provisionCopies(env, [{ item, dst }], fallback))[0] as ModeOutcome;
}

/**
 * Several paths with the same parent folder (what `.worktreeinclude` selects inside a folder
 * it does not select whole, e.g. `node_modules/*` less one package) by one `cp`: one process
 * rather than hundreds. One outcome per path, in order. Should the group go over the budget,
 * it is undone and each path is copied on its own, so each is kept or skipped by itself.
 */
export async function provisionCopies(
  env: ModeEnv,
  group: readonly { item: ProvisionItem; dst: string }[],
  fallback?: string,
): Promise<ModeOutcome[]> {
  const started = Date.now();
  const first = group[0];
  if (!first) return [];
  const recs = group.map((g) => base(env, g.item));
  const label =
    group.length === 1 ? first.item.path : `${group.length} paths in ${path.posix.dirname(first.item.path)}`;
  const method = await bestCopyMethod(path.dirname(first.dst));
  const abort = new AbortController();
  let total: number | null = null; // known once the manifest walks below are done
  const copying = startCopy(
    group.length === 1 ? (recs[0] as (typeof recs)[number]).source : recs.map((r) => r.source),
    group.length === 1 ? first.dst : path.dirname(first.dst),
    method,
    abort.signal,
    (written) =>
      env.progress(
        `warren: copying ${label}: ${formatBytes(written)}${total ? ` of ${formatBytes(total)} (${Math.min(99, Math.floor((written * 100) / total))}%)` : ''}…`,
      ),
  );
  copying.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  const undo = async (): Promise<void> => {
    abort.abort();
    await copying.catch(() => undefined);
    for (const g of group) removeTree(g.dst);
  };
  const walked: { facts: Manifest; found: Findings; counted: Budget }[] = [];
  try {
    for (const r of recs) {
      const found = newFindings();
      const facts = takeManifest(r.source, (rel, st) => noteEntry(found, rel, st));
      walked.push({ facts, found, counted: manifestTotals(facts) });
    }
  } catch (err) {
    await undo();
    throw err;
  }
  const counted = walked.reduce(
    (sum, w) => ({ entries: sum.entries + w.counted.entries, bytes: sum.bytes + w.counted.bytes }),
    { entries: 0, bytes: 0 },
  );
  const over = overBudget(env.budget.used, env.budget.limit, counted);
  if (over) {
    await undo();
    if (group.length === 1) return [{ skip: 'over-budget', detail: `${first.item.path}: ${over}` }];
    const each: ModeOutcome[] = [];
    for (const g of group) each.push(...(await provisionCopies(env, [g], fallback)));
    return each;
  }
  total = counted.bytes;
  env.budget.used.entries += counted.entries;
  env.budget.used.bytes += counted.bytes;
  if (counted.entries > 2000) env.progress(`warren: copying ${label} (${counted.entries} entries)…`);
  // Written while cp still runs; a failed copy takes its manifests with it.
  const manifests = group.map((g) => manifestFile(env.ctx, env.task.id, g.item.path));
  const copied = walked.map((w) => withoutInodes(w.facts));
  copied.forEach((m, i) => writeManifest(manifests[i] as string, m));
  try {
    await copying;
  } catch (err) {
    for (const m of manifests) fs.rmSync(m, { force: true });
    throw err;
  }
  const outcomes: ModeOutcome[] = [];
  for (const [i, g] of group.entries()) {
    const rec = recs[i] as (typeof recs)[number];
    const w = walked[i] as (typeof walked)[number];
    let manifest = copied[i] as Manifest;
    // The source's walk saw every link cp -a copied (or the copy is walked again); each is verified here, so `isolated` is true.
    const checked = findingsForCopy(w.found, g.dst);
    if (checked.rewalked) manifest = withoutInodes(takeManifest(g.dst));
    const contained = await contain(env, g.item, g.dst, rec.source, checked.found);
    retakeManifest(manifest, g.dst, contained.changed, false);
    const changed = checked.rewalked || contained.changed.length > 0;
    if (changed) writeManifest(manifests[i] as string, manifest);
    const totals = changed ? manifestTotals(manifest) : w.counted;
    outcomes.push({
      record: {
        ...rec,
        mode: 'copy',
        isolated: true,
        method,
        entries: totals.entries,
        bytes: totals.bytes,
        ms: Date.now() - started,
        manifest: manifests[i] as string,
        ...(fallback ? { fallback } : {}),
        ...containedFacts(contained),
      },
    });
  }
  return outcomes;
}

/**
 * Makes a provisioned tree contained (contain.ts) and says what was done: a warning event per
 * path naming every link that led outside and every entry taken out.
 */
async function contain(
  env: ModeEnv,
  item: ProvisionItem,
  tree: string,
  source: string,
  found: Findings,
): Promise<Contained> {
  const contained = await containTree({
    tree,
    itemRel: item.path,
    source,
    repoRoot: env.ctx.repo.root,
    found,
    budget: env.budget,
  });
  reportContained(env, item.path, contained);
  return contained;
}

function reportContained(
  env: ModeEnv,
  itemPath: string,
  contained: Pick<Contained, 'outsideLinks' | 'stripped'>,
): void {
  const { outsideLinks, stripped } = contained;
  if (outsideLinks.length > 0) {
    const listed = outsideLinks.slice(0, 10).map((l) => `${l.path} -> ${l.target} ${l.why}`);
    env.event(
      'provision.outside_links',
      'warn',
      `${itemPath}: ${outsideLinks.length} symlink(s) pointed outside the workspace, where a write through them would land: ${listed.join('; ')}${outsideLinks.length > 10 ? `; and ${outsideLinks.length - 10} more (warren show --json lists them)` : ''}`,
      { path: itemPath, links: outsideLinks.slice(0, 100) },
    );
  }
  if (stripped.length > 0) {
    const listed = stripped.slice(0, 10).map((e) => `${e.path} (${e.why})`);
    env.event(
      'provision.stripped',
      'warn',
      `${itemPath}: left out of the workspace's copy: ${listed.join(', ')}${stripped.length > 10 ? `, and ${stripped.length - 10} more` : ''}`,
      {
        path: itemPath,
        entries: stripped.slice(0, 100),
      },
    );
  }
}

/** The record's account of containment (absent when there was nothing to do). */
function containedFacts(
  contained: Pick<Contained, 'outsideLinks' | 'stripped'>,
): Pick<ProvisionRecord, 'outsideLinks' | 'stripped' | 'contained'> {
  return {
    contained: true,
    ...(contained.outsideLinks.length > 0 ? { outsideLinks: contained.outsideLinks.slice(0, 100) } : {}),
    ...(contained.stripped.length > 0 ? { stripped: contained.stripped.slice(0, 100) } : {}),
  };
}

export async function provisionHardlink(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = base(env, item);
  env.progress(`warren: linking ${item.path}…`);
  const outcome = await hardlinkTree(rec.source, dst);
  // Inodes matter here: the same inode with a new size or mtime is a write through the link.
  const found = newFindings();
  const snapshot = takeManifest(dst, (rel, st) => noteEntry(found, rel, st));
  const contained = await contain(env, item, dst, rec.source, found.crossesDevice ? scanTree(dst) : found);
  retakeManifest(snapshot, dst, contained.changed, true);
  const manifest = manifestFile(env.ctx, env.task.id, item.path);
  writeManifest(manifest, snapshot);
  const { entries, bytes } = manifestTotals(snapshot);
  const linked = outcome.linked ?? Object.values(snapshot.entries).filter((f) => f[0] !== 'd').length;
  if (outcome.filled > 0 || outcome.failed.length > 0) {
    if (outcome.failed.length === 0)
      env.progress(`warren: ${item.path}: ${outcome.filled} file(s) could not be hard-linked and were copied instead`);
    env.event(
      'provision.fill',
      outcome.failed.length > 0 ? 'warn' : 'info',
      `${item.path}: the kernel refused to hard-link ${outcome.filled + outcome.failed.length} file(s); ${outcome.filled} copied instead${
        outcome.failed.length > 0
          ? `, ${outcome.failed.length} could not be copied either (${outcome.failed
              .slice(0, 5)
              .map((f) => f.path)
              .join(', ')})`
          : ''
      }`,
      { path: item.path, linked, filled: outcome.filled, failed: outcome.failed.slice(0, 100) },
    );
  }
  if (outcome.failed.length > 0) {
    throw new WarrenError(
      'PROVISION_FAILED',
      `${item.path}: ${outcome.failed.length} file(s) could neither be hard-linked nor copied (first: ${outcome.failed[0]?.path}: ${outcome.failed[0]?.error})`,
    );
  }
  return {
    record: {
      ...rec,
      mode: 'hardlink',
      isolated: false,
      method: 'cp -al',
      entries,
      bytes,
      ms: Date.now() - started,
      manifest,
      linked,
      filled: outcome.filled,
      ...containedFacts(contained),
    },
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
  return {
    record: {
      ...rec,
      mode: 'share',
      isolated: false,
      method: 'symlink',
      entries: 1,
      bytes: 0,
      ms: Date.now() - started,
      manifest,
    },
  };
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
    const namespaced = support.ok && support.how === 'namespaced';
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
