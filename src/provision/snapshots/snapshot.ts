import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { acquireWaiting, type HeldLock } from '../../util/lockfile.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { formatBytes, type Budget } from '../modes/budget.js';
import { startCopy } from '../modes/copy.js';
import { containTree, findingsForCopy, newFindings, noteEntry, scanTree } from '../modes/contain.js';
import { diskReader, isNodeModules, pickLockfile } from './installed.js';
import { measureTree, walkTree } from '../status/manifest.js';
import type { InstalledFacts, LockfileRef, OutsideLink, StrippedEntry } from '../types.js';
import { removeTreeOrThrow } from '../../system/remove-tree.js';

/** Lockfiles that pin what an install folder holds, in the order they are looked for. */
export const LOCKFILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lockb',
  'bun.lock',
  'composer.lock',
  'Gemfile.lock',
  'Cargo.lock',
  'poetry.lock',
  'uv.lock',
  'Pipfile.lock',
  'go.sum',
  'mix.lock',
] as const;

export function sha256File(file: string): string | null {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
}

/**
 * The lockfile beside a provisioned path, relative to `root`: for a `node_modules`, the one its
 * install came from when several are tracked (`pickLockfile`); else the first of LOCKFILES.
 */
export function lockfileFor(root: string, relPath: string): LockfileRef | null {
  if (isNodeModules(relPath)) {
    const disk = diskReader(root);
    const rel = pickLockfile(disk.read, disk.exists, relPath).lockfile;
    const sha256 = rel === null ? null : sha256File(path.join(root, rel));
    return rel !== null && sha256 !== null ? { path: rel, sha256 } : null;
  }
  const dir = path.posix.dirname(relPath);
  for (const name of LOCKFILES) {
    const rel = dir === '.' ? name : `${dir}/${name}`;
    const sha256 = sha256File(path.join(root, rel));
    if (sha256 !== null) return { path: rel, sha256 };
  }
  return null;
}

/**
 * The snapshot key: the lockfile's content where there is one (the same lockfile installs the
 * same tree, so every workspace made from it shares one snapshot), else a fingerprint of the
 * folder (path, type, size, mtime of every entry).
 */
export function snapshotKey(relPath: string, source: string, lockfile: LockfileRef | null): string {
  // v2: snapshots are contained (contain.ts); a v1 snapshot may hold a link that leads outside.
  // v3: a node_modules is checked against its lockfile first; a v2 one may be an older install.
  const hash = createHash('sha256').update(`warren-snapshot-v3\0${relPath}\0`);
  if (lockfile) {
    hash.update(`lockfile\0${lockfile.path}\0${lockfile.sha256}`);
  } else {
    walkTree(source, (rel, st) => {
      hash.update(`${rel}\0${st.mode}\0${st.isDirectory() ? 0 : st.size}\0${Math.trunc(st.mtimeMs)}\0`);
    });
  }
  return hash.digest('hex').slice(0, 32);
}

export interface SnapshotMeta {
  key: string;
  path: string;
  source: string;
  lockfile: LockfileRef | null;
  entries: number;
  bytes: number;
  ms: number;
  createdAt: string;
  /** Links that led outside the workspace and entries left out, as in a provision record. */
  outsideLinks?: OutsideLink[];
  stripped?: StrippedEntry[];
  /** node_modules: the tree matched its lockfile when it was taken (a tree that did not is never taken). */
  installed?: InstalledFacts;
  /**
   * `gate`: installed by the merge queue's gate from the integrated tree's lockfile, not copied
   * from the main checkout — which cannot give it again, so `gc` keeps it while that lockfile
   * is the main checkout's.
   */
  builtBy?: 'gate';
}

export interface Snapshot {
  meta: SnapshotMeta;
  /** The immutable tree: the overlay's lower layer. */
  tree: string;
  created: boolean;
  /** Held until the caller has mounted it, so `gc` cannot remove it in between. */
  lock: HeldLock;
}

export function snapshotsDir(home: string): string {
  return path.join(home, 'snapshots');
}

export function readSnapshotMeta(dir: string): SnapshotMeta | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as SnapshotMeta;
  } catch {
    return null;
  }
}

export function snapshotLockPath(home: string, key: string): string {
  return path.join(snapshotsDir(home), `${key}.lock`);
}

/**
 * The newest snapshot of the same path of the same checkout whose tree matched its lockfile
 * when it was taken: what a workspace gets while the main checkout's install is stale. Null
 * when there is none (gc removed it, or there never was one).
 */
export function lastGoodSnapshot(home: string, source: string, relPath: string): SnapshotMeta | null {
  let best: SnapshotMeta | null = null;
  let names: string[];
  try {
    names = fs.readdirSync(snapshotsDir(home));
  } catch {
    return null;
  }
  for (const name of names) {
    if (name.startsWith('.') || name.endsWith('.lock')) continue;
    const meta = readSnapshotMeta(path.join(snapshotsDir(home), name));
    if (!meta || meta.source !== source || meta.path !== relPath || meta.installed?.state !== 'matches') continue;
    if (best === null || meta.createdAt > best.createdAt) best = meta;
  }
  return best;
}

/** Why a snapshot was not taken: the tree did not match its key. */
export interface Refused {
  refused: InstalledFacts;
}

/**
 * Returns the snapshot for `key`, taking it once (copy to a temp folder, then rename into place,
 * so a half-taken snapshot is never used). The main checkout's live folder is never a lower
 * layer: overlayfs leaves a lower layer that changes under a mount undefined. `verify` runs
 * under the lock, only when the snapshot must be taken: a tree that `differs` from its key is
 * refused, and nothing is taken. `existingOnly`: never take one (null when there is none).
 * `from`: the folder to copy when it is not `meta.source` (the merge queue's gate installs the
 * integrated tree's dependencies in its own workspace; the snapshot stands for the main checkout's path).
 */
export async function ensureSnapshot(
  home: string,
  key: string,
  meta: Omit<
    SnapshotMeta,
    'key' | 'entries' | 'bytes' | 'ms' | 'createdAt' | 'outsideLinks' | 'stripped' | 'installed'
  >,
  progress: (line: string) => void,
  contain: { repoRoot: string; budget: Budget },
  options: { verify?: () => Promise<InstalledFacts>; existingOnly?: boolean; from?: string; move?: boolean } = {},
): Promise<Snapshot | Refused | null> {
  const dir = path.join(snapshotsDir(home), key);
  const got = await acquireWaiting(snapshotLockPath(home, key), `snapshot ${meta.path}`, 30 * 60_000);
  if (!got.ok) {
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `another warren process has been taking snapshot ${key} for 30 minutes; nothing was changed.`,
      {
        hint: 'Wait for it, or check that process.',
      },
    );
  }
  try {
    const existing = readSnapshotMeta(dir);
    if (existing) return { meta: existing, tree: path.join(dir, 'tree'), created: false, lock: got.lock };
    if (options.existingOnly) {
      got.lock.release();
      return null;
    }
    const installed = options.verify ? await options.verify() : undefined;
    if (installed?.state === 'differs') {
      got.lock.release();
      return { refused: installed };
    }
    const tmp = path.join(snapshotsDir(home), `.tmp-${key}-${process.pid}`);
    removeTreeOrThrow(tmp, { inside: snapshotsDir(home) });
    removeTreeOrThrow(dir, { inside: snapshotsDir(home) }); // a folder without meta.json is a half-taken snapshot
    fs.mkdirSync(tmp, { recursive: true });
    const started = Date.now();
    if (options.move && options.from) {
      const moved = moveInto(options.from, tmp, meta, contain);
      if (moved) {
        const taken = await moved.catch((err: unknown) => {
          removeTreeOrThrow(tmp, { inside: snapshotsDir(home) });
          throw err;
        });
        const full: SnapshotMeta = {
          ...meta,
          key,
          ...taken,
          ms: Date.now() - started,
          createdAt: new Date().toISOString(),
          ...(installed ? { installed } : {}),
        };
        writeFileAtomic(path.join(tmp, 'meta.json'), JSON.stringify(full, null, 2));
        fs.renameSync(tmp, dir);
        return { meta: full, tree: path.join(dir, 'tree'), created: true, lock: got.lock };
      }
    }
    progress(`warren: taking a snapshot of ${meta.path} (once per lockfile content; later workspaces reuse it)…`);
    try {
      const tree = path.join(tmp, 'tree');
      const from = options.from ?? meta.source;
      const copying = startCopy(from, tree, undefined, (written) =>
        progress(`warren: snapshot of ${meta.path}: ${formatBytes(written)} copied…`),
      );
      copying.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
      // While cp runs, one walk of the source counts the tree and finds what containment must look at.
      const found = newFindings();
      let totals = { entries: 0, bytes: 0 };
      walkTree(from, (rel, st) => {
        if (rel !== '') totals.entries++;
        if (st.isFile()) totals.bytes += st.size;
        return noteEntry(found, rel, st);
      });
      await copying;
      const checked = findingsForCopy(found, tree);
      const contained = await containTree({
        tree,
        itemRel: meta.path,
        source: from,
        repoRoot: contain.repoRoot,
        found: checked.found,
        budget: { limit: contain.budget, used: { entries: 0, bytes: 0 } },
      });
      if (checked.rewalked || contained.changed.length > 0) totals = measureTree(tree);
      const full: SnapshotMeta = {
        ...meta,
        key,
        ...totals,
        ms: Date.now() - started,
        createdAt: new Date().toISOString(),
        ...(contained.outsideLinks.length > 0 ? { outsideLinks: contained.outsideLinks.slice(0, 100) } : {}),
        ...(contained.stripped.length > 0 ? { stripped: contained.stripped.slice(0, 100) } : {}),
        ...(installed ? { installed } : {}),
      };
      writeFileAtomic(path.join(tmp, 'meta.json'), JSON.stringify(full, null, 2));
      fs.renameSync(tmp, dir);
      return { meta: full, tree: path.join(dir, 'tree'), created: true, lock: got.lock };
    } catch (err) {
      removeTreeOrThrow(tmp, { inside: snapshotsDir(home) });
      throw err;
    }
  } catch (err) {
    got.lock.release();
    throw err;
  }
}

/**
 * `from` (a folder nobody else uses: the merge queue's gate's own install) made the snapshot's
 * tree by a rename, not a copy: contained where it is, then moved into `tmp`. Null, and `from`
 * left as it was, when it is on another file system than the snapshots (the caller copies).
 */
function moveInto(
  from: string,
  tmp: string,
  meta: { path: string },
  contain: { repoRoot: string; budget: Budget },
): Promise<Pick<SnapshotMeta, 'entries' | 'bytes' | 'outsideLinks' | 'stripped'>> | null {
  if (fs.statSync(from).dev !== fs.statSync(tmp).dev) return null;
  return (async () => {
    // Contained in place (its links resolve where it is), then renamed: the same tree a copy
    // would give. One walk counts it and finds what containment must look at.
    const found = newFindings();
    let totals = { entries: 0, bytes: 0 };
    walkTree(from, (rel, st) => {
      if (rel !== '') totals.entries++;
      if (st.isFile()) totals.bytes += st.size;
      return noteEntry(found, rel, st);
    });
    const contained = await containTree({
      tree: from,
      itemRel: meta.path,
      source: from,
      repoRoot: contain.repoRoot,
      found: found.crossesDevice ? scanTree(from) : found,
      budget: { limit: contain.budget, used: { entries: 0, bytes: 0 } },
    });
    const tree = path.join(tmp, 'tree');
    fs.renameSync(from, tree);
    if (found.crossesDevice || contained.changed.length > 0) totals = measureTree(tree);
    return {
      ...totals,
      ...(contained.outsideLinks.length > 0 ? { outsideLinks: contained.outsideLinks.slice(0, 100) } : {}),
      ...(contained.stripped.length > 0 ? { stripped: contained.stripped.slice(0, 100) } : {}),
    };
  })();
}
