import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { indexEntryCount } from '../git/index-ops.js';
import { changedPathCount, checkoutIntoFolder } from '../git/snapshot.js';
import { removeTree } from '../system/remove-tree.js';
import { runTool } from '../system/tool.js';
import { writeFileAtomic } from '../util/atomic.js';
import { listDir } from '../util/list-dir.js';
import { acquireWaiting, type HeldLock } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * Checkout snapshots: one commit's tracked files, written once into a folder under WARREN_HOME
 * and never changed after, shared as the lower layer of every cow workspace made from that
 * commit. `$WARREN_HOME/checkouts/<project>/snapshots/<commit>/` holds `tree/` (the files),
 * `index` (git's index of exactly those files, stat data included) and `meta.json` (written
 * last: a folder without it is half made and is never used).
 */

export interface CheckoutSnapshotMeta {
  commit: string;
  /** The snapshot it was built from (only the changed paths written), or null for a full checkout. */
  from: string | null;
  changed: number | null;
  files: number;
  ms: number;
  createdAt: string;
}

export interface CheckoutSnapshot {
  meta: CheckoutSnapshotMeta;
  tree: string;
  index: string;
  created: boolean;
  /** Held until the caller has mounted it, so `gc` cannot delete it in between. */
  lock: HeldLock;
}

export function checkoutsDir(ctx: Pick<ProjectContext, 'store' | 'key'>): string {
  return path.join(ctx.store.home, 'checkouts', ctx.key);
}

export function snapshotsDir(ctx: Pick<ProjectContext, 'store' | 'key'>): string {
  return path.join(checkoutsDir(ctx), 'snapshots');
}

export function snapshotLock(ctx: Pick<ProjectContext, 'store' | 'key'>, commit: string): string {
  return path.join(snapshotsDir(ctx), `${commit}.lock`);
}

export function readMeta(dir: string): CheckoutSnapshotMeta | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as CheckoutSnapshotMeta;
  } catch {
    return null;
  }
}

/** Complete snapshots of this project, newest first. */
export function listSnapshots(
  ctx: Pick<ProjectContext, 'store' | 'key'>,
): { dir: string; meta: CheckoutSnapshotMeta }[] {
  const out: { dir: string; meta: CheckoutSnapshotMeta }[] = [];
  for (const name of listDir(snapshotsDir(ctx))) {
    if (!/^[0-9a-f]{40,64}$/.test(name)) continue;
    const dir = path.join(snapshotsDir(ctx), name);
    const meta = readMeta(dir);
    if (meta) out.push({ dir, meta });
  }
  return out.sort((a, b) => b.meta.createdAt.localeCompare(a.meta.createdAt));
}

/**
 * The snapshot of `commit`, made once. When the project has a snapshot of another commit, the
 * new one starts as a hard-linked copy of it (files in a snapshot are never written in place,
 * and git replaces a file it changes rather than writing into it) and git writes only the paths
 * that differ; otherwise, or if that fails, git writes every file.
 */
export async function ensureCheckoutSnapshot(
  ctx: ProjectContext,
  commit: string,
  progress: (line: string) => void,
): Promise<CheckoutSnapshot> {
  fs.mkdirSync(snapshotsDir(ctx), { recursive: true });
  const got = await acquireWaiting(snapshotLock(ctx, commit), `checkout snapshot ${commit.slice(0, 12)}`, 30 * 60_000);
  if (!got.ok) {
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `another warren process has been making the checkout snapshot of ${commit.slice(0, 12)} for 30 minutes; nothing was changed.`,
      {
        hint: 'Wait for it, or check that process.',
      },
    );
  }
  const dir = path.join(snapshotsDir(ctx), commit);
  const done = (meta: CheckoutSnapshotMeta, created: boolean): CheckoutSnapshot => ({
    meta,
    tree: path.join(dir, 'tree'),
    index: path.join(dir, 'index'),
    created,
    lock: got.lock,
  });
  try {
    const existing = readMeta(dir);
    if (existing) return done(existing, false);
    removeTree(dir); // a folder without meta.json is half made
    const tmp = path.join(snapshotsDir(ctx), `.tmp-${commit}-${process.pid}`);
    const started = Date.now();
    const previous = listSnapshots(ctx).find((s) => s.meta.commit !== commit) ?? null;
    let meta: CheckoutSnapshotMeta | null = null;
    try {
      if (previous) {
        progress(
          `warren: making the checkout snapshot of ${commit.slice(0, 12)} from ${previous.meta.commit.slice(0, 12)}'s (changed files only)…`,
        );
        meta = await incremental(ctx, tmp, previous, commit, started);
      }
      if (!meta) {
        progress(
          `warren: making the checkout snapshot of ${commit.slice(0, 12)} (once per base commit; later workspaces share it)…`,
        );
        meta = await full(ctx, tmp, commit, started);
      }
      writeFileAtomic(path.join(tmp, 'meta.json'), JSON.stringify(meta, null, 2));
      fs.renameSync(tmp, dir);
      return done(meta, true);
    } catch (err) {
      removeTree(tmp);
      throw err;
    }
  } catch (err) {
    got.lock.release();
    throw err;
  }
}

async function full(ctx: ProjectContext, tmp: string, commit: string, started: number): Promise<CheckoutSnapshotMeta> {
  removeTree(tmp);
  fs.mkdirSync(path.join(tmp, 'tree'), { recursive: true });
  const r = await checkoutIntoFolder(ctx.repo, path.join(tmp, 'tree'), path.join(tmp, 'index'), commit, null);
  if (r.exitCode !== 0)
    throw new WarrenError(
      'GIT_FAILED',
      `writing the checkout snapshot of ${commit.slice(0, 12)} failed: ${r.stderr.trim()}; nothing was changed.`,
    );
  return {
    commit,
    from: null,
    changed: null,
    files: indexEntryCount(path.join(tmp, 'index')) ?? 0,
    ms: Date.now() - started,
    createdAt: new Date().toISOString(),
  };
}

/** Null when it could not be done (the caller then writes every file). */
async function incremental(
  ctx: ProjectContext,
  tmp: string,
  previous: { dir: string; meta: CheckoutSnapshotMeta },
  commit: string,
  started: number,
): Promise<CheckoutSnapshotMeta | null> {
  removeTree(tmp);
  fs.mkdirSync(tmp, { recursive: true });
  const linked = await runTool(['cp', '-al', '--', path.join(previous.dir, 'tree'), path.join(tmp, 'tree')]);
  if (linked.exitCode !== 0) return null;
  fs.copyFileSync(path.join(previous.dir, 'index'), path.join(tmp, 'index'));
  const r = await checkoutIntoFolder(
    ctx.repo,
    path.join(tmp, 'tree'),
    path.join(tmp, 'index'),
    commit,
    previous.meta.commit,
  );
  if (r.exitCode !== 0) return null;
  const changed = await changedPathCount(ctx.repo, previous.meta.commit, commit);
  return {
    commit,
    from: previous.meta.commit,
    changed,
    files: indexEntryCount(path.join(tmp, 'index')) ?? 0,
    ms: Date.now() - started,
    createdAt: new Date().toISOString(),
  };
}
