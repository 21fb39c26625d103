import fs from 'node:fs';
import path from 'node:path';

/**
 * Threat: another user of this machine. `WARREN_HOME` holds every task's service passwords (in
 * the state database), the user's PostgreSQL server (config.yaml), warren's own cluster's admin
 * password, the policy signing key, the dashboard's token, and the logs of every run. So the
 * folder is 0700 and those files 0600, both made so; a home made by an older warren (with the
 * umask's modes, 0755 and 0644) is made so on first use, and the caller says what it changed.
 * Only what belongs to this user is changed: a WARREN_HOME of another user is refused by the
 * command line before this runs (HOME_NOT_OWNED), and its owner's choices are theirs.
 */

/** A folder or file under WARREN_HOME that others could read or enter, now private: its modes before and after. */
export interface Tightened {
  path: string;
  was: number;
  now: number;
}

/** Folders that hold secrets (relative to WARREN_HOME; '' is the home itself), made 0700. */
const PRIVATE_DIRS = ['', 'services', 'logs', 'policy'];

const STATE = 'state.db';

/**
 * Files that hold secrets, made 0600: the state database (its WAL and shared memory too), the
 * user's settings, warren's cluster's admin password, the signing key. (The dashboard's token is
 * not made private: one others could read is replaced by a new one, src/web/token-file.ts.)
 */
const PRIVATE_FILES = [
  STATE,
  `${STATE}-wal`,
  `${STATE}-shm`,
  `${STATE}-journal`,
  'config.yaml',
  path.join('services', 'postgres', 'cluster.json'),
  path.join('policy', 'signing.key'),
];

/**
 * Makes `home` (0700) if it is missing and the state database's file (0600, before SQLite makes
 * it with the umask's mode: its WAL and shared-memory files take the database's mode), and makes
 * private whatever of the above others could read. Returns what it changed; nothing, on every
 * use after the first.
 */
export function privateHome(home: string): Tightened[] {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  // A home that is a link is the folder it names; inside it, links are left alone (chmod would follow them).
  const real = fs.realpathSync(home);
  const uid = process.geteuid?.();
  const own = (st: fs.Stats): boolean => uid === undefined || st.uid === uid;
  // Another user's home is not ours to change (and the command line refuses it first).
  if (!own(fs.lstatSync(real))) return [];
  createPrivate(path.join(real, STATE));
  const changed: Tightened[] = [];
  const tighten = (rel: string, kind: 'dir' | 'file', mode: number): void => {
    const file = path.join(real, rel);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    // Only what others can read or enter is changed.
    if (!st || !own(st) || (kind === 'dir' ? !st.isDirectory() : !st.isFile()) || (st.mode & 0o077) === 0) return;
    try {
      fs.chmodSync(file, mode);
    } catch (err) {
      // Gone meanwhile, or a read-only file system (which opening the state then says).
      if (['ENOENT', 'EROFS'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
      throw err;
    }
    changed.push({ path: path.join(home, rel), was: st.mode & 0o777, now: mode });
  };
  for (const rel of PRIVATE_DIRS) tighten(rel, 'dir', 0o700);
  for (const rel of PRIVATE_FILES) tighten(rel, 'file', 0o600);
  return changed;
}

/** Creates `file` empty with mode 0600 unless it exists (SQLite takes an empty file for a new database). */
function createPrivate(file: string): void {
  const { O_CREAT, O_EXCL, O_WRONLY, O_NOFOLLOW } = fs.constants;
  try {
    fs.closeSync(fs.openSync(file, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, 0o600));
  } catch (err) {
    // There already (SQLite opens it as it is), or a read-only file system (which opening it then says).
    if (['EEXIST', 'EROFS'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
}

/** `0755` for a mode. Pure. */
export function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}
