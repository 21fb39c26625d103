import fs from 'node:fs';
import path from 'node:path';
import { spawnService, tryKill } from '../system/spawn.js';
import { writeFileAtomic } from '../util/atomic.js';
import { procStartTime } from '../util/lockfile.js';
import { serviceArgv, type Containment, type ContainmentKind } from '../system/containment.js';
import type { RunMount } from '../system/mounts.js';
import { childrenOf, environOf, isAlive, listPids, pidNamespaceOf, pidsInNamespace } from '../system/proc.js';

/**
 * A long-running process warren started for a task (or its PostgreSQL cluster), held in a PID
 * namespace of its own and recorded in a folder of its own: `daemon.json` (the wrapper's pid
 * and kernel start time, so a reused pid is never taken for it) and `status` (the exit status,
 * written by the namespace's init when the command ends). Nothing watches it between commands:
 * each command that looks finds it running, stopped by warren, or exited by itself (a crash).
 */

export interface DaemonRecord {
  pid: number;
  /** /proc/PID/stat's start time: the same pid later is another process. */
  procStart: string | null;
  startedAt: string;
  argv: string[];
  log: string;
  containment: ContainmentKind;
}

export type DaemonState =
  | { state: 'running'; record: DaemonRecord }
  /** It ended by itself: a crash, or a command that exited (its status when known). */
  | { state: 'exited'; record: DaemonRecord; exitCode: number | null }
  /** Never started, or stopped by warren. */
  | { state: 'stopped' };

const RECORD = 'daemon.json';
const STATUS = 'status';
/**
 * Every process of a daemon carries its folder in this variable, set before it is started: a
 * warren killed between the start and the record (a window of a few system calls, wider on a
 * loaded machine) leaves processes that are still found, and stopped, by their folder.
 */
const MARK = 'WARREN_DAEMON';

/** Live processes carrying `dir` as their daemon folder (read from /proc/PID/environ). */
function markedPids(dir: string): number[] {
  return listPids().filter((pid) => pid !== process.pid && environOf(pid).get(MARK) === dir && isAlive(pid));
}

export interface StartDaemon {
  dir: string;
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: string;
  containment: Containment;
  /** Run as a uid other than 0 when warren is root (containment.ts's serviceArgv). */
  notRoot?: boolean;
  /** Copy-on-write layers mounted in the daemon's own namespace first (a task's, src/run/boundary.ts). */
  mounts?: readonly RunMount[];
  /** The command as configured, for the record (`argv` may be it wrapped in a sandbox's host). */
  command?: readonly string[];
}

export function startDaemon(spec: StartDaemon): DaemonRecord {
  fs.mkdirSync(spec.dir, { recursive: true, mode: 0o700 });
  fs.rmSync(path.join(spec.dir, STATUS), { force: true });
  const argv = serviceArgv(
    spec.containment,
    spec.argv,
    path.join(spec.dir, STATUS),
    spec.notRoot === true,
    spec.mounts ?? [],
  );
  const pid = spawnService(argv, { cwd: spec.cwd, env: { ...spec.env, [MARK]: spec.dir }, logPath: spec.log });
  const record: DaemonRecord = {
    pid,
    procStart: procStartTime(pid),
    startedAt: new Date().toISOString(),
    argv: [...(spec.command ?? spec.argv)],
    log: spec.log,
    containment: spec.containment.kind,
  };
  writeFileAtomic(path.join(spec.dir, RECORD), `${JSON.stringify(record)}\n`);
  return record;
}

export function readDaemon(dir: string): DaemonRecord | null {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(dir, RECORD), 'utf8')) as DaemonRecord;
    return typeof v.pid === 'number' ? v : null;
  } catch {
    return null;
  }
}

function alive(record: DaemonRecord): boolean {
  return isAlive(record.pid) && (record.procStart === null || procStartTime(record.pid) === record.procStart);
}

export function daemonState(dir: string): DaemonState {
  const record = readDaemon(dir);
  if (!record) {
    // Started, and its record never written: running all the same, for whoever stops it.
    const [pid] = fs.existsSync(dir) ? markedPids(dir) : [];
    if (pid === undefined) return { state: 'stopped' };
    return {
      state: 'running',
      record: { pid, procStart: null, startedAt: '', argv: [], log: '', containment: 'process-group' },
    };
  }
  if (alive(record)) return { state: 'running', record };
  let exitCode: number | null = null;
  try {
    const text = fs.readFileSync(path.join(dir, STATUS), 'utf8').trim();
    if (/^\d+$/.test(text)) exitCode = Number(text);
  } catch {
    // killed with its namespace: no status was written
  }
  return { state: 'exited', record, exitCode };
}

/** Every process of the daemon (its namespace's, or its process group's leader), for a last check. */
export function daemonPids(record: DaemonRecord): number[] {
  if (!alive(record)) return [];
  if (record.containment === 'process-group') return [record.pid];
  const own = pidNamespaceOf(process.pid);
  for (const kid of childrenOf(record.pid)) {
    const ino = pidNamespaceOf(kid);
    if (ino !== null && ino !== own) return [record.pid, ...pidsInNamespace(ino)];
  }
  return [record.pid];
}

export interface Stopped {
  /** SIGKILL was needed after the grace. */
  forced: boolean;
  /** Processes still alive at the end (never, with a namespace). */
  survivors: number[];
  /** It had already ended by itself: its status, when known. */
  exitedBefore: { exitCode: number | null } | null;
}

/**
 * Asks the command to stop (`signal`, forwarded by the namespace's init), waits up to `graceMs`,
 * then SIGKILLs the wrapper, whose death ends the namespace and everything in it; forgets the
 * record once nothing is left. Safe to call on a daemon that is gone or was never started.
 */
export async function stopDaemon(dir: string, graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<Stopped> {
  const state = daemonState(dir);
  if (state.state === 'running' && state.record.startedAt === '') return killMarked(dir);
  if (state.state !== 'running') {
    // Ended by itself: anything of it still about (outside a namespace, a process that left its group) goes too.
    const leftovers = markedPids(dir).length > 0 ? await killMarked(dir) : null;
    if (!leftovers) forget(dir);
    return {
      forced: leftovers !== null,
      survivors: leftovers?.survivors ?? [],
      exitedBefore: state.state === 'exited' ? { exitCode: state.exitCode } : null,
    };
  }
  const { record } = state;
  const signalAll = (sig: NodeJS.Signals): void => {
    if (record.containment === 'process-group') {
      tryKill(-record.pid, sig);
      return;
    }
    // The namespace's init (the wrapper's child) forwards it to the command.
    for (const kid of childrenOf(record.pid)) tryKill(kid, sig);
  };
  signalAll(signal);
  let forced = false;
  if (!(await waitGone(record, graceMs))) {
    forced = true;
    const pids = daemonPids(record);
    tryKill(record.pid, 'SIGKILL');
    if (record.containment === 'process-group') tryKill(-record.pid, 'SIGKILL');
    for (const pid of pids) tryKill(pid, 'SIGKILL');
    await waitGone(record, 5000);
  }
  // The kernel ends the namespace's processes as its init goes; what carries the folder is gone with them.
  await waitUntil(() => markedPids(dir).length === 0, 5000);
  const survivors = [...new Set([...daemonPids(record), ...markedPids(dir)])];
  if (survivors.length === 0) forget(dir);
  return { forced, survivors, exitedBefore: null };
}

/** A daemon without a record: every process that carries its folder, killed. */
async function killMarked(dir: string): Promise<Stopped> {
  for (let i = 0; i < 50; i++) {
    const pids = markedPids(dir);
    if (pids.length === 0) break;
    for (const pid of pids) tryKill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 20));
  }
  const survivors = markedPids(dir);
  if (survivors.length === 0) forget(dir);
  return { forced: true, survivors, exitedBefore: null };
}

function forget(dir: string): void {
  fs.rmSync(path.join(dir, RECORD), { force: true });
  fs.rmSync(path.join(dir, STATUS), { force: true });
}

async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

async function waitGone(record: DaemonRecord, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(record)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}
