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
