import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isInside } from '../workspace/paths.js';

/**
 * Follows a growing log file: sends what is there, then what is appended, until the command
 * that writes it has finished and the last bytes were read. Knows nothing about events: the
 * caller says when the writer is done.
 *
 * Memory per client is bounded: the follower reads the next chunk only once the client has
 * taken the last one (each callback's promise), so a client that stops reading stops the
 * follower instead of making the server queue the log for it. A client that falls more than
 * `MAX_BEHIND_BYTES` behind the file's end is told how much it missed (`onSkip`) and goes on
 * from the last `INITIAL_TAIL_BYTES`: the page shows the present, the log file keeps it all.
 */

/** A browser joining late gets the tail, not a 2 GB log. */
export const INITIAL_TAIL_BYTES = 256 * 1024;
/** How far a client may fall behind the file's end before the middle is left out. */
export const MAX_BEHIND_BYTES = 1024 * 1024;
const READ_CHUNK = 16 * 1024;

type Sent = Promise<void> | void;

export interface FollowOptions {
  /** The file to read, resolved afresh each time (it may appear after the command started); null: not (yet) readable. */
  resolve(): string | null;
  /** Checked before each read, so the bytes written before "finished" are always sent. */
  isFinished(): boolean;
  /** Settles once the client has taken the text: nothing more is read until then. */
  onChunk(text: string): Sent;
  /** `skipped`: bytes left out at the start; `missing`: the file never appeared. */
  onStart(info: { skipped: number }): Sent;
  /** The client fell behind: `skipped` bytes were left out here, and the text goes on after them. */
  onSkip(info: { skipped: number }): Sent;
  onEnd(info: { missing: boolean }): Sent;
  intervalMs?: number;
  /** Where a late or lagging client starts; default INITIAL_TAIL_BYTES. */
  tailBytes?: number;
  /** Default MAX_BEHIND_BYTES. */
  maxBehindBytes?: number;
}

export interface Follower {
  stop(): void;
}

/**
 * Pure: may the dashboard read this log path? Only absolute paths whose real location is inside
 * one of `roots` (warren's home, the workspace root, the repository's git dir): a path recorded
 * in the database is still not a licence to serve any file on the machine.
 */
export function logPathAllowed(realPath: string, roots: readonly string[]): boolean {
  return path.isAbsolute(realPath) && roots.some((root) => isInside(root, realPath));
}

/** Resolves the log path and checks it; null when it does not exist yet or is not a regular file. */
export function resolveLog(p: string, roots: readonly string[]): { real: string } | 'outside' | null {
  let real: string;
  try {
    real = fs.realpathSync(p);
  } catch {
    return null;
  }
  if (!logPathAllowed(real, roots)) return 'outside';
  try {
    return fs.statSync(real).isFile() ? { real } : null;
  } catch {
    return null; // removed between realpath and stat
  }
}

export function followLog(options: FollowOptions): Follower {
  const maxBehind = options.maxBehindBytes ?? MAX_BEHIND_BYTES;
  const tail = Math.min(options.tailBytes ?? INITIAL_TAIL_BYTES, maxBehind);
  let decoder = new StringDecoder('utf8');
  let offset = -1;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const readNew = async (): Promise<void> => {
    const file = options.resolve();
    if (file === null) return;
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch {
      return;
    }
    try {
      await readFrom(fd);
    } catch {
      // A read that fails (the file was truncated or replaced under us) is retried on the next tick.
    } finally {
      fs.closeSync(fd);
    }
  };

  /** Sends what the file holds beyond `offset`, one chunk at a time, each once the client took the last. */
  const readFrom = async (fd: number): Promise<void> => {
    if (offset < 0) {
      offset = Math.max(0, fs.fstatSync(fd).size - tail);
      await options.onStart({ skipped: offset });
    }
    const buf = Buffer.alloc(READ_CHUNK);
    while (!stopped) {
      // Asked afresh each time: the command keeps writing while the client takes a chunk.
      const size = fs.fstatSync(fd).size;
      if (size < offset) {
        offset = 0; // truncated and rewritten: start over
        decoder = new StringDecoder('utf8');
      }
      if (offset >= size) return;
      if (size - offset > maxBehind) {
        // The client reads slower than the command writes: leave the middle out, say so, go on from the tail.
        const skipped = size - tail - offset;
        offset += skipped;
        decoder = new StringDecoder('utf8');
        await options.onSkip({ skipped });
      }
      const n = fs.readSync(fd, buf, 0, Math.min(READ_CHUNK, size - offset), offset);
      if (n <= 0) return;
      offset += n;
      const text = decoder.write(buf.subarray(0, n));
      if (text !== '') await options.onChunk(text);
      // A client that takes every chunk at once must not keep the server from its other requests.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const tick = async (): Promise<void> => {
    if (stopped) return;
    let finished = false;
    try {
      finished = options.isFinished();
    } catch {
      finished = false; // could not tell (e.g. the database was busy): keep following, ask again next tick
    }
    await readNew();
    if (stopped) return;
    if (finished) {
      const rest = decoder.end();
      if (rest !== '') await options.onChunk(rest);
      if (offset < 0) await options.onStart({ skipped: 0 });
      stopped = true;
      await options.onEnd({ missing: offset < 0 });
      return;
    }
    timer = setTimeout(follow, options.intervalMs ?? 250);
  };
  // A callback that throws ends the following: nobody is left to send to.
  const follow = (): void => void tick().catch(() => (stopped = true));
  follow();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
