import fs from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import type { Db } from './db.js';

/**
 * The machine refusing warren's writes — a full disk, a read-only file system, a state database
 * that another process keeps locked — is not a bug in warren. Each becomes a WarrenError that
 * names the file and says what to do, where it happens: in the state database (every statement
 * goes through `guardDb`) and, for files, where the command line, the dashboard and MCP report
 * an error (`environmentError`). Nothing is lost either way: an operation is recorded as an
 * intent before its first step, and one cut short is repaired by the next command.
 */

const FULL = new Set(['ENOSPC', 'EDQUOT']);

interface SystemError {
  code: string;
  message: string;
  path?: string;
}

function systemError(err: unknown): SystemError | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { code?: unknown; message?: unknown; path?: unknown };
  if (typeof e.code !== 'string' || typeof e.message !== 'string') return null;
  return { code: e.code, message: e.message, ...(typeof e.path === 'string' ? { path: e.path } : {}) };
}

const detail = (e: SystemError): string => e.message.replace(/^SQLITE_\w+: /, '');

function diskFull(file: string, e: SystemError, cause: unknown): WarrenError {
  return new WarrenError(
    'DISK_FULL',
    `the disk holding ${file} is full (${e.code}: ${detail(e)}), so warren could not write it. Nothing was lost: what was written stays, and an operation cut short here is repaired by the next warren command.`,
    {
      hint: `Free space on that file system (\`df -h ${path.dirname(file)}\`; \`warren gc\` removes what warren no longer needs), then run the command again.`,
      cause,
      details: { file, errno: e.code },
    },
  );
}

function readOnly(file: string, e: SystemError, cause: unknown): WarrenError {
  return new WarrenError(
    'READ_ONLY',
    `${file} is on a read-only file system (${e.code}: ${detail(e)}), so warren could not write it. Nothing was lost: what was written stays, and an operation cut short here is repaired by the next warren command.`,
    {
      hint: `Make that file system writable again (or, for warren's own state, set WARREN_HOME to a writable folder of yours), then run the command again.`,
      cause,
      details: { file, errno: e.code },
    },
  );
}

/** A file-system refusal (ENOSPC, EDQUOT, EROFS) from anywhere as a WarrenError naming its file; null for anything else. */
export function environmentError(err: unknown): WarrenError | null {
  if (isWarrenError(err)) return null;
  const e = systemError(err);
  if (!e) return null;
  const file = e.path ?? 'a file';
  if (FULL.has(e.code)) return diskFull(file, e, err);
  if (e.code === 'EROFS') return readOnly(file, e, err);
  return null;
}

/** SQLite's own codes for the same states, on the state database `file`; null for anything else. */
export function stateError(err: unknown, file: string, waitedMs: number): WarrenError | null {
  if (isWarrenError(err)) return null;
  const e = systemError(err);
  if (!e || !e.code.startsWith('SQLITE_')) return environmentError(err);
  if (e.code === 'SQLITE_FULL') return diskFull(file, e, err);
  if (e.code.startsWith('SQLITE_READONLY')) return readOnly(file, e, err);
  if (e.code.startsWith('SQLITE_BUSY') || e.code.startsWith('SQLITE_LOCKED')) return locked(file, waitedMs, err);
  if (e.code.startsWith('SQLITE_CANTOPEN')) {
    return new WarrenError(
      'STATE_UNAVAILABLE',
      `warren cannot open its state database ${file} (${detail(e)}): its folder is missing or not writable, or the file system is read-only. Nothing was changed.`,
      {
        hint: `Check ${path.dirname(file)}'s permissions and mount, or set WARREN_HOME to a writable folder of your own.`,
        cause: err,
        details: { file },
      },
    );
  }
  if (e.code === 'SQLITE_IOERR' || e.code.startsWith('SQLITE_IOERR_')) {
    // SQLite reports a full disk as an I/O error when it cannot grow the WAL index (`-shm`).
    if (nearlyFull(path.dirname(file))) return diskFull(file, e, err);
    return new WarrenError(
      'STATE_UNAVAILABLE',
      `the file system under warren's state database ${file} failed a read or write (${e.code}: ${detail(e)}). Nothing was lost: an operation cut short here is repaired by the next warren command.`,
      {
        hint: `Check that file system (\`dmesg\`, \`df -h ${path.dirname(file)}\`), then run the command again.`,
        cause: err,
        details: { file },
      },
    );
  }
  return null;
}

/** Less than 64 KiB left for warren's user on the file system holding `dir`. */
function nearlyFull(dir: string): boolean {
  try {
    const st = fs.statfsSync(dir);
    return st.bavail * st.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

export function locked(file: string, waitedMs: number, cause?: unknown): WarrenError {
  return new WarrenError(
    'STATE_LOCKED',
    `the state database ${file} stayed locked by another process for ${Math.round(waitedMs / 1000)} s, so warren gave up waiting. Nothing was changed by this command.`,
    {
      hint: `Another warren command, or a sqlite3 shell, holds it: \`fuser ${file}\` names the process. Let it finish or end it, then run the command again (WARREN_STATE_TIMEOUT waits longer).`,
      cause,
      details: { file, waitedMs },
    },
  );
}

/**
 * `db` with every statement, transaction, `exec` and `pragma` turning SQLite's full, read-only,
 * locked and cannot-open errors into the WarrenErrors above. A statement or transaction made
 * from it is guarded the same way; everything else passes through.
 */
export function guardDb(db: Db, file: string, waitedMs: () => number): Db {
  const translate = (err: unknown): unknown => stateError(err, file, waitedMs()) ?? err;
  return guarded(db, translate);
}

function guarded<T extends object>(target: T, translate: (err: unknown) => unknown): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        let out: unknown;
        try {
          out = (value as (...a: unknown[]) => unknown).apply(t, args);
        } catch (err) {
          throw translate(err);
        }
        if (out === t) return receiver; // a chained call (`stmt.pluck()`) stays guarded
        if (prop === 'prepare' && typeof out === 'object' && out !== null) return guarded(out, translate);
        if (prop === 'transaction' && typeof out === 'function') return guardedTransaction(out, translate);
        return out;
      };
    },
  });
}

type TransactionFn = ((...args: unknown[]) => unknown) &
  Record<'deferred' | 'immediate' | 'exclusive', (...args: unknown[]) => unknown>;

function guardedTransaction(fn: unknown, translate: (err: unknown) => unknown): unknown {
  const tx = fn as TransactionFn;
  const call =
    (f: (...a: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      try {
        return f(...args);
      } catch (err) {
        throw translate(err);
      }
    };
  return Object.assign(call(tx), {
    deferred: call(tx.deferred),
    immediate: call(tx.immediate),
    exclusive: call(tx.exclusive),
  });
}
