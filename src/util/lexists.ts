import fs from 'node:fs';

/** Does anything exist at `p`, a dangling symlink included (`fs.existsSync` follows links)? */
export function lexists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** lstat, or null when nothing can be stat'ed there (missing, or a file where a folder was expected: ENOTDIR). */
export function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}
