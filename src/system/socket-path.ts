import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { removeTreeOrThrow } from './remove-tree.js';

/**
 * Unix sockets under WARREN_HOME. Linux's `sun_path` holds 108 bytes with its NUL: a longer path
 * is not refused by Node (libuv cuts it to 107 bytes and binds there, or fails with a word about
 * something else), so warren checks the length itself. Where WARREN_HOME is too deep for a
 * socket, the socket goes to a short folder of this user's, `/tmp/warren-UID/HASH` (as tmux's
 * `/tmp/tmux-UID`), HASH from the folder it stands for: the same folder for the same place.
 */

/** The longest socket path, in bytes (sun_path without its NUL). */
export const SOCKET_PATH_MAX = 107;

const SHORT_ROOT = '/tmp';

export function socketPathFits(socket: string): boolean {
  return Buffer.byteLength(socket) <= SOCKET_PATH_MAX;
}

/** The per-user parent of the short folders. */
function shortParent(): string {
  return path.join(SHORT_ROOT, `warren-${process.getuid?.() ?? 0}`);
}

/**
 * Where sockets of `preferred` go: `preferred` itself when a name of `longest` bytes fits below
 * it, else its short folder. A computation: `makeSocketDir` makes it.
 */
export function socketDir(preferred: string, longest: number): string {
  if (socketPathFits(path.join(preferred, 'x'.repeat(longest)))) return preferred;
  const hash = createHash('sha256').update(preferred).digest('hex').slice(0, 16);
  return path.join(shortParent(), hash);
}

/**
 * Makes `dir` (0700). A short folder's parent must be this user's own folder, 0700, not a link:
 * another user who made `/tmp/warren-UID` first would otherwise see (and take) the sockets.
 */
export function makeSocketDir(dir: string): void {
  const parent = shortParent();
  if (path.dirname(dir) === parent) {
    fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(parent);
    if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
      throw new WarrenError(
        'SANDBOX_UNAVAILABLE',
        `${parent}, the folder of warren's sockets for this deep WARREN_HOME, is not a folder of this user's alone (a link, another owner, or open to others); nothing was run.`,
        { hint: `Remove ${parent} if nothing of yours is in it, or set WARREN_HOME to a shorter path.` },
      );
    }
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Removes the short folder that stands for `preferred`, if one was made (nothing when the sockets were in `preferred`). */
export function removeSocketDir(preferred: string, longest: number): void {
  const dir = socketDir(preferred, longest);
  if (dir !== preferred && fs.existsSync(dir)) removeTreeOrThrow(dir, { inside: shortParent() });
}

/** A SANDBOX_UNAVAILABLE refusal when `socket` is too long to bind, before anything is made. */
export function assertSocketPath(socket: string, what: string): void {
  if (socketPathFits(socket)) return;
  throw new WarrenError(
    'SANDBOX_UNAVAILABLE',
    `${what} would be at ${socket}, ${Buffer.byteLength(socket)} bytes, over the ${SOCKET_PATH_MAX} bytes a unix socket's path may have; nothing was run.`,
    { hint: 'Set TMPDIR (or WARREN_HOME) to a shorter path, and try again.' },
  );
}
