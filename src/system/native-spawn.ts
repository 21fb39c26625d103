import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { getSystemErrorName } from 'node:util';

/**
 * Starting a process without forking this one: native/spawn.c (posix_spawn, a clone that shares
 * this process's memory until the child execs), built by scripts/native.js into
 * dist/native/spawn.node. Node 20's child_process forks first; on this VM that held the main
 * thread ~14 ms for a command's first git call and ~4 ms for each after it, and made each page the
 * process wrote afterwards fault once more (docs/benchmarks.md). What child_process does and this
 * keeps: argv without a shell, the program looked up in the child's own PATH, the child's signals
 * back to their defaults and none blocked, a session of its own when asked (`detached`), pipes
 * close-on-exec on this side. The exit is read on SIGCHLD by waitpid for this pid alone, so
 * child_process's own children are untouched. Without the built file (no C compiler when warren
 * was built) src/system/spawn.ts uses child_process, and `warren new` says so (`spawn.fallback`);
 * `WARREN_SPAWN=fork` chooses child_process on purpose. The start runs on the calling thread, the
 * main one, as a fork does: a child's parent-death signal (`setpriv --pdeathsig`, the supervisor's)
 * follows the thread that started it. (Started on a thread of libuv's pool instead, it measured no
 * faster: 277.2 against 277.9 ms for a cold `warren new`, 31 rounds.)
 */

interface Addon {
  spawn(file: string, argv: string[], env: string[], cwd: string | null, setsid: boolean, stdio: [number, number, number]): number | [number, number, number, number];
  reap(pid: number): null | [number, number];
}

export interface NativeChild {
  pid: number;
  stdin: Writable | null;
  stdout: Readable | null;
  stderr: Readable | null;
  /** Called once, when the process has exited (reaped). */
  onExit(listener: (exitCode: number | null, signal: NodeJS.Signals | null) => void): void;
}

export type NativeStdio = 'ignore' | 'pipe';

let loaded: { addon: Addon } | { error: string } | null = null;

/** Where the build puts the addon: dist/native/, two folders up from this file in src/, dist/ and each bundle. */
export const NATIVE_SPAWN_FILE = decodeURIComponent(new URL('../../dist/native/spawn.node', import.meta.url).pathname);

/** The addon, loaded once; why not, when it cannot be. */
function loadAddon(): { addon: Addon } | { error: string } {
  if (loaded === null) {
    try {
      if (!fs.existsSync(NATIVE_SPAWN_FILE)) throw new Error(`${NATIVE_SPAWN_FILE} was not built (scripts/native.js needs a C compiler and Node's headers)`);
      const mod = { exports: {} as Addon };
      process.dlopen(mod, NATIVE_SPAWN_FILE);
      loaded = { addon: mod.exports };
    } catch (err) {
      loaded = { error: `${NATIVE_SPAWN_FILE} could not be loaded: ${(err as Error).message}` };
    }
  }
  return loaded;
}


export type SpawnMethod =
  | { method: 'posix_spawn' }
  /** `fallback`: the addon should be there and is not (`why`); otherwise fork was chosen (WARREN_SPAWN=fork) or is the platform's way. */
  | { method: 'fork'; fallback: boolean; why: string };

/** How this process starts processes now. */
export function spawnMethod(): SpawnMethod {
  if (process.platform !== 'linux') return { method: 'fork', fallback: false, why: `warren starts processes without forking on Linux only, not ${process.platform}` };
  if (process.env.WARREN_SPAWN === 'fork') return { method: 'fork', fallback: false, why: 'WARREN_SPAWN=fork' };
  const got = loadAddon();
  return 'addon' in got ? { method: 'posix_spawn' } : { method: 'fork', fallback: true, why: got.error };
}

/**
 * Starts `argv` natively; null when the addon is not there (the caller uses child_process). A
 * start that fails (no such program or folder) returns an errno error shaped as child_process's.
 */
export function spawnNative(
  argv: readonly string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; setsid: boolean; stdio: [NativeStdio, NativeStdio, NativeStdio] },
): NativeChild | NodeJS.ErrnoException | null {
  // Asked on every start, so that `WARREN_SPAWN=fork` holds for whatever starts after it is set.
  if (spawnMethod().method !== 'posix_spawn') return null;
  const native = (loadAddon() as { addon: Addon }).addon;
  const [file, ...rest] = argv;
  if (file === undefined) throw new Error('spawnNative: empty argv');
  const env = Object.entries(options.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
  // C strings end at a NUL: child_process refuses such a string with its own error, so it gets it.
  if ([...argv, ...env, options.cwd ?? ''].some((s) => s.includes('\0'))) return null;
  watchChildren(); // before the start: an exit can come before spawn() returns
  const started = native.spawn(file, [file, ...rest], env, options.cwd ?? null, options.setsid, options.stdio.map((s) => (s === 'pipe' ? 1 : 0)) as [number, number, number]);
  if (typeof started === 'number') {
    unwatchIfIdle();
    const code = getSystemErrorName(started);
    return Object.assign(new Error(`spawn ${file} ${code}`), { errno: started, code, syscall: `spawn ${file}`, path: file, spawnargs: rest });
  }
  const [pid, fd0, fd1, fd2] = started;
  let exitListener: ((exitCode: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  let exited: [number | null, NodeJS.Signals | null] | undefined;
  pending.set(pid, (code, signal) => {
    exited = [code, signal];
    exitListener?.(code, signal);
  });
  const child: NativeChild = {
    pid,
    stdin: fd0 >= 0 ? new net.Socket({ fd: fd0, readable: false, writable: true }) : null,
    stdout: fd1 >= 0 ? new net.Socket({ fd: fd1, readable: true, writable: false }) : null,
    stderr: fd2 >= 0 ? new net.Socket({ fd: fd2, readable: true, writable: false }) : null,
    onExit(listener) {
      if (exited) listener(...exited);
      else exitListener = listener;
    },
  };
  reapAll(); // the child may have exited already
  return child;
}

const pending = new Map<number, (exitCode: number | null, signal: NodeJS.Signals | null) => void>();
let watching = false;
let keepAlive: NodeJS.Timeout | undefined;
/** Signal numbers to names, the first name of each number as Node's own does (6 is SIGABRT, not SIGIOT). */
const signalNames = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(os.constants.signals)) if (!signalNames.has(n)) signalNames.set(n, name as NodeJS.Signals);

function reapAll(): void {
  const got = loadAddon();
  if (!('addon' in got)) return;
  for (const [pid, done] of pending) {
    const status = got.addon.reap(pid);
    if (status === null) continue;
    pending.delete(pid);
    const [code, signal] = status;
    done(code >= 0 ? code : null, signal > 0 ? (signalNames.get(signal) ?? null) : null);
  }
  unwatchIfIdle();
}

/**
 * SIGCHLD says a child has exited; a timer, while any is pending, keeps this process alive until
 * each is reaped — Node's signal listeners do not, and a child with no pipe (or that closed them)
 * would otherwise let the process end in the middle of its command, with status 0 — and reaps
 * on its own should a signal ever be missed.
 */
function watchChildren(): void {
  if (watching) return;
  watching = true;
  process.on('SIGCHLD', reapAll);
  keepAlive = setInterval(reapAll, 200);
}

function unwatchIfIdle(): void {
  if (!watching || pending.size > 0) return;
  watching = false;
  process.off('SIGCHLD', reapAll);
  clearInterval(keepAlive);
}
