import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { lstatOrNull } from '../../util/lexists.js';
import { sameEntry, type EntryStat } from './same-content.js';

/**
 * The upper entries of a cow layer compared with the snapshot's (issue 41: `status` ≤ 1 s on a
 * layer an install rewrote whole). Each is an lstat below and, where type, permissions and size
 * agree, a byte compare: about eight system calls per file, 20,000 files. Past a few thousand,
 * the second half is compared in a worker thread (compare-worker.ts) while this thread compares
 * the first, so that both cores read; the answers are the same either way (test/provision/status.test.ts).
 */

/** An upper entry to compare: its path under both roots and the upper lstat's fields sameEntry and the cache use. */
export type ToCompare = [rel: string, mode: number, size: number, ino: number, mtimeMs: number, ctimeMs: number];

/** Per entry: null when the snapshot has none, else whether it is the same, and the snapshot entry's ino and mtime (the cache's stamp). */
export type Compared = [same: boolean, lowerIno: number, lowerMtimeMs: number] | null;

/** Below this many, one thread: a worker's start costs more than it saves. */
export const PARALLEL_FROM = 2000;

/** The worker's program beside this module (dist/bundle/compare-worker.js, or dist/provision/status/); null from the sources. */
function workerFile(): URL | null {
  const file = new URL('./compare-worker.js', import.meta.url);
  return fs.existsSync(file) ? file : null;
}

export function toCompare(rel: string, st: fs.Stats): ToCompare {
  return [rel, st.mode, st.size, st.ino, st.mtimeMs, st.ctimeMs];
}

/** Compares `items` in this thread. Pure but for the reads. */
export function compareEntries(upper: string, lower: string, items: readonly ToCompare[]): Compared[] {
  return items.map(([rel, mode, size]) => {
    const below = lstatOrNull(`${lower}/${rel}`); // joined by hand, as walkTree does
    if (below === null) return null;
    return [sameEntry(`${upper}/${rel}`, statOf(mode, size), `${lower}/${rel}`, below), below.ino, below.mtimeMs];
  });
}

/** compareEntries, the second half in a worker thread when there are many (and the worker's program is there). */
export async function compareInParallel(
  upper: string,
  lower: string,
  items: readonly ToCompare[],
  file: URL | null = workerFile(),
): Promise<Compared[]> {
  if (items.length < PARALLEL_FROM || file === null) return compareEntries(upper, lower, items);
  const cut = Math.ceil(items.length / 2);
  const worker = new Worker(file, { workerData: { upper, lower, items: items.slice(cut) } });
  worker.unref();
  const second = new Promise<Compared[]>((resolve, reject) => {
    worker.once('message', (answers: Compared[]) => resolve(answers));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the compare worker exited with ${code} before it answered`)));
  });
  const rest = items.slice(cut);
  try {
    const first = compareEntries(upper, lower, items.slice(0, cut));
    // A worker that failed (it could not start, say) leaves its half to this thread: the same answers, later.
    return [...first, ...(await second.catch(() => compareEntries(upper, lower, rest)))];
  } finally {
    void worker.terminate();
  }
}

const S_IFMT = 0o170000;

/** The stat sameEntry asks about, from the mode and size a worker was sent. */
function statOf(mode: number, size: number): EntryStat {
  return {
    mode,
    size,
    isFile: () => (mode & S_IFMT) === fs.constants.S_IFREG,
    isSymbolicLink: () => (mode & S_IFMT) === fs.constants.S_IFLNK,
  };
}
