import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A lock file created atomically (a complete temp file hard-linked into place, so a reader
 * never sees it half written) that names its holder. A holder on this host whose process is
 * gone — or whose pid now belongs to a newer process — is stale and is taken over.
 */

export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
  /** Kernel start time of the holder process (Linux), to tell a reused pid from the holder. */
  procStart: string | null;
  purpose: string;
  token: string;
}

export type AcquireResult =
  { ok: true; lock: HeldLock; tookOverFrom: LockHolder | null } | { ok: false; holder: LockHolder | null };

export interface HeldLock {
  file: string;
  holder: LockHolder;
  release(): void;
}

const held = new Set<HeldLock>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const lock of [...held]) lock.release();
  });
}

export function procStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime) comes after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The process state letter from /proc/<pid>/stat (R, S, Z…), or null where there is no /proc. */
export function procState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) || null;
  } catch {
    return null;
  }
}

export function isHolderAlive(holder: LockHolder): boolean {
  if (holder.host !== os.hostname()) return true; // cannot tell: assume alive
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (procState(holder.pid) === 'Z') return false; // exited, merely not reaped yet
  if (holder.procStart !== null) {
    const now = procStartTime(holder.pid);
    if (now !== null && now !== holder.procStart) return false; // pid reused by another process
  }
  return true;
}

export function readHolder(file: string): LockHolder | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string' || typeof parsed.token !== 'string')
      return null;
    return parsed as LockHolder;
  } catch {
    return null;
  }
}

function linkInto(file: string, content: string): boolean {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  fs.writeFileSync(tmp, content, { flag: 'wx', mode: 0o644 });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Tries once to take the lock; takes over a stale holder. Never waits. */
export function tryAcquire(file: string, purpose: string): AcquireResult {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  installExitHook();
  const holder: LockHolder = {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    procStart: procStartTime(process.pid),
    purpose,
    token: randomUUID(),
  };
  let tookOverFrom: LockHolder | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (linkInto(file, JSON.stringify(holder))) {
      const lock: HeldLock = {
        file,
        holder,
        release() {
          held.delete(lock);
          if (readHolder(file)?.token === holder.token) fs.rmSync(file, { force: true });
        },
      };
      held.add(lock);
      return { ok: true, lock, tookOverFrom };
    }
    const current = readHolder(file);
    if (current === null) {
      // Unreadable: written by something else, or removed meanwhile. Only an old one is stale.
      if (!isOld(file, 10_000)) return { ok: false, holder: null };
    } else if (isHolderAlive(current)) {
      return { ok: false, holder: current };
    }
    if (!removeStale(file, current)) return { ok: false, holder: readHolder(file) };
    tookOverFrom = current;
  }
  return { ok: false, holder: readHolder(file) };
}

function isOld(file: string, ms: number): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs > ms;
  } catch {
    return true;
  }
}

/** Removes a stale lock under a short-lived guard, so two takers cannot both remove and re-create it. */
function removeStale(file: string, stale: LockHolder | null): boolean {
  const guard = `${file}.takeover`;
  if (!linkInto(guard, String(process.pid))) {
    if (isOld(guard, 5_000)) fs.rmSync(guard, { force: true });
    return false;
  }
  try {
    const again = readHolder(file);
    if ((again?.token ?? null) !== (stale?.token ?? null)) return again === null && fs.existsSync(file) === false;
    fs.rmSync(file, { force: true });
    return true;
  } finally {
    fs.rmSync(guard, { force: true });
  }
}

/**
 * Waits until the lock is free or the deadline passes. Within one process (a `warren serve`, an
 * orchestrator making many workspaces at once) waiters for the same file queue in order and
 * only the first watches the file, so a release wakes one waiter, not all of them racing for
 * it. Across processes the holder's release (an unlink in the lock's folder) wakes the waiter at
 * once through a watch on that folder, so a lock handed from one process to the next idles for
 * no polling interval; polling with jitter stays as the fallback (a holder that died without
 * releasing, a file system whose watches do not fire).
 */
export async function acquireWaiting(file: string, purpose: string, waitMs: number): Promise<AcquireResult> {
  const deadline = Date.now() + waitMs;
  const before = localTurns.get(file) ?? Promise.resolve();
  let endTurn = (): void => undefined;
  const turn = new Promise<void>((resolve) => (endTurn = resolve));
  const queue = before.then(() => turn);
  localTurns.set(file, queue);
  const finish = (): void => {
    endTurn();
    if (localTurns.get(file) === queue) localTurns.delete(file);
  };
  let timer: NodeJS.Timeout | undefined;
  const myTurn = await Promise.race([
    before.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (!myTurn) {
    // The waiters ahead in this process kept it the whole time; our turn, when it comes, is passed on at once.
    void before.then(finish);
    return { ok: false, holder: readHolder(file) };
  }
  const result = await acquireAcrossProcesses(file, purpose, deadline);
  if (!result.ok) {
    finish();
    return result;
  }
  const release = result.lock.release.bind(result.lock);
  result.lock.release = () => {
    release();
    finish();
  };
  return result;
}

/** Waiters in this process, per lock file: each waits for the one before it. */
const localTurns = new Map<string, Promise<void>>();

async function acquireAcrossProcesses(file: string, purpose: string, deadline: number): Promise<AcquireResult> {
  let delay = 5;
  let attempt = tryAcquire(file, purpose);
  if (attempt.ok || Date.now() >= deadline) return attempt;
  let wake: (() => void) | null = null;
  const watcher = watchRelease(file, () => wake?.());
  try {
    for (;;) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay + Math.random() * delay);
        function done(): void {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = done;
      });
      delay = Math.min(delay * 2, 100);
      attempt = tryAcquire(file, purpose);
      if (attempt.ok || Date.now() >= deadline) return attempt;
    }
  } finally {
    watcher?.close();
  }
}

/** A watch on the lock's folder that calls `onRelease` when the lock file goes; null where watches are unavailable (polling covers it). */
function watchRelease(file: string, onRelease: () => void): fs.FSWatcher | null {
  const name = path.basename(file);
  try {
    const watcher = fs.watch(path.dirname(file), { persistent: false }, (_event, changed) => {
      if (changed === null || changed === name) onRelease();
    });
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return null;
  }
}
