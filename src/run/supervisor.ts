import fs from 'node:fs';
import os from 'node:os';
import { startBounded, tryKill } from '../system/spawn.js';
import { containedArgv, type Containment, type ContainmentKind } from '../system/containment.js';
import { childrenOf, isAlive, pidNamespaceOf, pidsInNamespace } from '../system/proc.js';
import { watchFinal, type FinalSpec, type FinalWatch } from './final-watch.js';
import type { RunMount } from '../system/run-mounts.js';
import type { StagedSource } from '../system/sandbox-uid.js';
import type { RunOutput } from '../workspace/reporter.js';

/**
 * A task's processes, started through the spawn primitive and held by the run's containment.
 * Every run is bounded: on timeout, or on SIGINT/SIGTERM/SIGHUP to warren, the whole tree gets
 * SIGTERM, then SIGKILL after the grace period; warren being SIGKILLed ends it through the
 * death signal. When the place its output is shown goes away (`warren exec … | head -1`), the
 * run ends the same way, as a shell pipeline's SIGPIPE would end the command: the output keeps
 * going to the log until the tree is gone, and the result says which stream closed.
 */
export interface SuperviseSpec {
  /** The command (already wrapped by the sandbox, if any). */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * `inherit` passes warren's stdin; a string is written to the command's stdin and closed;
   * `held` stays open, `then` piped after it; `stream` is piped in (spawn.ts).
   */
  stdin:
    | 'inherit'
    | 'ignore'
    | { text: string }
    | { held: string; then?: NodeJS.ReadableStream }
    | { stream: NodeJS.ReadableStream };
  timeoutMs?: number;
  graceMs: number;
  /** Appended to (opened with O_APPEND); output goes here as well as to `output`. */
  logPath: string;
  output: RunOutput;
  containment: Containment;
  /** True when `argv` is a bwrap command line that makes its own PID namespace. */
  sandboxed: boolean;
  /** Made in the run's own mount namespace before the command starts (needs a namespace containment). */
  mounts?: readonly RunMount[];
  /** The command as given (argv[0] before any sandbox wrapping): looked up after the mounts, where they are seen. */
  command?: string;
  /** As root in a sandbox: the clones its bound paths are bound from, made before it starts (sandbox-uid.ts). */
  staged?: readonly StagedSource[];
  /**
   * An agent's final-result marker: once it exists (`marker`) while the command still runs, only what
   * it left behind keeps it alive, and the run is ended after `graceMs`. `onLeftover` is told
   * (once, with those processes and the time left) when processes other than the agent's own
   * chain (`argv`, the agent's command line: leftovers.ts) are still alive a settle period later;
   * an agent that is merely finishing — Claude Code's Stop hook runs before it exits — is not.
   */
  final?: FinalSpec;
}

export interface SuperviseResult {
  exitCode: number | null;
  /** The signal that ended the command, when one did. */
  signal: string | null;
  timedOut: boolean;
  /** Set when warren itself was asked to stop (Ctrl-C, SIGTERM, SIGHUP), or SIGPIPE when its output closed. */
  canceledBy: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGPIPE' | null;
  /** With SIGPIPE: the stream that could not be written any more, and why (EPIPE: its reader went away). */
  outputClosed: { stream: 'stdout' | 'stderr'; code: string } | null;
  /** True when the grace ran out and SIGKILL was needed. */
  forced: boolean;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  containment: ContainmentKind;
  /** Processes of the run still alive once it ended (always 0 with a PID namespace). */
  survivors: number[];
  /** The command had given its final result and was ended after the grace (`final`), its leftovers with it. */
  endedAfterFinal: boolean;
  /** The processes `final.onLeftover` was told of (`PID NAME`); empty when none were. */
  leftovers: string[];
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function supervise(spec: SuperviseSpec): Promise<SuperviseResult> {
  const containment = spec.containment.kind;
  const argv = containedArgv(
    spec.containment,
    spec.argv,
    spec.sandboxed,
    spec.mounts ?? [],
    spec.command,
    spec.staged ?? [],
  );
  const logFd = fs.openSync(spec.logPath, 'a', 0o600);
  let canceledBy: SuperviseResult['canceledBy'] = null;
  const echo = { ...spec.output };
  let outputClosed: SuperviseResult['outputClosed'] = null;
  let stopRun: () => void = () => undefined;
  // The reader of warren's output went away: stop echoing there (the log keeps everything) and end the run.
  const closed = (stream: 'stdout' | 'stderr', err: unknown): void => {
    for (const name of ['stdout', 'stderr'] as const) if (echo[name] === spec.output[stream]) echo[name] = null;
    if (outputClosed !== null) return;
    outputClosed = { stream, code: (err as NodeJS.ErrnoException | null)?.code ?? 'closed' };
    canceledBy ??= 'SIGPIPE';
    stopRun();
  };
  const sink = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    fs.writeSync(logFd, chunk);
    echo[stream]?.write(chunk, (err) => err && closed(stream, err));
  };
  // A failed write also emits 'error' on the stream: heard here for the run's length, never left unhandled.
  const onError = { stdout: (err: Error) => closed('stdout', err), stderr: (err: Error) => closed('stderr', err) };
  for (const stream of ['stdout', 'stderr'] as const) spec.output[stream]?.on('error', onError[stream]);
  const handlers: { sig: (typeof FORWARDED)[number]; handler: () => void }[] = [];

  let rootPid: number | undefined;
  let nsInode: number | null = null;
  let finalWatch: FinalWatch | undefined;
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

  try {
    const proc = startBounded({
      argv,
      cwd: spec.cwd,
      env: spec.env,
      stdin: typeof spec.stdin === 'object' && 'text' in spec.stdin ? spec.stdin.text : spec.stdin,
      stdout: sink('stdout'),
      stderr: sink('stderr'),
      ...(spec.timeoutMs === undefined ? {} : { timeoutMs: spec.timeoutMs }),
      graceMs: spec.graceMs,
      // Without a namespace, the process group is the only handle on the tree.
      group: containment === 'process-group',
      signalTree,
      // An escaped holder of the pipes must not stall the end of the run.
      drainMs: 250,
      onSpawn: (pid) => (rootPid = pid),
    });
    stopRun = () => proc.stop();
    if (spec.final)
      finalWatch = watchFinal(
        spec.final,
        () => rootPid,
        () => proc.stop(),
      );
    for (const sig of FORWARDED) {
      const handler = (): void => {
        canceledBy ??= sig;
        proc.stop(); // a second signal does not wait out the grace
      };
      process.on(sig, handler);
      handlers.push({ sig, handler });
    }

    const run = await proc.done;
    if (run.spawnError) throw run.spawnError;
    // The wrapper has exited: with a namespace, the kernel has ended every process in it.
    // Without one, sweep the process group once more.
    if (containment === 'process-group' && rootPid !== undefined) tryKill(-rootPid, 'SIGKILL');
    const ended = Date.now();
    return {
      ...decodeStatus(run.exitCode, run.signal),
      timedOut: run.timedOut,
      canceledBy,
      outputClosed,
      forced: run.forced,
      startedAt: new Date(run.startedAt).toISOString(),
      endedAt: new Date(ended).toISOString(),
      durationMs: ended - run.startedAt,
      containment,
      survivors: findSurvivors(containment, nsInode, rootPid),
      endedAfterFinal: finalWatch?.endedAfterFinal ?? false,
      leftovers: finalWatch?.leftovers ?? [],
    };
  } finally {
    finalWatch?.close();
    for (const { sig, handler } of handlers) process.off(sig, handler);
    for (const stream of ['stdout', 'stderr'] as const) spec.output[stream]?.off('error', onError[stream]);
    fs.closeSync(logFd);
  }
}

/**
 * The namespace's init reports a command killed by signal N as exit 128+N (the shell
 * convention), so both are decoded here.
 */
function decodeStatus(
  code: number | null,
  signal: NodeJS.Signals | null,
): { exitCode: number | null; signal: string | null } {
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
