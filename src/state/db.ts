import Database from 'better-sqlite3';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import { parseDuration } from '../util/duration.js';
import { environmentError, guardDb, locked, stateError } from './faults.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { privateHome, type Tightened } from './private-home.js';

export type Db = Database.Database;

const requireCjs = createRequire(import.meta.url);
type Addon = object;
let driver: { Database: typeof Database; addon: Addon | undefined } | null = null;

/**
 * better-sqlite3's native addon, loaded on first use (a command that never opens the state does
 * not pay for it) straight from its built file: its default lookup (`bindings`) probes a dozen
 * paths, and Node's CommonJS loader costs a command ~15 ms more than `process.dlopen` of the
 * file. The JavaScript half is imported above (the command line's bundle carries it, which is
 * why package.json pins the exact version: the bundle's half and node_modules' addon must be
 * one release). An install without the usual build folder loads the whole package as before.
 */
function loadDriver(): { Database: typeof Database; addon: Addon | undefined } {
  if (driver) return driver;
  const built = path.join(
    path.dirname(requireCjs.resolve('better-sqlite3/package.json')),
    'build',
    'Release',
    'better_sqlite3.node',
  );
  if (fs.existsSync(built)) {
    const addon = { exports: {} as Addon };
    process.dlopen(addon, built);
    driver = { Database, addon: addon.exports };
  } else {
    driver = { Database: requireCjs('better-sqlite3') as typeof Database, addon: undefined };
  }
  return driver;
}

import { warrenHome } from './home.js';

export { warrenHome };

/**
 * Threat: a warren running as another user over someone's state — typically root through `sudo`
 * with `WARREN_HOME` (or `HOME`) passed on — writes files that user can neither change nor
 * remove: root-owned files in a copy-on-write upper layer, a worktree, a log. The owner's next
 * `warren rm` then fails and leaves them behind. So the command line works only on a
 * `WARREN_HOME` that belongs to the user running it (one that does not exist yet is made).
 */
export function assertOwnHome(home: string): void {
  const euid = process.geteuid?.();
  if (euid === undefined) return;
  let owner: number;
  try {
    owner = fs.statSync(home).uid;
  } catch {
    return;
  }
  if (owner === euid) return;
  throw new WarrenError(
    'HOME_NOT_OWNED',
    `WARREN_HOME ${home} belongs to uid ${owner}, and warren is running as uid ${euid}: files it or your commands wrote there would belong to uid ${euid}, and uid ${owner}'s warren could not change or remove them. Nothing was changed.`,
    {
      hint: `Run warren as uid ${owner} (e.g. \`sudo -u '#${owner}' warren …\`), or set WARREN_HOME to a folder of your own.`,
      details: { home, owner, uid: euid },
    },
  );
}

/** What a command may ask of the state database as it opens it. */
export interface OpenOptions {
  /** Told once, when the database is locked by another process, before warren waits for it. */
  onWait?: (message: string) => void;
  /**
   * Told what of WARREN_HOME was made private as it opened (src/state/private-home.ts): a home
   * made by an older warren, or opened up since. Not called when nothing was changed.
   */
  onPrivate?: (changed: readonly Tightened[]) => void;
}

/** How long a lock is waited for in silence before warren says it is waiting. */
const TELL_AFTER_MS = 1000;

/** `WARREN_STATE_TIMEOUT` (a duration), default 30 s: how long warren waits for another process's lock on its state. */
export function stateTimeoutMs(): number {
  const text = process.env.WARREN_STATE_TIMEOUT;
  return text ? parseDuration(text, 'WARREN_STATE_TIMEOUT') : 30_000;
}

/**
 * Opens the one state database. WAL lets readers run beside a writer; the busy timeout makes a
 * writer wait for another process's transaction instead of failing with SQLITE_BUSY. A lock
 * that is still held after a second is said (`onWait`), then waited for up to
 * `WARREN_STATE_TIMEOUT`; a full disk, a read-only file system or a lock that outlasts the wait
 * is a WarrenError naming the file (src/state/faults.ts), at the open and at every statement.
 * `home` is 0700 and the database 0600, made so first if they were not (`onPrivate`).
 */
export function openDb(
  home = warrenHome(),
  migrations: readonly Migration[] = MIGRATIONS,
  options: OpenOptions = {},
): Db {
  const file = path.join(home, 'state.db');
  const waitMs = stateTimeoutMs();
  const quietMs = Math.min(TELL_AFTER_MS, waitMs);
  let changed: Tightened[];
  try {
    changed = privateHome(home);
  } catch (err) {
    throw environmentError(err) ?? err;
  }
  const { Database, addon } = loadDriver();
  let raw: Db;
  try {
    // better-sqlite3 takes the loaded addon object as `nativeBinding` too (its types say only a path).
    raw = new Database(file, { timeout: quietMs, ...(addon ? { nativeBinding: addon as unknown as string } : {}) });
  } catch (err) {
    throw stateError(err, file, 0) ?? err;
  }
  const db = guardDb(raw, file, () => waitMs);
  try {
    waitForLock(db, file, waitMs, quietMs, options.onWait);
    db.pragma(`busy_timeout = ${waitMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db, migrations);
  } catch (err) {
    raw.close();
    throw err;
  }
  if (changed.length > 0) options.onPrivate?.(changed);
  return db;
}

/**
 * Takes the write lock once and lets it go: held by another process for longer than `quietMs`,
 * it is said (`onWait`) and waited for, up to `waitMs` in all; a lock still held then is
 * STATE_LOCKED. (A command that starts while another holds the lock would otherwise wait in
 * silence.)
 */
function waitForLock(db: Db, file: string, waitMs: number, quietMs: number, onWait?: (message: string) => void): void {
  const take = (): void => {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
  };
  try {
    take();
    return;
  } catch (err) {
    if (!(isWarrenError(err) && err.code === 'STATE_LOCKED')) throw err;
    if (waitMs <= quietMs) throw locked(file, waitMs, err.cause);
  }
  onWait?.(
    `warren: the state database ${file} is locked by another process; waiting up to ${Math.round(waitMs / 1000)} s for it (\`fuser ${file}\` names the process)…`,
  );
  db.pragma(`busy_timeout = ${waitMs - quietMs}`);
  take();
}

export function migrate(db: Db, migrations: readonly Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT name FROM schema_migrations').all() as { name: string }[]).map((row) => row.name),
  );
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    const apply = db.transaction(() => {
      // Re-check inside the write lock: another process may have applied it meanwhile.
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE name = ?').get(migration.name)) return;
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(
        migration.name,
        new Date().toISOString(),
      );
    });
    apply.immediate();
  }
}
