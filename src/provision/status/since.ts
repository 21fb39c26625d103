import fs from 'node:fs';
import path from 'node:path';
import type { Change } from './manifest.js';
import { walkTree } from './manifest.js';
import { SameVerdicts } from './same-content.js';
import { lexists, lstatOrNull } from '../../util/lexists.js';
import { listDir } from '../../util/list-dir.js';

/**
 * What changed in a `copy`, `hardlink` or `share` path since it was provisioned, read from the
 * file system's own clock instead of a manifest of every entry taken at `new` (issue 41: that
 * walk cost `share` 1.15 s of CPU against 0.12 s for `ln -s`). At `new` warren notes one
 * instant, `since`, from the file system's clock; `status` walks the tree (it did before) and
 * asks each entry whether it was touched after that instant:
 *
 * - a file's content changes its mtime; a file made after it (npm's write-then-rename, a new
 *   package) has a birth time after it. A chmod or a link made elsewhere (another `cp -al` of
 *   the same files) changes only the ctime, so the ctime alone is never read for a file that
 *   is linked elsewhere. A write that puts an old mtime back in place (`touch -d`) is not seen;
 *   the manifest, comparing size and mtime, missed the same write of the same size.
 * - what a folder held changes its mtime: the entries the folder no longer holds are read from
 *   the main checkout (copy, hardlink), where they came from.
 * - a touched file the main checkout holds with the same type, permissions and bytes (an
 *   install that rewrote it identically) is no change, as for `cow` (same-content.ts).
 */

/** The file system's clock now, as an mtime in ms: a file made now in `dir` (warren's own folder) and read back. */
export function fsNow(dir: string): number {
  fs.mkdirSync(dir, { recursive: true });
  const probe = path.join(dir, `.since-${process.pid}-${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(probe, '');
  try {
    const st = fs.lstatSync(probe);
    return Math.min(st.mtimeMs, st.ctimeMs);
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

/** Was this entry's content, or the entry itself, made after `since`? Pure. */
export function touchedSince(st: fs.Stats, since: number): boolean {
  if (st.mtimeMs >= since) return true;
  if (st.birthtimeMs > 0) return st.birthtimeMs >= since;
  // No birth time (an older file system): a file of its own whose inode changed after `since`.
  return st.nlink === 1 && st.ctimeMs >= since;
}

export interface SinceChanges {
  changes: Change[];
  /** hardlink: files written in place through a link (the main checkout's file changed too). */
  writtenThrough: string[];
}

/**
 * copy and hardlink: what changed in `tree` since `since`, against `source` (the main
 * checkout's folder it was made from) for what was deleted and what was rewritten identically.
 * `left` are paths the copy never had (stripped, or links removed at provisioning).
 */
export function treeChangesSince(
  tree: string,
  source: string,
  since: number,
  options: { left?: ReadonlySet<string>; verdicts?: SameVerdicts } = {},
): SinceChanges {
  const changes = new Map<string, Change['change']>();
  const writtenThrough: string[] = [];
  const left = options.left ?? new Set<string>();
  const verdicts = options.verdicts ?? new SameVerdicts(null);
  const at = (root: string, rel: string): string => (rel === '' ? root : `${root}/${rel}`);
  const allDeleted = (rel: string): void => {
    walkTree(at(source, rel), (sub) => {
      const p = sub === '' ? rel : rel === '' ? sub : `${rel}/${sub}`;
      if (!left.has(p)) changes.set(p, 'deleted');
    });
  };
  if (!lexists(tree)) {
    allDeleted('');
    return { changes: sorted(changes), writtenThrough };
  }
  walkTree(tree, (rel, st) => {
    if (st.isDirectory()) {
      if (rel !== '' && st.birthtimeMs >= since && !lexists(at(source, rel))) changes.set(rel, 'added');
      if (st.mtimeMs >= since) {
        for (const name of listDir(at(source, rel))) {
          const child = rel === '' ? name : `${rel}/${name}`;
          if (!left.has(child) && !lexists(at(tree, child))) allDeleted(child);
        }
      }
      return;
    }
    if (!touchedSince(st, since)) return;
    const below = lstatOrNull(at(source, rel));
    if (below === null) changes.set(rel, 'added');
    else if (below.ino === st.ino && below.dev === st.dev) {
      // One file in both places: written in place through the link.
      changes.set(rel, 'modified');
      writtenThrough.push(rel);
    } else if (!verdicts.same(rel, at(tree, rel), st, at(source, rel), below)) changes.set(rel, 'modified');
  });
  return { changes: sorted(changes), writtenThrough: writtenThrough.sort() };
}

/**
 * share: what changed in the main checkout's folder since `since`. There is no other copy to
 * read a deleted entry's name from: a folder whose entries changed is listed as modified.
 */
export function sharedChangesSince(source: string, since: number): Change[] {
  const changes = new Map<string, Change['change']>();
  walkTree(source, (rel, st) => {
    if (st.isDirectory()) {
      if (rel !== '' && st.birthtimeMs >= since) changes.set(rel, 'added');
      else if (st.mtimeMs >= since) changes.set(rel, 'modified');
    } else if (touchedSince(st, since)) {
      const parent = lstatOrNull(path.dirname(rel === '' ? source : `${source}/${rel}`));
      changes.set(rel, rel !== '' && parent !== null && parent.birthtimeMs >= since ? 'added' : 'modified');
    }
  });
  return sorted(changes);
}

function sorted(changes: Map<string, Change['change']>): Change[] {
  return [...changes].map(([p, change]) => ({ path: p, change })).sort((a, b) => a.path.localeCompare(b.path));
}
