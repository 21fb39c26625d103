import fs from 'node:fs';
import path from 'node:path';

/** type: f file, d directory, l symlink, o other. */
export type EntryFacts = [type: 'f' | 'd' | 'l' | 'o', size: number, mtimeMs: number, ino: number];

/** What a tree looked like when an older warren provisioned it: size, mtime and inode per entry (status reads it still). */
export interface Manifest {
  entries: Record<string, EntryFacts>;
}

export interface TreeTotals {
  entries: number;
  bytes: number;
}

export interface Change {
  path: string;
  change: 'added' | 'modified' | 'deleted';
}

function kind(st: fs.Stats): EntryFacts[0] {
  if (st.isFile()) return 'f';
  if (st.isDirectory()) return 'd';
  if (st.isSymbolicLink()) return 'l';
  return 'o';
}

/**
 * Walks a tree by lstat (never through a symlink, never into another file system) and calls
 * `visit` with each entry's path relative to the root (`''` for the root itself). A visit that
 * returns `false` for a directory keeps the walk out of it.
 */
export function walkTree(root: string, visit: (rel: string, st: fs.Stats) => boolean | void): void {
  let top: fs.Stats;
  try {
    top = fs.lstatSync(root);
  } catch {
    return;
  }
  if (visit('', top) === false || !top.isDirectory()) return;
  // Joined by hand: names come from readdir (no `/`, never `.` or `..`), and path.join's
  // normalising was a fifth of the walk's time on a 20,000-entry tree.
  const base = path.resolve(root);
  const stack: string[] = [''];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    const dir = rel === '' ? base : `${base}/${rel}`;
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const childRel = rel === '' ? name : `${rel}/${name}`;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(`${dir}/${name}`);
      } catch {
        continue;
      }
      if (visit(childRel, st) !== false && st.isDirectory() && st.dev === top.dev) stack.push(childRel);
    }
  }
}

/** Counts entries (the root not included) and bytes of regular files. */
export function measureTree(root: string): TreeTotals {
  let entries = 0;
  let bytes = 0;
  walkTree(root, (rel, st) => {
    if (rel !== '') entries++;
    if (st.isFile()) bytes += st.size;
  });
  return { entries, bytes };
}

/** Size, mtime and inode of every entry; `also` sees each entry too, and may keep the walk out of a folder. */
export function takeManifest(root: string, also?: (rel: string, st: fs.Stats) => boolean): Manifest {
  const entries: Record<string, EntryFacts> = {};
  walkTree(root, (rel, st) => {
    entries[rel] = [kind(st), st.isDirectory() ? 0 : st.size, Math.trunc(st.mtimeMs), st.ino];
    return also ? also(rel, st) : true;
  });
  return { entries };
}

/**
 * What changed between two manifests of the same tree. A directory counts as modified only
 * when it appears or disappears (its mtime moves with every child). An inode of 0 in `before`
 * means "not recorded" (a copy's manifest, taken from its source). Pure.
 */
export function diffManifests(before: Manifest, after: Manifest): Change[] {
  const changes: Change[] = [];
  for (const [rel, now] of Object.entries(after.entries)) {
    const was = before.entries[rel];
    if (!was) changes.push({ path: rel, change: 'added' });
    else if (was[0] !== now[0]) changes.push({ path: rel, change: 'modified' });
    else if (now[0] !== 'd' && (was[1] !== now[1] || was[2] !== now[2] || (was[3] !== 0 && was[3] !== now[3])))
      changes.push({ path: rel, change: 'modified' });
  }
  for (const rel of Object.keys(before.entries))
    if (!(rel in after.entries)) changes.push({ path: rel, change: 'deleted' });
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

export function readManifest(file: string): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}
