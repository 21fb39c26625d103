import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';

/**
 * The one way warren starts a process: git, system tools (cp, mount, unshare) and a task's
 * supervised commands all build on it. Argv only, never a shell. Every process is bounded:
 * a timeout or an abort asks the tree to end (SIGTERM), and after `graceMs` makes it
 * (SIGKILL); the result says which of those happened (`timedOut`, `aborted`, `forced`).
 *
 * "The tree" is the process group by default (the child leads its own group, so whatever it
 * started goes too); a caller with a better handle — the supervisor's PID namespace — passes
 * its own `signalTree`.
 */

export type Sink = 'collect' | 'ignore' | 'inherit' | ((chunk: Buffer) => void);

/** A channel to a child that is a Node program (fd 3, NODE_CHANNEL_FD): messages, and sockets handed over. */
export interface Channel {
  send(message: string, socket?: net.Socket): void;
  onMessage(listener: (message: unknown) => void): void;
}

export interface SpawnSpec {
  argv: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * `inherit` passes this process's stdin; a string or Buffer is written and closed; `held` is
   * written and stays open until the process ends (an SSH runner's request: the remote side takes
   * the end of its input for the end of the connection, src/run/ssh/), `then` piped after it as it
   * comes (its end does not close the input); `stream` is piped in, its end the input's;
   * `later` is written and closed once it settles (a process started ahead of knowing its input;
   * rejected: closed empty). A piped stream is unpiped when the process exits, never read after.
   */
  stdin?:
    | 'ignore'
    | 'inherit'
    | string
    | Buffer
    | { held: string; then?: NodeJS.ReadableStream }
    | { stream: NodeJS.ReadableStream }
    | { later: Promise<string> };
  stdout?: Sink;
  stderr?: Sink;
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL when the run is ended early; 0 sends SIGKILL at once. */
  graceMs?: number;
  /** Aborting ends the run like a timeout does, recorded as `aborted`. */
  signal?: AbortSignal;
  /** Lead a process group of its own (default true): the handle on the tree without a namespace. */
  group?: boolean;
  /** How to signal the whole tree; default: the process group (or the child alone without one). */
  signalTree?: (signal: NodeJS.Signals) => void;
  /**
   * After the child exits, how long to wait for its pipes to close. A process that escaped the
   * tree can hold them open for ever; default: wait for them (git and tools never escape).
   */
  drainMs?: number;
  onSpawn?: (pid: number) => void;
  /** Open a channel to the child (a Node program, or one that hands fd 3 on to one). */
  channel?: boolean;
}

export interface SpawnResult {
  argv: string[];
  /** null when the process was ended by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** SIGKILL was needed: the grace ran out, or a second stop asked for it. */
  forced: boolean;
  stdout: Buffer;
  stderr: Buffer;
  startedAt: number;
  durationMs: number;
  /** Set when the process could not be started at all (ENOENT, EACCES, a missing cwd). */
  spawnError: NodeJS.ErrnoException | null;
}

export interface BoundedProcess {
  pid: number | undefined;
  /** Ends the tree: SIGTERM, then SIGKILL after the grace; a second call sends SIGKILL at once. */
  stop(): void;
  done: Promise<SpawnResult>;
  /** With `channel`: the channel to the child. */
  channel: Channel | null;
}

export function startBounded(spec: SpawnSpec): BoundedProcess {
  const [file, ...args] = spec.argv;
  if (file === undefined) throw new Error('startBounded: empty argv');
  const group = spec.group ?? true;
  const stdin = spec.stdin ?? 'ignore';
  const startedAt = Date.now();
  const stdio: Stdio = [
    stdin === 'ignore' || stdin === 'inherit' ? stdin : 'pipe',
    sinkStdio(spec.stdout),
    sinkStdio(spec.stderr),
    ...(spec.channel ? (['ipc'] as const) : []),
  ];
  const child = spawn(file, args, { cwd: spec.cwd, env: spec.env ?? process.env, stdio, detached: group });
  const pid = child.pid;
  if (pid !== undefined) spec.onSpawn?.(pid);

  const out: Buffer[] = [];
  const err: Buffer[] = [];
  attach(child.stdout, spec.stdout, out);
  attach(child.stderr, spec.stderr, err);
  if (child.stdin && stdin !== 'ignore' && stdin !== 'inherit') {
    child.stdin.on('error', () => undefined); // the process may exit without reading it all
    const input = child.stdin;
    if (typeof stdin === 'object' && 'held' in stdin) {
      input.write(stdin.held);
      const then = stdin.then;
      then?.pipe(input, { end: false });
      child.once('exit', () => {
        then?.unpipe(input);
        input.destroy();
      });
    } else if (typeof stdin === 'object' && 'stream' in stdin) {
      const from = stdin.stream;
      from.pipe(input);
      child.once('exit', () => from.unpipe(input));
    } else if (typeof stdin === 'object' && 'later' in stdin) {
      stdin.later.then(
        (text) => child.stdin?.end(text),
        () => child.stdin?.end(),
      );
    } else child.stdin.end(stdin);
  }

  const signalTree =
    spec.signalTree ??
    ((sig: NodeJS.Signals) => {
      if (pid === undefined) return;
      tryKill(group ? -pid : pid, sig);
    });

  let timedOut = false;
  let aborted = false;
  let forced = false;
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  const kill = (): void => {
    forced = true;
    signalTree('SIGKILL');
  };
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (timer) clearTimeout(timer); // ending already: a timeout now would only cut the grace short
    if (stopping) {
      kill();
      return;
    }
    stopping = true;
    const grace = spec.graceMs ?? 0;
    if (grace <= 0) {
      kill();
      return;
    }
    signalTree('SIGTERM');
    killTimer = setTimeout(kill, grace);
  };
  if (spec.timeoutMs !== undefined) {
    timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, spec.timeoutMs);
  }
  const onAbort = (): void => {
    aborted = true;
    stop();
  };
  if (spec.signal?.aborted) onAbort();
  else spec.signal?.addEventListener('abort', onAbort, { once: true });

  const done = new Promise<SpawnResult>((resolve) => {
    const finish = (
      exitCode: number | null,
      signal: NodeJS.Signals | null,
      spawnError: NodeJS.ErrnoException | null,
    ): void => {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({
        argv: [...spec.argv],
        exitCode,
        signal,
        timedOut,
        aborted,
        forced,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        startedAt,
        durationMs: Date.now() - startedAt,
        spawnError,
      });
    };
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    // No pid: the process never ran (no 'exit' follows). Other errors (a failed kill) are not the end.
    child.once('error', (cause: NodeJS.ErrnoException) =>
      child.pid === undefined ? finish(null, null, cause) : undefined,
    );
    child.once('exit', (code, signal) => {
      void drain(closed, spec.drainMs, child.stdout, child.stderr).then(() => finish(code, signal, null));
    });
  });
  const channel: Channel | null = spec.channel
    ? {
        send: (message, socket) => {
          if (child.connected) child.send(message, socket, (err) => err && socket?.destroy());
          else socket?.destroy();
        },
        onMessage: (listener) => child.on('message', listener),
      }
    : null;
  return { pid, stop, done, channel };
}

/** stdin may be this process's own; stdout and stderr are collected, dropped or this process's own. */
type Stdio = ['ignore' | 'inherit' | 'pipe', 'ignore' | 'inherit' | 'pipe', 'ignore' | 'inherit' | 'pipe', ...'ipc'[]];

/** Starts a bounded process and waits for its result. */
export function runBounded(spec: SpawnSpec): Promise<SpawnResult> {
  return startBounded(spec).done;
}

function sinkStdio(sink: Sink | undefined): 'pipe' | 'ignore' | 'inherit' {
  return sink === 'ignore' || sink === 'inherit' ? sink : 'pipe';
}

function attach(stream: NodeJS.ReadableStream | null, sink: Sink | undefined, into: Buffer[]): void {
  if (!stream || sink === 'ignore' || sink === 'inherit') return;
  if (typeof sink === 'function') stream.on('data', (chunk: Buffer) => sink(chunk));
  else stream.on('data', (chunk: Buffer) => into.push(chunk));
}

/** Waits for the pipes to deliver their last bytes, at most `drainMs` when given. */
async function drain(
  closed: Promise<void>,
  drainMs: number | undefined,
  ...streams: ({ destroy(): void } | null)[]
): Promise<void> {
  if (drainMs === undefined) {
    await closed;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs)))]);
  clearTimeout(timer);
  for (const s of streams) s?.destroy();
}

export function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Starts a process that outlives this one (its own session, no pipes, not waited for): the
 * merge queue's background processor after `land --no-wait`. It ends by itself once its work
 * is done; nothing else in warren starts a process it does not bound.
 */
export function spawnDetached(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): number | undefined {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('spawnDetached: empty argv');
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: 'ignore',
    detached: true,
  });
  child.on('error', () => undefined); // nothing to report to: the queue is still there for the next command
  child.unref();
  return child.pid;
}

/**
 * Starts a program the user named to open something (an editor on a folder): its own session,
 * no pipes, not waited for. Settles once the process has started, or with the spawn error (a
 * program not found), so that the caller can say it — unlike spawnDetached, whose caller has
 * no one to tell.
 */
export function launchDetached(argv: readonly string[], options: { cwd?: string } = {}): Promise<number> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.reject(new Error('launchDetached: empty argv'));
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: process.env, stdio: 'ignore', detached: true });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      resolve(child.pid ?? 0);
    });
  });
}

/**
 * Starts a task's service (a database server, a dev server): it outlives this command, in a
 * session of its own, its output appended to `logPath`, its stdin closed. The caller wraps
 * `argv` in the run's containment and stops it by its pid (src/run/daemon.ts); the only
 * other process warren does not bound.
 */
export function spawnService(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; logPath: string },
): number {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('spawnService: empty argv');
  const log = fs.openSync(options.logPath, 'a', 0o600);
  try {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', log, log],
      detached: true,
    });
    child.on('error', () => undefined); // seen by the caller as a pid that is not alive
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${file}`);
    return child.pid;
  } finally {
    fs.closeSync(log);
  }
}
