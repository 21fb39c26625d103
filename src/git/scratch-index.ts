import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeTreeOrThrow } from '../system/remove-tree.js';
import { homeTag } from '../util/home-tag.js';

/**
 * A throwaway index for a sequence of git calls (a workspace's state as a tree, a squash's tree):
 * `GIT_INDEX_FILE` in a folder of its own in the temporary folder, removed when the calls end.
 * A warren killed meanwhile cannot remove it, so its name says whose it is —
 * `warren-index-TAG-PID-XXXXXX`, TAG from the WARREN_HOME (homeTag), PID the process — and `gc`
 * of that home removes it once that process is gone (src/workspace/scratch-gc.ts).
 */

export function scratchIndexPrefix(home: string): string {
  return `warren-index-${homeTag(home)}-`;
}

/** The pid a scratch folder's name holds after its prefix, or null when the name is not one. */
export function scratchIndexPid(name: string, prefix: string): number | null {
  const m = /^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
  return name.startsWith(prefix) && m ? Number(m[1]) : null;
}

export async function withScratchIndex<T>(
  home: string,
  use: (env: { GIT_INDEX_FILE: string }) => Promise<T>,
): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${scratchIndexPrefix(home)}${process.pid}-`));
  try {
    return await use({ GIT_INDEX_FILE: path.join(dir, 'index') });
  } finally {
    removeTreeOrThrow(dir, { inside: os.tmpdir() });
  }
}
