import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isInside } from '../workspace/paths.js';

/**
 * Follows a growing log file: sends what is there, then what is appended, until the command
 * that writes it has finished and the last bytes were read. Knows nothing about events: the
 * caller says when the writer is done.
 */

/** A browser joining late gets the tail, not a 2 GB log. */
export const INITIAL_TAIL_BYTES = 256 * 1024;
const READ_CHUNK = 64 * 1024;

export interface FollowOptions {
  /** The file to read, resolved afresh each time (it may appear after the command started); null: not (yet) readable. */
  resolve(): string | null;
  /** Checked before each read, so the bytes written before "finished" are always sent. */
  isFinished(): boolean;
  onChunk(text: string): void;
  /** `skipped`: bytes left out at the start; `missing`: the file never appeared. */
  onStart(info: { skipped: number }): void;
  onEnd(info: { missing: boolean }): void;
  intervalMs?: number;
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
  const decoder = new StringDecoder('utf8');
  let offset = -1;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const readNew = (): void => {
    const file = options.resolve();
    if (file === null) return;
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch {
      return;
    }
    try {
      readFrom(fd);
    } catch {
      // A read that fails (the file was truncated or replaced under us) is retried on the next tick.
    } finally {
      fs.closeSync(fd);
    }
  };

  const readFrom = (fd: number): void => {
    const size = fs.fstatSync(fd).size;
    if (offset < 0) {
      offset = Math.max(0, size - INITIAL_TAIL_BYTES);
      options.onStart({ skipped: offset });
    }
    if (size < offset) offset = 0; // truncated and rewritten: start over
    const buf = Buffer.alloc(READ_CHUNK);
    while (offset < size && !stopped) {
      const n = fs.readSync(fd, buf, 0, Math.min(READ_CHUNK, size - offset), offset);
      if (n <= 0) break;
      offset += n;
      const text = decoder.write(buf.subarray(0, n));
      if (text !== '') options.onChunk(text);
    }
  };

  const tick = (): void => {
    if (stopped) return;
    let finished = false;
    try {
      finished = options.isFinished();
    } catch {
      finished = false; // could not tell (e.g. the database was busy): keep following, ask again next tick
    }
    readNew();
    if (finished) {
      const rest = decoder.end();
      if (rest !== '') options.onChunk(rest);
      if (offset < 0) options.onStart({ skipped: 0 });
      stopped = true;
      options.onEnd({ missing: offset < 0 });
      return;
    }
    timer = setTimeout(tick, options.intervalMs ?? 250);
  };
  tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
