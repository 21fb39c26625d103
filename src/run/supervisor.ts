import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { containedArgv, detectContainment, type ContainmentKind } from './containment.js';
import { childrenOf, isAlive, pidNamespaceOf, pidsInNamespace } from './proc.js';
import type { RunMount } from './run-mounts.js';

/**
 * The one place warren starts a task's processes (git has its own seam). Every run is bounded:
 * on timeout, on SIGINT/SIGTERM/SIGHUP to warren, the whole tree gets SIGTERM, then SIGKILL
 * after the grace period; warren being SIGKILLed ends it through the death signal.
 */
export interface SuperviseSpec {
  /** The command (already wrapped by the sandbox, if any). */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `inherit` passes warren's stdin; a string is written to the command's stdin and closed. */
  stdin: 'inherit' | 'ignore' | { text: string };
  timeoutMs?: number;
  graceMs: number;
  /** Appended to (opened with O_APPEND); output goes here as well as to `echo`. */
  logPath: string;
  /** Where output is shown live: stdout/stderr as they are, all to stderr (--json), or nowhere. */
  echo: 'split' | 'stderr' | 'none';
  /** True when `argv` is a bwrap command line that makes its own PID namespace. */
  sandboxed: boolean;
  /** Made in the run's own mount namespace before the command starts (needs a namespace containment). */
  mounts?: readonly RunMount[];
}

export type EndReason = 'exited' | 'timeout' | 'SIGINT' | 'SIGTERM' | 'SIGHUP';

export interface SuperviseResult {
  exitCode: number | null;
  /** The signal that ended the command, when one did. */
  signal: string | null;
  timedOut: boolean;
  /** Set when warren itself was asked to stop (Ctrl-C, SIGTERM, SIGHUP). */
  canceledBy: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | null;
  /** True when the grace ran out and SIGKILL was needed. */
  forced: boolean;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  containment: ContainmentKind;
  /** Processes of the run still alive once it ended (always 0 with a PID namespace). */
  survivors: number[];
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function supervise(spec: SuperviseSpec): Promise<SuperviseResult> {
  const contained = detectContainment();
  const containment = contained.kind;
  const argv = containedArgv(contained, spec.argv, spec.sandboxed, spec.mounts ?? []);
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('supervise: empty argv');
  const logFd = fs.openSync(spec.logPath, 'a', 0o600);
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const child = spawn(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: [typeof spec.stdin === 'object' ? 'pipe' : spec.stdin, 'pipe', 'pipe'],
    // Without a namespace, the process group is the only handle on the tree.
    detached: containment === 'process-group',
  });
  const rootPid = child.pid;
  // 'close' follows 'exit' once the pipes have delivered their last bytes.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let nsInode: number | null = null;
  const namespace = (): number | null => {
    if (nsInode !== null || rootPid === undefined || containment === 'process-group') return nsInode;
    const own = pidNamespaceOf(process.pid);
    for (const kid of childrenOf(rootPid)) {
      const ino = pidNamespaceOf(kid);
      if (ino !== null && ino !== own) nsInode = ino;
    }
    return nsInode;
  };

  const signalTree = (signal: NodeJS.Signals): void => {
    if (rootPid === undefined) return;
    if (containment === 'process-group') {
      tryKill(-rootPid, signal);
      return;
    }
    const ino = namespace();
    if (ino !== null) for (const pid of pidsInNamespace(ino)) tryKill(pid, signal);
    // Before the namespace exists, or to finish: the wrapper's death takes the namespace with it.
    if (ino === null || signal === 'SIGKILL') tryKill(rootPid, 'SIGKILL');
  };

  let timedOut = false;
  let canceledBy: SuperviseResult['canceledBy'] = null;
  let forced = false;
  let ending = false;
  let killTimer: NodeJS.Timeout | undefined;
  const end = (why: EndReason): void => {
    if (why === 'timeout') timedOut = true;
    else if (why !== 'exited') canceledBy = why;
    if (ending) {
      // A second Ctrl-C does not wait out the grace.
      if (why !== 'timeout') {
        forced = true;
        signalTree('SIGKILL');
      }
      return;
    }
    ending = true;
    signalTree('SIGTERM');
    killTimer = setTimeout(() => {
      forced = true;
      signalTree('SIGKILL');
    }, spec.graceMs);
  };

  const timer = spec.timeoutMs === undefined ? undefined : setTimeout(() => end('timeout'), spec.timeoutMs);
  const handlers = FORWARDED.map((sig) => {
    const handler = (): void => end(sig);
    process.on(sig, handler);
    return { sig, handler };
  });

  const out = spec.echo === 'none' ? null : spec.echo === 'stderr' ? process.stderr : process.stdout;
  const err = spec.echo === 'none' ? null : process.stderr;
  child.stdout?.on('data', (chunk: Buffer) => {
    fs.writeSync(logFd, chunk);
    out?.write(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    fs.writeSync(logFd, chunk);
    err?.write(chunk);
  });
  if (typeof spec.stdin === 'object' && child.stdin) {
    child.stdin.on('error', () => undefined); // the command may exit without reading it
    child.stdin.end(spec.stdin.text);
  }

  try {
    const status = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // The wrapper has exited: with a namespace, the kernel has ended every process in it.
    // Without one, sweep the process group once more.
    if (containment === 'process-group' && rootPid !== undefined) tryKill(-rootPid, 'SIGKILL');
    await drain(closed, child.stdout, child.stderr);
    const survivors = findSurvivors(containment, nsInode, rootPid);
    const ended = Date.now();
    return {
      ...decodeStatus(status.code, status.signal),
      timedOut,
      canceledBy,
      forced,
      startedAt,
      endedAt: new Date(ended).toISOString(),
      durationMs: ended - started,
      containment,
      survivors,
    };
  } finally {
    if (timer) clearTimeout(timer);
    if (killTimer) clearTimeout(killTimer);
    for (const { sig, handler } of handlers) process.off(sig, handler);
    fs.closeSync(logFd);
  }
}

/**
 * The namespace's init reports a command killed by signal N as exit 128+N (the shell
 * convention), so both are decoded here.
 */
function decodeStatus(code: number | null, signal: NodeJS.Signals | null): { exitCode: number | null; signal: string | null } {
  if (signal) return { exitCode: 128 + (os.constants.signals[signal] ?? 0), signal };
  if (code !== null && code > 128 && code < 128 + 65) {
    const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
    return { exitCode: code, signal: name ?? null };
  }
  return { exitCode: code, signal: null };
}

function findSurvivors(kind: ContainmentKind, ino: number | null, rootPid: number | undefined): number[] {
  if (kind !== 'process-group') return ino === null ? [] : pidsInNamespace(ino);
  return rootPid !== undefined && isAlive(rootPid) ? [rootPid] : [];
}

/** Waits briefly for the pipes to deliver their last bytes; an escaped holder cannot stall us. */
async function drain(closed: Promise<void>, ...streams: ({ destroy(): void } | null)[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 250)))]);
  clearTimeout(timer);
  for (const s of streams) s?.destroy();
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
