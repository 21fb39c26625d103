import type { PgLimitsConfig } from '../config/schema.js';
import { parseDuration } from '../util/duration.js';
import { pgIdent, pgLiteral } from './pg-sql.js';

/**
 * What every role warren makes on a PostgreSQL server may take of it: task, template and gate
 * roles alike. Every task's database is on one server (warren's own has max_connections 200), so
 * without a limit one task's agent can open every connection and hold it, and nobody else — no
 * other task, not the merge queue's gate — can connect.
 *
 * - `CONNECTION LIMIT` is enforced: only a role with CREATEROLE can change it.
 * - `statement_timeout`, `idle_in_transaction_session_timeout` and
 *   `client_connection_check_interval` are the role's defaults (`ALTER ROLE … SET`): they end a
 *   runaway query, a forgotten transaction, and a query whose client is gone (a run that ended),
 *   but a session may SET them otherwise. What bounds a hostile task is its connection limit,
 *   and `rm`, which ends its role's sessions before DROP.
 *
 * A repository asks (`services.NAME.limits` in warren.yaml); the user caps (`postgres.limits` in
 * $WARREN_HOME/config.yaml, else CAPS): a repository never gets more than the user's share.
 */

export interface RoleLimits {
  connections: number;
  statementTimeoutMs: number;
  idleInTransactionMs: number;
}

/** What a role gets when the repository asks for nothing (each held to the cap too). */
export const DEFAULT_LIMITS: RoleLimits = {
  connections: 20,
  statementTimeoutMs: 5 * 60_000,
  idleInTransactionMs: 10 * 60_000,
};

/** The most a repository may ask for, unless the user's config.yaml says otherwise (a quarter of warren's 200 connections). */
export const CAPS: RoleLimits = { connections: 50, statementTimeoutMs: 60 * 60_000, idleInTransactionMs: 60 * 60_000 };

/** How often a backend running a query checks that its client is still there (PostgreSQL 14+). */
export const CLIENT_CHECK_MS = 5000;

// PostgreSQL's timeouts are int milliseconds.
const PG_INT_MAX = 2_147_483_647;

const KEYS = [
  ['connections', 'connections', (v: number | string) => Number(v)],
  ['statementTimeoutMs', 'statement_timeout', (v: number | string) => parseDuration(String(v))],
  ['idleInTransactionMs', 'idle_in_transaction_timeout', (v: number | string) => parseDuration(String(v))],
] as const;

/**
 * Pure: the limits a service's roles get: what the repository asked, else the default, each held
 * to the user's cap (else CAPS); `capped` names the keys the repository asked more of than the cap.
 */
export function resolveLimits(
  caps: PgLimitsConfig | undefined,
  asked: PgLimitsConfig | undefined,
): { limits: RoleLimits; capped: { key: string; asked: number; cap: number }[] } {
  const limits = { ...DEFAULT_LIMITS };
  const capped: { key: string; asked: number; cap: number }[] = [];
  for (const [field, key, parse] of KEYS) {
    const capValue = caps?.[key];
    const cap = capValue === undefined ? CAPS[field] : parse(capValue);
    const askedValue = asked?.[key];
    const wanted = askedValue === undefined ? DEFAULT_LIMITS[field] : parse(askedValue);
    if (askedValue !== undefined && wanted > cap) capped.push({ key, asked: wanted, cap });
    limits[field] = Math.min(wanted, cap);
  }
  return { limits, capped };
}

/**
 * Statements for inside a DO block (the role exists): its limit and its session defaults, any
 * default it had set for itself reset first.
 */
export function roleLimitsSql(name: string, limits: RoleLimits): string {
  const role = pgIdent(name);
  const ms = (v: number) => String(Math.min(Math.max(1, Math.round(v)), PG_INT_MAX));
  return `ALTER ROLE ${role} CONNECTION LIMIT ${Math.max(1, Math.floor(limits.connections))};
         ALTER ROLE ${role} RESET ALL;
         ALTER ROLE ${role} SET statement_timeout = ${ms(limits.statementTimeoutMs)};
         ALTER ROLE ${role} SET idle_in_transaction_session_timeout = ${ms(limits.idleInTransactionMs)};
         IF current_setting('server_version_num')::int >= 140000 THEN
           BEGIN
             EXECUTE 'ALTER ROLE ${role} SET client_connection_check_interval = ${CLIENT_CHECK_MS}';
           EXCEPTION WHEN invalid_parameter_value THEN
             NULL; -- a platform that cannot tell a closed socket (not Linux): the setting must stay 0 there
           END;
         END IF;`;
}

/**
 * Ends every session of role `name` (as the admin role): it may log in no more, then its backends
 * are terminated. Outside a transaction block, as a DO statement of its own.
 */
export function endSessionsSql(name: string, options: { nologin: boolean }): string {
  return `DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${pgLiteral(name)}) THEN
    ${options.nologin ? `ALTER ROLE ${pgIdent(name)} NOLOGIN;` : ''}
    PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${pgLiteral(name)} AND pid <> pg_backend_pid();
  END IF;
END $$;`;
}
