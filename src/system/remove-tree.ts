import fs from 'node:fs';
import path from 'node:path';
import { assertRemovable, type RemoveGuard } from './remove-guard.js';

export interface RemoveFailure {
  path: string;
  code: string;
}

/**
 * Deletes a tree by lstat, never following a symlink (a link is unlinked, not entered) and
 * never crossing into another file system (a mount point is left alone and reported). Only
 * ENOENT is ignored; everything else is collected so the caller can name what stayed.
 * The only recursive delete of warren's (test/architecture.test.ts bans the others), and it
 * guards itself: a path that is relative, holds a NUL, is `/` or a home, or leaves
 * `guard.inside`, is refused (a WarrenError) before anything is deleted (remove-guard.ts).
 */
export function removeTree(root: string, guard: RemoveGuard = {}): RemoveFailure[] {
  assertRemovable(root, guard);
  const failures: RemoveFailure[] = [];
  let rootStat: fs.Stats;
  try {
    rootStat = fs.lstatSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return failures;
    return [{ path: root, code: (err as NodeJS.ErrnoException).code ?? 'UNKNOWN' }];
  }
  if (!rootStat.isDirectory()) {
    tryRemove(root, false, failures);
    return failures;
  }
  walk(root, rootStat, failures);
  return failures;
}

function walk(dir: string, dirStat: fs.Stats, failures: RemoveFailure[]): void {
  grantOwnerAccess(dir, dirStat);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    failures.push({ path: dir, code: (err as NodeJS.ErrnoException).code ?? 'UNKNOWN' });
    return;
  }
  for (const name of names) {
    const full = path.join(dir, name);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(full);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        failures.push({ path: full, code: (err as NodeJS.ErrnoException).code ?? 'UNKNOWN' });
      continue;
    }
    if (stat.isDirectory()) {
      if (stat.dev !== dirStat.dev) {
        failures.push({ path: full, code: 'EMOUNTPOINT' });
        continue;
      }
      walk(full, stat, failures);
      tryRemove(full, true, failures);
    } else {
      tryRemove(full, false, failures);
    }
  }
  tryRemove(dir, true, failures);
}

/** O_PATH (Linux): a handle on the inode itself, opened without read permission. */
const O_PATH = 0o10000000;

/**
 * A directory of ours without read, write or search permission for us cannot be emptied —
 * overlayfs makes its `work/work` dir mode 000, and some tools make read-only trees (0555). Its
 * owner may chmod it; root needs no permission bits. chmod(2) follows symlinks, and the
 * directory could be swapped for a link after the lstat: so it is opened without following
 * links (O_PATH | O_NOFOLLOW), checked to be the same inode, and changed through that handle's
 * /proc/self/fd link, which names the inode, not a path. Elsewhere nothing is changed and the
 * read that follows fails and is reported.
 */
function grantOwnerAccess(dir: string, stat: fs.Stats): void {
  const uid = process.getuid?.();
  if (
    uid === undefined ||
    uid === 0 ||
    stat.uid !== uid ||
    (stat.mode & 0o700) === 0o700 ||
    process.platform !== 'linux'
  )
    return;
  let fd: number;
  try {
    fd = fs.openSync(dir, O_PATH | fs.constants.O_NOFOLLOW | fs.constants.O_DIRECTORY);
  } catch {
    return;
  }
  try {
    const now = fs.fstatSync(fd);
    if (now.ino === stat.ino && now.dev === stat.dev) fs.chmodSync(`/proc/self/fd/${fd}`, (stat.mode & 0o7777) | 0o700);
  } catch {
    // the read that follows fails and names it
  } finally {
    fs.closeSync(fd);
  }
}

function tryRemove(target: string, isDir: boolean, failures: RemoveFailure[]): void {
  for (let attempt = 0; ; attempt++) {
    try {
      if (isDir) fs.rmdirSync(target);
      else fs.unlinkSync(target);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'UNKNOWN';
      if (code === 'ENOENT') return;
      if (code === 'EBUSY' && attempt < 3) continue;
      // A directory that still holds a failed child fails with ENOTEMPTY: the child is the cause, already recorded.
      if (code === 'ENOTEMPTY' && failures.length > 0) return;
      failures.push({ path: target, code });
      return;
    }
  }
}

/**
 * removeTree for warren's own scratch folders (a temporary index, a service's folder), where
 * what could not be deleted is an error, as `fs.rmSync(…, { recursive: true, force: true })` made it.
 */
export function removeTreeOrThrow(root: string, guard: RemoveGuard = {}): void {
  const failures = removeTree(root, guard);
  if (failures.length > 0)
    throw new Error(`could not delete ${failures.map((f) => `${f.path} (${likelyCause(f.code)})`).join(', ')}`);
}

/** A person-readable guess at why a path could not be deleted. */
export function likelyCause(code: string): string {
  switch (code) {
    case 'EPERM':
      return 'the file is immutable or append-only (chattr +i/+a), or owned by another user in a sticky directory';
    case 'EACCES':
      return 'no write permission on its directory (e.g. a root-owned folder)';
    case 'EBUSY':
      return 'it is in use or a mount point';
    case 'EMOUNTPOINT':
      return 'another file system is mounted there';
    case 'EROFS':
      return 'the file system is read-only';
    default:
      return `the file system refused (${code})`;
  }
}
