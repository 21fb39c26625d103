import fs from 'node:fs';
import path from 'node:path';

export interface OwnTempFolder {
  name: string;
  dir: string;
  st: fs.Stats;
  /** The names in it. */
  inside: string[];
}

/**
 * The folders in `parent` (the shared temporary folder) whose names start with `prefix` and that
 * are this user's alone — its owner, nothing for the group or others (mkdtemp's 0700), not a
 * link — with what each holds: what a `gc` step may consider as its own home's leftovers.
 * Another user's folder of the same name, or one opened up, is never one.
 */
export function ownTempFolders(parent: string, prefix: string): OwnTempFolder[] {
  let names: string[];
  try {
    names = fs.readdirSync(parent).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
  const out: OwnTempFolder[] = [];
  for (const name of names) {
    const dir = path.join(parent, name);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) continue;
    try {
      out.push({ name, dir, st, inside: fs.readdirSync(dir) });
    } catch {
      // gone, or unreadable: not one to collect
    }
  }
  return out;
}
