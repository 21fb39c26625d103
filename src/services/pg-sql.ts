import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { runTool, type ToolResult } from '../system/tool.js';

/**
 * PostgreSQL's own client tools (psql, pg_dump, pg_restore), run by argv with the connection in
 * the environment (PGHOST…, the password never on a command line). Names that go into SQL are
 * validated identifiers (pgIdent) and values are quoted literals (pgLiteral).
 */

/** Where a server's tools are: Debian's newest /usr/lib/postgresql/N/bin, else PATH. */
export function pgBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = fs.readdirSync(root).filter((v) => /^\d+$/.test(v));
  } catch {
    // not Debian's layout
  }
  for (const v of versions.sort((a, b) => Number(b) - Number(a))) {
    const dir = path.join(root, v, 'bin');
    if (fs.existsSync(path.join(dir, 'postgres'))) return dir;
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres'))) return dir;
  }
  return null;
}

export function pgTool(name: 'psql' | 'pg_dump' | 'pg_restore' | 'initdb' | 'postgres'): string {
  const dir = pgBinDir();
  if (!dir) {
    throw new WarrenError(
      'SERVICE_UNAVAILABLE',
      `PostgreSQL is not installed here (no ${name}: looked in /usr/lib/postgresql/*/bin and on PATH); nothing was changed.`,
      {
        hint: 'Install it (Debian: `apt-get install postgresql`), or name a server of yours as postgres.url in $WARREN_HOME/config.yaml.',
      },
    );
  }
  return path.join(dir, name);
}

/** How to reach a server as one role. */
export interface PgConn {
  /** A host name or address, or a unix socket's folder. */
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function pgEnv(conn: PgConn): Record<string, string> {
  return {
    PGHOST: conn.host,
    PGPORT: String(conn.port),
    PGUSER: conn.user,
    PGPASSWORD: conn.password,
    PGDATABASE: conn.database,
    PGCONNECT_TIMEOUT: '10',
    PGAPPNAME: 'warren',
  };
}

/** A URL for the task's commands: `postgresql://USER:PASSWORD@HOST:PORT/DB`. */
export function pgUrl(conn: PgConn): string {
  return `postgresql://${encodeURIComponent(conn.user)}:${encodeURIComponent(conn.password)}@${conn.host.startsWith('/') ? `/${conn.database}?host=${encodeURIComponent(conn.host)}&port=${conn.port}` : `${conn.host}:${conn.port}/${conn.database}`}`;
}

export class PgError extends Error {
  constructor(
    readonly result: ToolResult,
    readonly sql: string,
  ) {
    super(result.stderr.trim().split('\n').slice(0, 3).join(' ') || `psql exited ${result.exitCode}`);
  }
}

/** Runs SQL (one statement or several, outside a transaction) and returns psql's unaligned, tuples-only output. */
export async function psql(conn: PgConn, sql: string, options: { timeoutMs?: number } = {}): Promise<string> {
  const result = await runTool([pgTool('psql'), '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-f', '-'], {
    input: sql,
    env: pgEnv(conn),
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  if (result.exitCode !== 0) throw new PgError(result, sql);
  return result.stdout.trim();
}

/**
 * `psql` for a script of idempotent statements that change shared catalog rows (grants,
 * `DROP OWNED`): two tasks made at once touch the same row (the template database's ACL), and
 * PostgreSQL refuses the second with "tuple concurrently updated" rather than wait. The script is
 * run again, a few times, after a short random pause.
 */
export async function psqlRetryingConcurrent(conn: PgConn, sql: string, attempts = 6): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await psql(conn, sql);
    } catch (err) {
      if (attempt >= attempts || !(err instanceof Error) || !/tuple concurrently updated/.test(err.message)) throw err;
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80) * attempt));
    }
  }
}

/**
 * A plain-SQL dump of `conn`'s database into `file` (0600): what `rm --discard` keeps. Without
 * owners: whoever loads it (pgLoad) owns what it makes.
 */
export async function pgDump(conn: PgConn, file: string): Promise<void> {
  fs.writeFileSync(file, '', { mode: 0o600 });
  const result = await runTool([pgTool('pg_dump'), '--no-password', '--no-owner', '-f', file], {
    env: pgEnv(conn),
    timeoutMs: 60 * 60_000,
  });
  if (result.exitCode !== 0) throw new PgError(result, 'pg_dump');
}

/**
 * Loads a plain-SQL dump (pgDump's) into `conn`'s database as `conn`'s role, in one transaction.
 * The role's statement_timeout does not cut a long COPY short (the load is warren's, bounded by
 * `timeoutMs`); psql meta-commands in the file are refused by pg_dump's own `\restrict` line.
 */
export async function pgLoad(conn: PgConn, file: string, timeoutMs = 30 * 60_000): Promise<void> {
  const result = await runTool(
    [pgTool('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-f', file],
    { env: { ...pgEnv(conn), PGOPTIONS: '-c statement_timeout=0' }, timeoutMs },
  );
  if (result.exitCode !== 0) throw new PgError(result, `\\i ${file}`);
}

/** An identifier warren made or validated, double-quoted. */
export function pgIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a safe PostgreSQL name: ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export function pgLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('a NUL byte in a SQL literal');
  return `'${value.replace(/'/g, "''")}'`;
}
