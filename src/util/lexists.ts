import fs from 'node:fs';

/** Does anything exist at `p`, a dangling symlink included (`fs.existsSync` follows links)? */
export function lexists(p: string): boolean {
  return lstatOrNull(p) !== null;
}

/** lstat, or null when nothing can be stat'ed there (missing, or a file where a folder was expected: ENOTDIR). */
export function lstatOrNull(p: string): fs.Stats | null {
  try {
    // Missing is the common answer in a walk: no exception made for it (a fifth of a 20,000-entry status).
    return fs.lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
