import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';

/**
 * `provision` paths may be globs (`packages/*\/node_modules`, `apps/**\/.env`): expanded against
 * the main checkout, one segment at a time, never through a symlinked folder (a link's target
 * is anyone's) and never into `.git` or a `node_modules` (a glob's `**` would otherwise walk
 * every installed package). What matches is provisioned like a path listed by hand.
 */

/** Is this configured path a glob? Pure. */
export function isGlob(pattern: string): boolean {
  return picomatch.scan(pattern).isGlob;
}

/** Folders a `**` never walks into. */
const NOT_WALKED = new Set(['.git', 'node_modules']);

/** How deep a `**` goes below where it stands. */
const MAX_DEPTH = 8;

/** The paths under `root` (relative, `/`-separated, sorted) that `pattern` matches. */
export function expandGlob(root: string, pattern: string): string[] {
  const segments = pattern.split('/');
  const found = new Set<string>();
  const visit = (rel: string, at: number, depth: number): void => {
    if (at === segments.length) {
      if (rel !== '') found.add(rel);
      return;
    }
    const segment = segments[at] as string;
    if (segment === '**') {
      visit(rel, at + 1, depth); // zero folders
      if (depth >= MAX_DEPTH) return;
      for (const name of folders(root, rel)) {
        if (NOT_WALKED.has(name)) continue;
        visit(join(rel, name), at, depth + 1);
      }
      return;
    }
    if (!isGlob(segment)) {
      const next = join(rel, segment);
      const st = fs.lstatSync(path.join(root, next), { throwIfNoEntry: false });
      if (!st) return;
      if (at < segments.length - 1 && !st.isDirectory()) return;
      visit(next, at + 1, depth);
      return;
    }
    const match = picomatch(segment, { dot: false });
    const last = at === segments.length - 1;
    for (const name of last ? entries(root, rel) : folders(root, rel)) {
      if (name === '.git' || !match(name)) continue;
      visit(join(rel, name), at + 1, depth);
    }
  };
  visit('', 0, 0);
  return [...found].sort();
}

function join(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}

function entries(root: string, rel: string): string[] {
  try {
    return fs.readdirSync(path.join(root, rel));
  } catch {
    return [];
  }
}

/** Real folders (not links to one) in `rel`. */
function folders(root: string, rel: string): string[] {
  try {
    return fs
      .readdirSync(path.join(root, rel), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}
