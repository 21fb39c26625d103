import fs from 'node:fs';
import net from 'node:net';

/**
 * Is a service ready? Each check is tried every 100 ms until it passes, the service ends, or
 * the timeout: an HTTP path that answers (any status below 500), a port that accepts a
 * connection, or a line of its log (written after `logFrom`).
 */
export type ReadyCheck = { http: string } | { port: true } | { log: string; thenPort?: true };

export interface ReadyWait {
  check: ReadyCheck;
  port: number | null;
  log: string;
  /** Where this start's output begins in the log. */
  logFrom: number;
  timeoutMs: number;
  /** False once the service has ended: waiting stops at once. */
  alive(): boolean;
  /** Where a port or HTTP check is asked, when the service's loopback is not this machine's (a pod's). */
  probe?: (port: number, http: string | null) => Promise<boolean>;
}

export type ReadyResult = { ready: true; ms: number } | { ready: false; why: 'timeout' | 'exited'; ms: number };

export async function waitReady(wait: ReadyWait): Promise<ReadyResult> {
  const started = Date.now();
  for (;;) {
    if (await passes(wait)) return { ready: true, ms: Date.now() - started };
    if (!wait.alive()) return { ready: false, why: 'exited', ms: Date.now() - started };
    if (Date.now() - started >= wait.timeoutMs) return { ready: false, why: 'timeout', ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function passes(wait: ReadyWait): Promise<boolean> {
  const { check } = wait;
  if ('log' in check) {
    if (!logSince(wait.log, wait.logFrom).includes(check.log)) return false;
    if (check.thenPort !== true) return true;
    return wait.port !== null && (wait.probe ? wait.probe(wait.port, null) : canConnect(wait.port));
  }
  if (wait.port === null) return false;
  if (wait.probe) return wait.probe(wait.port, 'http' in check ? check.http : null);
  if ('port' in check) return canConnect(wait.port);
  try {
    const res = await fetch(`http://127.0.0.1:${wait.port}${check.http}`, {
      signal: AbortSignal.timeout(2000),
      redirect: 'manual',
    });
    await res.body?.cancel();
    return res.status < 500;
  } catch {
    return false;
  }
}

/** The log's text from `from` on (at most its last 1 MiB). */
export function logSince(log: string, from: number): string {
  let fd: number;
  try {
    fd = fs.openSync(log, 'r');
  } catch {
    return '';
  }
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(from, size - 1024 * 1024);
    const buf = Buffer.alloc(Math.max(0, size - start));
    fs.readSync(fd, buf, 0, buf.length, start);
    return buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export function logSize(log: string): number {
  try {
    return fs.statSync(log).size;
  } catch {
    return 0;
  }
}

/** The last `lines` lines of what the log got since `from`: what a failed start shows. */
export function logTail(log: string, from: number, lines = 20): string {
  return logSince(log, from).trimEnd().split('\n').slice(-lines).join('\n');
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
