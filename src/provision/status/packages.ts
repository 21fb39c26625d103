import type { Change } from './manifest.js';

/**
 * `warren status` per package instead of per file: one `npm install left-pad` adds a dozen
 * files, one `pnpm add` seventy. In a `node_modules` a package is its first folder
 * (`left-pad`, `@scope/name`) or pnpm's `.pnpm/<name>@<version>` store folder, which gives
 * its version by name; elsewhere (a vendor folder, a venv) a summary is per top-level entry.
 */

export interface PackageChange {
  /** The package (`left-pad`, `@scope/name`), or the top-level entry of a tree that has no packages. */
  name: string;
  kind: 'package' | 'entry';
  change: 'added' | 'removed' | 'changed';
  /** The version before and after, where a `package.json` (or pnpm's folder name) says. */
  before?: string;
  after?: string;
  /** How many of the path's changes (files, folders, links) are this package's. */
  changes: number;
}

/** Reads a package's version on one side; null when that side cannot be read at all (a `share`'s past). */
export type VersionOf = ((name: string) => string | undefined) | null;

interface Key {
  name: string;
  kind: PackageChange['kind'];
  /** The change is to the package's own folder (or link), not something in it. */
  root: boolean;
  /** pnpm's store folder names the version. */
  version?: string;
}

/** `left-pad@1.3.0`, `@scope+name@2.0.0(react@18.2.0)`, `name@1.0.0_peer@2` → name and version. Pure. */
export function parsePnpmDir(dir: string): { name: string; version: string } | null {
  const bare = dir.replace(/[(_].*$/, '');
  const at = bare.lastIndexOf('@');
  if (at <= 0) return null;
  return { name: bare.slice(0, at).replace('+', '/'), version: bare.slice(at + 1) };
}

/** Which package or entry a path inside the tree (relative to it) belongs to. Pure. */
export function keyOf(rel: string, nodeModules: boolean): Key | null {
  if (rel === '') return null;
  const parts = rel.split('/');
  const first = parts[0] as string;
  if (!nodeModules) return { name: first, kind: 'entry', root: parts.length === 1 };
  if (first.startsWith('@') && parts.length >= 2)
    return { name: `${first}/${parts[1]}`, kind: 'package', root: parts.length === 2 };
  if (first === '.pnpm' && parts.length >= 2) {
    const parsed = parsePnpmDir(parts[1] as string);
    if (parsed) return { name: parsed.name, kind: 'package', root: parts.length === 2, version: parsed.version };
    return { name: `.pnpm/${parts[1]}`, kind: 'entry', root: parts.length === 2 };
  }
  if (first.startsWith('.')) return { name: first, kind: 'entry', root: parts.length === 1 };
  return { name: first, kind: 'package', root: parts.length === 1 };
}

/**
 * Summarises a tree's changes (paths relative to the tree) per package. A package whose own
 * folder was added is added, one whose folder was deleted removed (pnpm: its store folder;
 * both, a version change), anything else changed. Pure, given the version readers.
 */
export function summarise(
  changes: readonly Change[],
  nodeModules: boolean,
  before: VersionOf,
  after: VersionOf,
): PackageChange[] {
  const groups = new Map<
    string,
    {
      kind: Key['kind'];
      changes: number;
      added: string[];
      deleted: string[];
      other: string[];
      rootAdded: boolean;
      rootDeleted: boolean;
    }
  >();
  for (const c of changes) {
    const key = keyOf(c.path, nodeModules);
    if (key === null) continue;
    const g = groups.get(key.name) ?? {
      kind: key.kind,
      changes: 0,
      added: [],
      deleted: [],
      other: [],
      rootAdded: false,
      rootDeleted: false,
    };
    groups.set(key.name, g);
    g.changes++;
    if (key.root && c.change === 'added') g.rootAdded = true;
    if (key.root && c.change === 'deleted') g.rootDeleted = true;
    if (key.version !== undefined)
      (key.root && c.change === 'added' ? g.added : key.root && c.change === 'deleted' ? g.deleted : g.other).push(
        key.version,
      );
  }
  const out: PackageChange[] = [];
  for (const [name, g] of groups) {
    const change: PackageChange['change'] =
      g.rootAdded && !g.rootDeleted ? 'added' : g.rootDeleted && !g.rootAdded ? 'removed' : 'changed';
    const entry: PackageChange = { name, kind: g.kind, change, changes: g.changes };
    if (g.kind === 'package') {
      const was = change === 'added' ? undefined : (g.deleted[0] ?? g.other[0] ?? before?.(name));
      const now = change === 'removed' ? undefined : (g.added[0] ?? g.other[0] ?? after?.(name));
      if (was !== undefined) entry.before = was;
      if (now !== undefined) entry.after = now;
    }
    out.push(entry);
  }
  const order = { added: 0, changed: 1, removed: 2 };
  return out.sort((a, b) => order[a.change] - order[b.change] || a.name.localeCompare(b.name));
}
