import type Database from 'better-sqlite3';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { MIGRATIONS, type Migration } from './migrations.js';

export type Db = Database.Database;

const requireCjs = createRequire(import.meta.url);
let driver: { Database: typeof Database; addon: string | undefined } | null = null;

/**
 * better-sqlite3, loaded on first use (a command that never opens the state does not pay for
 * it), with its addon named directly: its default lookup (`bindings`) probes a dozen paths.
 */
function loadDriver(): { Database: typeof Database; addon: string | undefined } {
  if (driver) return driver;
  const built = path.join(path.dirname(requireCjs.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
  driver = { Database: requireCjs('better-sqlite3') as typeof Database, addon: fs.existsSync(built) ? built : undefined };
  return driver;
}

/** `WARREN_HOME`, default `~/.warren`: the state database and, by default, the workspaces. */
export function warrenHome(): string {
  const fromEnv = process.env.WARREN_HOME;
  return path.resolve(fromEnv && fromEnv !== '' ? fromEnv : path.join(os.homedir(), '.warren'));
}

/**
 * Opens the one state database. WAL lets readers run beside a writer; the busy timeout makes a
 * writer wait for another process's transaction instead of failing with SQLITE_BUSY.
 */
export function openDb(home = warrenHome(), migrations: readonly Migration[] = MIGRATIONS): Db {
  fs.mkdirSync(home, { recursive: true });
  const { Database, addon } = loadDriver();
  const db = new Database(path.join(home, 'state.db'), { timeout: 30_000, ...(addon ? { nativeBinding: addon } : {}) });
  db.pragma('busy_timeout = 30000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db, migrations);
  return db;
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
      db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(migration.name, new Date().toISOString());
    });
    apply.immediate();
  }
}
