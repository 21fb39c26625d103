import fs from 'node:fs';
import path from 'node:path';
import type { Where } from '../../git/exec.js';
import { statusOf } from '../../git/status.js';
import type { Task } from '../../state/types.js';
import { diffManifests, readManifest, takeManifest, walkTree, type Change } from './manifest.js';
import { hiddenInNamespace, overlayAt } from '../../system/overlay.js';
import { readMounts, type MountEntry } from '../../system/mounts.js';
import { summarise, type PackageChange, type VersionOf } from './packages.js';
import { readEntry, withoutRelocations } from '../relocate/relocate.js';
import { replacementAt, replacementChanges, type Replacement } from '../modes/replaced.js';
import { staleEntries, type StaleEntry } from '../snapshots/stale.js';
import { provisionRecords, verifiedIsolated, type ProvisionRecord } from '../types.js';
import { lexists, lstatOrNull } from '../../util/lexists.js';
import { listDir } from '../../util/list-dir.js';
import { SameVerdicts } from './same-content.js';
import { modeKind } from '../modes/kinds.js';
import { sharedChangesSince, treeChangesSince } from './since.js';

export interface ProvisionedStatus {
  path: string;
  mode: ProvisionRecord['mode'];
  isolated: boolean;
  /** Paths relative to the workspace root. */
  changed: Change[];
  /** How many changes there were (`changed` holds at most MAX_LISTED). */
  changedCount: number;
  /** share: these changes are seen by every workspace that shares the path, and the main checkout. */
  affectsAllSharers?: true;
  /** hardlink: files written in place through a link, so the main checkout's copy changed too. */
  writtenThrough?: string[];
  /** Why the changes could not be read, when they could not. */
  unknown?: string;
  /** The changes per package (or per top-level entry), for a folder with changes: `changed` lists every file. */
  packages?: PackageChange[];
  /**
   * cow: something else is at the path instead of the layer (src/provision/modes/replaced.ts); then
   * `changed` is what a replacing folder holds against the snapshot, and `layerChanges` counts
   * the layer's own changes, kept out of view.
   */
  replaced?: Replacement & { layerChanges: number };
}

export interface TaskStatus {
  tracked: { code: string; path: string }[];
  provisioned: ProvisionedStatus[];
  stale: boolean;
  staleLockfiles: StaleEntry[];
}

export const MAX_LISTED = 500;

/** Beside a cow path's upper layer: the entries found identical to the snapshot (same-content.ts). */
const SAME_FILE = 'same.json';

/**
 * How to tell which lower entries an opaque directory of the upper layer hides (one replaced
 * with `rm -rf dir && mkdir dir`): the merged view of a global mount, the lower entries a
 * namespaced overlay hides (read in a namespace), or — unmounted — not at all.
 */
export type MergedView = { merged: string } | { hidden: ReadonlySet<string> } | null;

/**
 * What an entry of an upper layer marks, when it is overlay's bookkeeping and not a file of the
 * task. Kernel overlayfs and fuse-overlayfs (as root) whiteout a deleted NAME with a 0:0
 * character device; fuse-overlayfs without mknod rights writes a `.wh.NAME` file instead, and
 * marks a replaced directory opaque with a `.wh..wh..opq` file (next to a `.wh..opq` whiteout of
 * its own). Kernel overlayfs keeps opacity in an xattr, which the merged view answers for.
 */
export type OverlayMarker = { kind: 'whiteout'; of: string } | { kind: 'opaque' } | null;

const WHITEOUT_PREFIX = '.wh.';
const OPAQUE_NAMES: ReadonlySet<string> = new Set(['.wh..wh..opq', '.wh..opq']);

export function overlayMarker(name: string, st: fs.Stats): OverlayMarker {
  if (OPAQUE_NAMES.has(name)) return { kind: 'opaque' };
  const prefixed = name.startsWith(WHITEOUT_PREFIX) && name.length > WHITEOUT_PREFIX.length;
  if (st.isCharacterDevice() && st.rdev === 0)
    return { kind: 'whiteout', of: prefixed ? name.slice(WHITEOUT_PREFIX.length) : name };
  if (prefixed && !st.isDirectory()) return { kind: 'whiteout', of: name.slice(WHITEOUT_PREFIX.length) };
  return null;
}

/**
 * Reads a cow path's upper layer: every entry there that differs from the snapshot's is a
 * change (an identical rewrite is not: same-content.ts), except overlay's markers: a
 * whiteout is the deletion of what it hides (nothing, when the snapshot never had it), an opaque
 * marker the deletion of every snapshot entry of its directory the layer does not hold.
 */
export function upperChanges(
  upper: string,
  lower: string,
  view: MergedView,
  verdicts: SameVerdicts = new SameVerdicts(null),
): Change[] {
  const changes = new Map<string, Change['change']>();
  const hidden = (rel: string): boolean =>
    view === null ? false : 'merged' in view ? !lexists(path.join(view.merged, rel)) : view.hidden.has(rel);
  const inLower = (rel: string): boolean => lexists(path.join(lower, rel));
  // What each upper folder holds (overlay's markers aside), from the walk itself: the snapshot's
  // entries a folder lacks are then found by its listing alone, not an lstat of each.
  const held = new Map<string, Set<string>>();
  const hold = (dir: string, name: string): void => {
    let names = held.get(dir);
    if (names === undefined) held.set(dir, (names = new Set()));
    names.add(name);
  };
  const inUpper = (rel: string): boolean => {
    const slash = rel.lastIndexOf('/');
    return held.get(slash < 0 ? '' : rel.slice(0, slash))?.has(rel.slice(slash + 1)) === true;
  };
  const pending: { dir: string; gone: (child: string) => boolean }[] = [];
  const lowerChildrenGone = (dir: string, gone: (child: string) => boolean): void => void pending.push({ dir, gone });
  const whiteouts: string[] = [];
  walkTree(upper, (rel, st) => {
    if (rel === '') return;
    const slash = rel.lastIndexOf('/');
    const dir = slash < 0 ? '' : rel.slice(0, slash);
    const marker = overlayMarker(rel.slice(slash + 1), st);
    if (marker === null) hold(dir, rel.slice(slash + 1));
    if (marker?.kind === 'opaque') {
      lowerChildrenGone(dir, () => true);
    } else if (marker?.kind === 'whiteout') {
      whiteouts.push(dir === '' ? marker.of : `${dir}/${marker.of}`);
    } else if (st.isDirectory()) {
      if (!inLower(rel)) changes.set(rel, 'added');
      else if (view !== null) lowerChildrenGone(rel, hidden);
    } else if (verdicts.knownSame(rel, st) !== true) {
      // Content, not presence: a file the install rewrote identically is no change (issue 41).
      const below = lstatOrNull(`${lower}/${rel}`); // joined by hand, as walkTree does: 20,000 of them
      if (below === null) changes.set(rel, 'added');
      else if (!verdicts.same(rel, `${upper}/${rel}`, st, `${lower}/${rel}`, below)) changes.set(rel, 'modified');
    }
  });
  // After the walk, when every folder's entries are known.
  for (const of of whiteouts) if (inLower(of) && !inUpper(of)) changes.set(of, 'deleted');
  for (const { dir, gone } of pending)
    for (const name of listDir(path.join(lower, dir))) {
      const child = dir === '' ? name : `${dir}/${name}`;
      if (!inUpper(child) && gone(child)) changes.set(child, 'deleted');
    }
  return [...changes].map(([p, change]) => ({ path: p, change })).sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * For a namespaced layer: one lower entry, absent from the upper layer, per directory of the
 * upper layer that is also in the lower one. Hidden in the merged view exactly when that
 * directory is opaque, so the answer for it holds for all its lower entries.
 */
export function opacityProbes(upper: string, lower: string): Map<string, string> {
  const probes = new Map<string, string>(); // probe → its directory
  walkTree(upper, (rel, st) => {
    if (rel === '' || !st.isDirectory() || !lexists(path.join(lower, rel))) return;
    const name = listDir(path.join(lower, rel)).find((n) => !n.includes('\n') && !lexists(path.join(upper, rel, n)));
    if (name !== undefined) probes.set(`${rel}/${name}`, rel);
  });
  return probes;
}

/** The lower entries a namespaced layer hides: every lower entry of each directory whose probe is hidden. */
async function namespacedView(
  upper: string,
  lower: string,
  target: string,
): Promise<{ view: MergedView; error?: string }> {
  const probes = opacityProbes(upper, lower);
  const seen = await hiddenInNamespace(upper, lower, target, [...probes.keys()]);
  if (!seen.ok)
    return { view: null, error: `entries hidden by a replaced directory could not be read (${seen.error})` };
  const hidden = new Set<string>();
  for (const probe of seen.hidden) {
    const dir = probes.get(probe);
    if (dir !== undefined) for (const name of listDir(path.join(lower, dir))) hidden.add(`${dir}/${name}`);
  }
  return { view: { hidden } };
}

async function recordStatus(task: Task, r: ProvisionRecord, table: readonly MountEntry[]): Promise<ProvisionedStatus> {
  const target = path.join(task.path, r.path);
  const out: ProvisionedStatus = {
    path: r.path,
    mode: r.mode,
    isolated: verifiedIsolated(r),
    changed: [],
    changedCount: 0,
  };
  let changes: Change[] = [];
  const replaced = modeKind(r.mode).layered && r.upper && r.lower ? replacementAt(target, table) : null;
  if (replaced && r.upper && r.lower) {
    out.replaced = { ...replaced, layerChanges: upperChanges(r.upper, r.lower, null).length };
    if (replaced.by === 'folder') changes = replacementChanges(target, r.lower);
  } else if (modeKind(r.mode).layered && r.upper && r.lower) {
    let view: MergedView = overlayAt(target, table) ? { merged: target } : null;
    if (r.namespaced) {
      const read = await namespacedView(r.upper, r.lower, target);
      view = read.view;
      if (read.error) out.unknown = read.error;
    }
    // The snapshot is immutable: a verdict whose upper entry has not moved needs no look below.
    const verdicts = new SameVerdicts(path.join(path.dirname(r.upper), SAME_FILE)).forLower(lstatOrNull(r.lower));
    changes = upperChanges(r.upper, r.lower, view, verdicts);
    verdicts.save();
  } else if (r.since !== undefined && !modeKind(r.mode).layered) {
    if (modeKind(r.mode).sharesSource) {
      changes = sharedChangesSince(r.source, r.since);
      out.affectsAllSharers = true;
    } else {
      const verdicts = new SameVerdicts(r.sameCache ?? null);
      const read = treeChangesSince(target, r.source, r.since, { left: leftOut(r), verdicts });
      verdicts.save();
      changes = read.changes;
      if (modeKind(r.mode).sharesInodes && read.writtenThrough.length > 0)
        out.writtenThrough = read.writtenThrough.map((p) => join(r.path, p));
    }
  } else if (r.manifest) {
    const before = readManifest(r.manifest);
    if (before === null) {
      out.unknown = `the manifest taken at provisioning (${r.manifest}) is missing`;
      return out;
    }
    const root = modeKind(r.mode).sharesSource ? r.source : target;
    changes = diffManifests(before, takeManifest(root));
    if (modeKind(r.mode).sharesSource) out.affectsAllSharers = true;
    if (modeKind(r.mode).sharesInodes) {
      // Same inode, new size or mtime: written in place through the link, so the source changed too.
      const through = changes.filter(
        (c) =>
          c.change === 'modified' &&
          before.entries[c.path]?.[0] === 'f' &&
          safeIno(path.join(target, c.path)) === before.entries[c.path]?.[3],
      );
      if (through.length > 0) out.writtenThrough = through.map((c) => join(r.path, c.path));
    }
  }
  // The files warren itself rewrote to name the workspace are not the task's changes.
  changes = withoutRelocations(changes, r, (rel) =>
    readEntry(r.namespaced && r.upper && !replaced ? r.upper : target, rel),
  );
  out.changedCount = changes.length;
  out.changed = changes.slice(0, MAX_LISTED).map((c) => ({ ...c, path: join(r.path, c.path) }));
  if (changes.some((c) => c.path !== ''))
    out.packages = summarise(
      changes,
      path.posix.basename(r.path) === 'node_modules',
      versionsBefore(r),
      replaced ? (name) => versionIn(target, name) : versionsAfter(r, target),
    );
  return out;
}

/** Where a package's version before the task can be read: the snapshot, or the main checkout it was copied from (a share's past is gone). */
function versionsBefore(r: ProvisionRecord): VersionOf {
  if (modeKind(r.mode).sharesSource) return null;
  const root = modeKind(r.mode).layered ? r.lower : r.source;
  return root ? (name) => versionIn(root, name) : null;
}

/** Where it can be read now: the workspace, or for a layer mounted only in each run, its upper layer over the snapshot. */
function versionsAfter(r: ProvisionRecord, target: string): VersionOf {
  if (!modeKind(r.mode).layered || !r.namespaced || !r.upper || !r.lower) return (name) => versionIn(target, name);
  const { upper, lower } = r;
  return (name) => {
    for (const p of [path.join(upper, name), path.join(upper, name, 'package.json')]) {
      if (lstatOrNull(p)?.isCharacterDevice()) return undefined; // a whiteout: deleted in the task
    }
    return lstatOrNull(path.join(upper, name, 'package.json'))?.isFile()
      ? versionIn(upper, name)
      : versionIn(lower, name);
  };
}

/** `version` from `<root>/<name>/package.json`, if it says one. */
function versionIn(root: string, name: string): string | undefined {
  try {
    const version = (
      JSON.parse(fs.readFileSync(path.join(root, name, 'package.json'), 'utf8')) as { version?: unknown }
    ).version;
    return typeof version === 'string' && version.length <= 100 ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The changes inside each provisioned path (what `status` lists, and the fleet counts). */
export async function provisionedChanges(task: Task): Promise<ProvisionedStatus[]> {
  const provisioned: ProvisionedStatus[] = [];
  const table = readMounts(); // once, not per path: hundreds of overlays on a busy machine
  for (const r of provisionRecords(task.data)) provisioned.push(await recordStatus(task, r, table));
  return provisioned;
}

/** `warren status ID`: tracked changes from git, changes inside each provisioned path, staleness. */
export async function taskStatus(task: Task, where: Where): Promise<TaskStatus> {
  const tracked = (await statusOf(where)).map((e) => ({ code: e.code, path: e.path }));
  const records = provisionRecords(task.data);
  const provisioned = await provisionedChanges(task);
  const staleLockfiles = await staleEntries(task, records);
  return { tracked, provisioned, stale: staleLockfiles.length > 0, staleLockfiles };
}

/** What the copy never had: entries stripped and links removed at provisioning (relative to the path). */
function leftOut(r: ProvisionRecord): Set<string> {
  const rel = (p: string): string => (p === r.path ? '' : p.startsWith(`${r.path}/`) ? p.slice(r.path.length + 1) : p);
  return new Set([
    ...(r.stripped ?? []).map((e) => rel(e.path)),
    ...(r.outsideLinks ?? []).filter((l) => l.action === 'removed').map((l) => rel(l.path)),
  ]);
}

function join(base: string, rel: string): string {
  return rel === '' ? base : `${base}/${rel}`;
}

function safeIno(p: string): number | null {
  try {
    return fs.lstatSync(p).ino;
  } catch {
    return null;
  }
}
