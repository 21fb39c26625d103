import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { Client, QueryArrayConfig } from 'pg';
import { runTool, type ToolResult } from '../system/tool.js';

/**
 * PostgreSQL's own client tools (pg_dump, and psql to load a dump), run by argv with the
 * connection in the environment (PGHOST…, the password never on a command line), and warren's own
 * administrative SQL over an in-process connection (withPg). Names that go into SQL are
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

/** A statement (or script) the server refused, or a connection it would not give; `code` is PostgreSQL's SQLSTATE when it said one. */
export class PgError extends Error {
  constructor(
    message: string,
    readonly sql: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * warren's own administrative SQL (roles, databases, grants, catalog reads) goes over one
 * connection of node-postgres (`pg`), in this process: a `psql` process per statement cost
 * 0.4–0.9 s each on a loaded machine, six of them per task (issue 41). What runs SQL of the
 * repository's (a seed) still runs `psql` inside the task's boundary (pg-seed.ts); dumps and
 * their loading stay PostgreSQL's own tools, as the task's role.
 */
export interface PgSession {
  /**
   * Runs SQL and returns its rows as `psql -A -t` prints them: fields joined by `|`, rows by
   * newlines, NULL empty. Several statements in one string run as one implicit transaction (the
   * simple query protocol), so a statement that cannot run in a transaction block (CREATE or DROP
   * DATABASE) is sent on its own.
   */
  run(sql: string, options?: { timeoutMs?: number }): Promise<string>;
}

type PgClient = typeof Client;
let pgClient: Promise<PgClient> | null = null;

/** Loaded when first needed: a command that touches no database never pays for it. */
function loadPg(): Promise<PgClient> {
  pgClient ??= import('pg').then((m) => m.Client);
  return pgClient;
}

// Every value as the text the server sent, as psql prints it (no Date, no boolean, no number).
const asText = { getTypeParser: () => (value: string) => value };

/** One connection for `work`, closed after it whatever happens. */
export async function withPg<T>(conn: PgConn, work: (session: PgSession) => Promise<T>): Promise<T> {
  const PgClientClass = await loadPg();
  const client = new PgClientClass({
    host: conn.host,
    port: conn.port,
    user: conn.user,
    password: conn.password,
    database: conn.database,
    application_name: 'warren',
    connectionTimeoutMillis: 10_000,
    types: asText,
  });
  client.on('error', () => undefined); // a connection lost between statements fails the next one, which says why
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw asPgError(err, '(connect)');
  }
  try {
    return await work({
      async run(sql, options = {}) {
        let results: unknown;
        try {
          // query_timeout: node-postgres reads it per query (its types know it only per client).
          const query: QueryArrayConfig & { query_timeout: number } = {
            text: sql,
            rowMode: 'array',
            query_timeout: options.timeoutMs ?? 120_000,
          };
          results = await client.query(query);
        } catch (err) {
          throw asPgError(err, sql);
        }
        return (Array.isArray(results) ? results : [results])
          .flatMap((r: { rows?: unknown[][] }) => r.rows ?? [])
          .map((row) => row.map((v) => (v === null ? '' : String(v))).join('|'))
          .join('\n')
          .trim();
      },
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

function asPgError(err: unknown, sql: string): PgError {
  if (err instanceof PgError) return err;
  const e = err as { message?: string; code?: string };
  return new PgError(e.message || String(err), sql, typeof e.code === 'string' ? e.code : undefined);
}

/** Runs SQL over a connection of its own (withPg) and returns its rows as psql -A -t prints them. */
export async function pgQuery(conn: PgConn, sql: string, options: { timeoutMs?: number } = {}): Promise<string> {
  return withPg(conn, (session) => session.run(sql, options));
}

/**
 * A script of idempotent statements that change shared catalog rows (grants, `DROP OWNED`): two
 * tasks made at once touch the same row (the template database's ACL), and PostgreSQL refuses
 * the second with "tuple concurrently updated" rather than wait. The script is run again, a few
 * times, after a short random pause.
 */
export async function runRetryingConcurrent(session: PgSession, sql: string, attempts = 6): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await session.run(sql);
    } catch (err) {
      if (attempt >= attempts || !(err instanceof Error) || !/tuple concurrently updated/.test(err.message)) throw err;
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80) * attempt));
    }
  }
}

/**
 * A plain-SQL dump of `conn`'s database into `file` (0600): what `rm --discard` keeps. Without
 * owners: whoever loads it (pgLoad) owns what it makes. `extra`: more of pg_dump's options.
 */
export async function pgDump(conn: PgConn, file: string, extra: readonly string[] = []): Promise<void> {
  fs.writeFileSync(file, '', { mode: 0o600 });
  const result = await runTool([pgTool('pg_dump'), '--no-password', '--no-owner', ...extra, '-f', file], {
    env: pgEnv(conn),
    timeoutMs: 60 * 60_000,
  });
  if (result.exitCode !== 0) throw toolFailed(result, 'pg_dump');
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
  if (result.exitCode !== 0) throw toolFailed(result, `\\i ${file}`);
}

function toolFailed(result: ToolResult, sql: string): PgError {
  return new PgError(
    result.stderr.trim().split('\n').slice(0, 3).join(' ') || `${result.argv[0]} exited ${result.exitCode}`,
    sql,
  );
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
