import fs from 'node:fs';
import { writeFileAtomic } from '../../util/atomic.js';

/**
 * Is an entry of a cow layer's upper layer the same as the snapshot's below it (issue 41)? An
 * install that rewrites a tree with identical files copies every one up: by presence, 22,003
 * "changes" for a task that changed nothing. The same type and permissions, and for a file the
 * same size and then the same bytes (read only when the sizes agree), for a symlink the same
 * target. A byte compare, not a hash: both files are read once, and the first differing chunk
 * ends it.
 */

const CHUNK = 64 * 1024;
const bufA = Buffer.alloc(CHUNK);
const bufB = Buffer.alloc(CHUNK);

export function sameEntry(upper: string, upperSt: fs.Stats, lower: string, lowerSt: fs.Stats): boolean {
  if (upperSt.mode !== lowerSt.mode) return false; // type and permission bits
  if (upperSt.isSymbolicLink()) return readlinkOrNull(upper) === readlinkOrNull(lower);
  if (!upperSt.isFile() || upperSt.size !== lowerSt.size) return false;
  return sameBytes(upper, lower, upperSt.size);
}

/**
 * Both files' first `size` bytes (the size both were stat'ed at) are the same. No read past it
 * for an end of file (a third of the reads of 18,000 small files): a file that changed size
 * since its stat reads short and counts as changed, which the next status corrects.
 */
function sameBytes(a: string, b: string, size: number): boolean {
  let fa: number | null = null;
  let fb: number | null = null;
  try {
    fa = fs.openSync(a, 'r');
    fb = fs.openSync(b, 'r');
    for (let done = 0; done < size;) {
      const want = Math.min(CHUNK, size - done);
      if (fs.readSync(fa, bufA, 0, want, null) !== want || fs.readSync(fb, bufB, 0, want, null) !== want) return false;
      if (bufA.compare(bufB, 0, want, 0, want) !== 0) return false;
      done += want;
    }
    return true;
  } catch {
    return false; // unreadable: reported as a change, never hidden
  } finally {
    if (fa !== null) fs.closeSync(fa);
    if (fb !== null) fs.closeSync(fb);
  }
}

function readlinkOrNull(p: string): string | null {
  try {
    return fs.readlinkSync(p);
  } catch {
    return null;
  }
}

/** An upper entry's identity and the snapshot entry's: ino, size, mtime and ctime (which no write leaves as it was). */
type Stamp = [number, number, number, number, number, number];

const stamp = (up: fs.Stats, low: fs.Stats): Stamp => [up.ino, up.size, up.mtimeMs, up.ctimeMs, low.ino, low.mtimeMs];

/**
 * The entries a layer holds identical to the snapshot, remembered by their stamps, so a second
 * `status` of a fully rewritten layer reads no file again: any write to an entry changes its
 * ctime, and the snapshot is immutable. Kept beside the upper layer, in warren's own folder (no
 * command of the task can write there); a cache only: unreadable, it is empty; unwritable, it
 * is not kept.
 */
/** The cache's entry naming the snapshot it was made against (every other key is a relative path). */
const LOWER_KEY = '/lower';

export class SameVerdicts {
  private readonly known: Map<string, string>;
  private readonly seen = new Map<string, string>();

  constructor(private readonly file: string | null) {
    this.known = new Map(file === null ? [] : readVerdicts(file));
  }

  /**
   * For an immutable snapshot: the cache's verdict for an upper entry whose stamp has not moved,
   * without a look at the snapshot's (`undefined`: not known, ask `same`). The cache must have
   * been made against this snapshot: `forLower` drops it otherwise.
   */
  knownSame(rel: string, upperSt: fs.Stats): boolean | undefined {
    const key = this.known.get(rel);
    if (key === undefined) return undefined;
    const upper = JSON.stringify([upperSt.ino, upperSt.size, upperSt.mtimeMs, upperSt.ctimeMs]);
    if (!key.startsWith(`${upper.slice(0, -1)},`)) return undefined;
    this.seen.set(rel, key);
    return true;
  }

  /** Keeps the cache only if it was made against this snapshot (its root's inode), and notes it for the next. */
  forLower(lowerRoot: fs.Stats | null): this {
    const id = lowerRoot === null ? '' : String(lowerRoot.ino);
    if (this.known.get(LOWER_KEY) !== id) this.known.clear();
    this.known.set(LOWER_KEY, id);
    this.seen.set(LOWER_KEY, id);
    return this;
  }

  /** sameEntry, answered from the cache when the stamps agree. */
  same(rel: string, upper: string, upperSt: fs.Stats, lower: string, lowerSt: fs.Stats): boolean {
    const key = JSON.stringify(stamp(upperSt, lowerSt));
    if (this.known.get(rel) !== key && !sameEntry(upper, upperSt, lower, lowerSt)) return false;
    this.seen.set(rel, key);
    return true;
  }

  /** Writes what this read found identical (only it: an entry changed since is dropped). */
  save(): void {
    if (this.file === null || sameMaps(this.known, this.seen)) return;
    try {
      writeFileAtomic(this.file, [...this.seen].flat().join('\0'));
    } catch {
      // A cache: the next status compares again.
    }
  }
}

/**
 * The cache file: path and stamp, one after the other, each ended by a NUL (which no path holds).
 * Split, not parsed: 20,000 entries as JSON were a fifth of a repeated status.
 */
function readVerdicts(file: string): [string, string][] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const parts = text.split('\0');
  if (parts.length % 2 !== 0) return []; // not this format (or cut short): compare again
  const out: [string, string][] = [];
  for (let i = 0; i < parts.length; i += 2) out.push([parts[i] as string, parts[i + 1] as string]);
  return out;
}

function sameMaps(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
