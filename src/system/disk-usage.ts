import type { BigIntStats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * How much disk a set of folders takes, as `du -s -x -B1 A B …` counts it: the blocks of every
 * file, folder and link (`st_blocks` × 512), each inode once however many names it has, never
 * following a link and never crossing into another filesystem mounted inside (an overlay's lower
 * layer is not this folder's to count; its upper layer is counted where it lives). Read-only.
 */

export interface Usage {
  /** Bytes on disk. */
  bytes: number;
  /** Entries that could not be read (removed meanwhile, or no permission). */
  unreadable: number;
}

/** Counts `roots` together; `seen` carries inodes already counted, so a caller can add further folders without counting one twice. */
export async function diskUsage(roots: readonly string[], seen: Set<string> = new Set<string>()): Promise<Usage> {
  const usage: Usage = { bytes: 0, unreadable: 0 };
  for (const root of roots) {
    let st: BigIntStats;
    try {
      st = await fs.lstat(root, { bigint: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') usage.unreadable++;
      continue;
    }
    await visit(root, st, st.dev, seen, usage);
  }
  return usage;
}

async function visit(p: string, st: BigIntStats, dev: bigint, seen: Set<string>, usage: Usage): Promise<void> {
  const key = `${st.dev}:${st.ino}`;
  if (seen.has(key)) return;
  seen.add(key);
  usage.bytes += Number(st.blocks) * 512;
  if (!st.isDirectory()) return;
  let names: string[];
  try {
    names = await fs.readdir(p);
  } catch {
    usage.unreadable++;
    return;
  }
  for (const name of names) {
    const child = path.join(p, name);
    let cst: BigIntStats;
    try {
      cst = await fs.lstat(child, { bigint: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') usage.unreadable++;
      continue;
    }
    // Another filesystem mounted here (an overlay, a tmpfs): not counted, as `du -x`.
    if (cst.dev !== dev) continue;
    await visit(child, cst, dev, seen, usage);
  }
}
