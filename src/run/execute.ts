import fs from 'node:fs';
import { assertArgvCarriable, commandCandidates, commandNotFound, findCommand } from './command-lookup.js';
import { isWarrenError, WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { isInside } from '../util/paths.js';
import { boundaryOf } from './boundary.js';
import type { Containment } from '../system/containment.js';
import type { RunKind } from './records.js';
import { beginRun, endRun, explain, runNotStarted } from './run-record.js';
import { mountFailureReason } from '../system/run-mounts.js';
import { sandboxArgv, sandboxFailureReason } from './sandbox.js';
import { bridgeScript, type EgressProxy } from './egress.js';
import { startEgress } from './egress-run.js';
import { supervise, type SuperviseResult } from './supervisor.js';
import { sandboxMapsRoot, Staging } from '../system/sandbox-uid.js';
import type { RunMount } from '../system/mounts.js';
import type { RunOutput } from '../workspace/reporter.js';
import { assertRunnable } from './task-env.js';
import { containerExec, containerFor } from './container/container-run.js';
import { containerCommitsFailed, takeContainerCommits } from './container/container-git.js';
import { clusterOf, followState, k8sAfter, k8sExecArgv, k8sFor, podEnv, podMarker, podPath } from './k8s/k8s-run.js';
import type { TaskClaim } from './k8s/task-claim.js';
import { stateFolders } from './k8s/state-folders.js';
import { taskHost, type Host } from './ssh/hosts.js';
import { hostRunArgv, hostRunFrame, hostRunInput, lostConnection } from './ssh/remote-run.js';
import { markPending, pendingOnHost, syncBack } from './ssh/remote-task.js';
import { agentFromHost } from './ssh/remote-agent.js';
import { assertSettingsTrusted } from '../trust/trust.js';

export interface RunRequest {
  kind: RunKind;
  /** Short name for events and the log file (`exec`, the agent's name, a setup id). */
  label: string;
  argv: readonly string[];
  timeoutMs?: number;
  /** `inherit`: this process's own input (on a host over SSH: read here and streamed there, src/run/ssh/input.ts). */
  stdin: 'inherit' | 'ignore' | { text: string } | { stream: NodeJS.ReadableStream };
  /** Where the command's output is shown live, besides its log. */
  output: RunOutput;
  /** Append to this log instead of a new one (setup and verify keep one log per invocation). */
  logPath?: string;
  /** Skip the task-state guard (teardown during `rm`, which already holds the task). */
  skipStateCheck?: boolean;
  /** Variables for this command only, over the task's own (an agent's state folder). */
  env?: Record<string, string>;
  /** More paths the command may write in a sandbox (an agent's state folder). */
  writable?: readonly string[];
  /** More paths the command may read in a sandbox (the main checkout's hooks folder, for a git hook). */
  readable?: readonly string[];
  /** The user's variables it is also given in a sandbox (an agent's endpoint and key): src/run/boundary.ts. */
  passEnv?: readonly string[];
  /** More `127.0.0.1:PORT` it may reach from a sandbox (a seed's template database). */
  reach?: readonly string[];
  /**
   * An agent's final-result marker (supervisor.ts `final`): `agent` names it in what is said;
   * `home` is its state folder (a runner on another machine places both on its own paths).
   */
  final?: { file: string; graceMs: number; agent: string; home?: string; promptFile?: string };
}

export interface RunOutcome {
  runId: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  canceledBy: SuperviseResult['canceledBy'];
  durationMs: number;
  log: string;
  sandbox: string;
  reason: string | null;
  /** An agent that had given its final result was ended, with what it left running, after the grace. */
  endedAfterFinal: boolean;
  /** What the agent was said to have left running after its final result (`PID NAME`); empty when nothing was. */
  leftovers: string[];
  /**
   * The reason is the line the run's mount step wrote before it stopped (a layer that could not
   * be mounted, a command not found where the layers are mounted; the command was not started):
   * it is in the log, and whoever showed the run's output live has shown it already.
   */
  reasonInOutput: boolean;
}

export const DEFAULT_GRACE = '2s';

/**
 * Runs one command of a task: gather (state, policy, sandbox, the command on PATH) and refuse
 * before anything is spawned → run it supervised → record the run and an event.
 */
export async function runInTask(ctx: ProjectContext, task: Task, request: RunRequest): Promise<RunOutcome> {
  if (!request.skipStateCheck) assertRunnable(task, request.kind);
  const host = taskHost(ctx, task);
  if (host) return runOnHost(ctx, task, request, host);
  const { profile, env, containment, mounts } = await boundaryOf(ctx, task, {
    ...(request.env ? { env: request.env } : {}),
    ...(request.passEnv ? { passEnv: request.passEnv } : {}),
    ...(request.writable ? { writable: request.writable } : {}),
    ...(request.readable ? { readable: request.readable } : {}),
    ...(request.reach ? { reach: request.reach } : {}),
  });
  const graceMs = parseDuration(ctx.config.kill_grace ?? DEFAULT_GRACE, 'kill_grace');
  assertArgvCarriable(request.argv);
  const command = request.argv[0] ?? '';
  // A task in a cluster: its command is looked up in its pod (127 there when it is missing).
  const cluster = clusterOf(ctx, task);
  const found = cluster === null ? findCommand(command, env.PATH ?? '', task.path) : null;
  // Not on the host: it may be in a layer mounted only in the run's namespace (an empty folder
  // here), where the run looks it up once mounted; anywhere else it is not there at all.
  if (
    cluster === null &&
    found === null &&
    !commandCandidates(command, env.PATH ?? '', task.path).some((c) => mounts.some((m) => isInside(m.target, c)))
  )
    throw commandNotFound(command);
  assertMountable(task, mounts, containment);
  // A container task: its container, running with what this run needs bound, and where its branch is
  // (what an earlier run committed inside and a crash kept from being taken, first), before the run is recorded.
  const { container, branch } =
    profile.kind === 'container' && cluster === null
      ? await containerFor(ctx, task, profile, mounts, found)
      : { container: null, branch: null };
  // A task in a cluster: its claim Ready, its branch and the run's own folders (an agent's state) in
  // the sandbox, before the run is recorded.
  const folders = cluster === null ? [] : stateFolders(task, request.writable ?? []);
  const claim: TaskClaim | null = cluster === null ? null : await k8sFor(ctx, task, cluster, mounts, folders);
  const started = beginRun(
    ctx,
    task,
    request,
    claim !== null
      ? `k8s:${claim.cluster.name}`
      : profile.kind === 'none'
        ? 'none'
        : `${profile.kind}${profile.network ? '+network' : profile.allow ? '+allow' : ''}`,
    containment.kind,
  );
  const { runId, log } = started;
  if (containment.kind === 'process-group') {
    const message = `run ${runId} is held by its process group only (${containment.reason}): a process that calls setsid can outlive it`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'run.containment_fallback',
      level: 'warn',
      message,
      data: { runId, reason: containment.reason },
    });
    ctx.reporter.line(`warren: ${message}`);
  }
  let egress: EgressProxy | null = null;
  let following: { stop(): Promise<void> } | null = null;
  let result: SuperviseResult;
  try {
    // Inside the try: a proxy that cannot start closes the run with why, like a command that cannot.
    egress =
      profile.allow && claim === null ? await startEgress(ctx, task, runId, profile.allow, container?.sockets) : null;
    const staging = profile.kind === 'bwrap' && sandboxMapsRoot() ? new Staging() : null;
    const bridge = egress && {
      egress: { socket: egress.socket, insideSocket: egress.insideSocket, forwards: egress.forwards },
      ingressPort: null,
      node: process.execPath,
      bridge: bridgeScript(),
    };
    const inContainer = container
      ? containerExec(container, task.path, runId, request.argv, bridge, branch, env)
      : null;
    const argv = claim
      ? k8sExecArgv(claim, podPath(task, task.path), runId, request.argv, podEnv(ctx, task, request, folders))
      : (inContainer?.argv ?? sandboxArgv(profile, task.path, request.argv, bridge, staging));
    // A cluster's run: its folders (an agent's transcript) brought back while it runs, too.
    following = claim ? followState(claim, folders) : null;
    result = await supervise({
      argv,
      cwd: task.path,
      // The exec client is warren's own, on the host: the pod's command gets podEnv only (in its argv).
      env: claim ? process.env : (inContainer?.env ?? env),
      stdin: request.stdin,
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      graceMs,
      logPath: log,
      output: request.output,
      containment,
      sandboxed: profile.kind !== 'none' || claim !== null,
      // As root in a sandbox, the layers are mounted from clones too, once the workspace's is named (sandboxArgv).
      mounts: staging ? mounts.map((m) => staging.mount(m)) : mounts,
      command,
      ...(staging ? { staged: staging.sources } : {}),
      // In a cluster the final-result marker is a file of the pod's, asked for there (its processes are not listed).
      ...(request.final ? { final: finalWatch(ctx, task, runId, request.argv, request.final, claim) } : {}),
    });
  } catch (err) {
    runNotStarted(ctx, task, request, started, err);
    throw err;
  } finally {
    await following?.stop();
    await egress?.close();
    // What the agent committed inside its container, onto its branch (or kept aside, said).
    if (container)
      await takeContainerCommits(ctx, task).catch((err: unknown) => containerCommitsFailed(ctx, task, err));
    // The run's processes are gone (and its proxy's connections): what it left elsewhere goes too.
    for (const step of ctx.lifecycle.afterRun ?? []) await step.run(ctx, task);
  }
  const logTail = result.exitCode === 0 ? '' : tail(log);
  // The mount step, or (as root, in a sandbox) the step that makes its clones, says why the command did not start.
  const notStarted =
    mounts.length > 0 || (profile.kind === 'bwrap' && sandboxMapsRoot())
      ? mountFailureReason(result.exitCode, logTail)
      : null;
  const failure = notStarted ?? (profile.kind === 'none' ? null : sandboxFailureReason(profile, logTail));
  const reason = explain(result, request.timeoutMs, failure);
  endRun(ctx, task, request, started, result, reason);
  // What the run left in the sandbox comes back (checked) before anything here reads the workspace;
  // a refusal is said once the run is recorded.
  if (claim) await k8sAfter(ctx, task, claim, folders);
  return outcomeOf(runId, log, result, {
    sandbox: claim ? `k8s:${claim.cluster.name}` : profile.kind,
    reason,
    reasonInOutput: reason !== null && reason === notStarted,
    endedAfterFinal: result.endedAfterFinal,
    leftovers: result.leftovers,
  });
}

/** A run's outcome: what its supervised process did, and what its runner says of it. */
function outcomeOf(
  runId: string,
  log: string,
  result: Pick<RunOutcome, 'exitCode' | 'signal' | 'timedOut' | 'canceledBy' | 'durationMs'>,
  said: Pick<RunOutcome, 'sandbox' | 'reason' | 'reasonInOutput' | 'endedAfterFinal' | 'leftovers'>,
): RunOutcome {
  const { exitCode, signal, timedOut, canceledBy, durationMs } = result;
  return { runId, exitCode, signal, timedOut, canceledBy, durationMs, log, ...said };
}

/**
 * A run of a task that lives on another machine (`new --runner ssh:NAME`): the same run here —
 * recorded, logged, shown live, bounded by its timeout and cancelled as any — of the ssh client
 * that asks the host's warren to run the command through the host's own runner (its boundary,
 * sandbox, setup and layers: src/run/ssh/). Before: what an earlier run left there is fetched
 * back, and the task's record says commits may wait there. After: they are fetched back and
 * checked before the task's branch moves (src/run/ssh/remote-task.ts).
 */
async function runOnHost(ctx: ProjectContext, task: Task, request: RunRequest, host: Host): Promise<RunOutcome> {
  assertSettingsTrusted(ctx, `Nothing was run; task ${task.id} is as it was.`);
  assertArgvCarriable(request.argv);
  // What an earlier run left there (a lost connection) comes back first.
  // Refused commits there do not stop the run: it may be what puts them right (checked again after it).
  if (pendingOnHost(ctx, task))
    await syncBack(ctx, task).catch((err: unknown) => {
      if (!isWarrenError(err, 'REMOTE_COMMITS_REFUSED')) throw err;
      ctx.reporter.line(`warren: warn: ${err.message}; the command runs, and what it leaves is checked again`);
    });
  const record = markPending(ctx, task);
  const graceMs = parseDuration(ctx.config.kill_grace ?? DEFAULT_GRACE, 'kill_grace');
  const argv = await hostRunArgv(ctx.store.home, host, task);
  const sandbox = `ssh:${host.name}`;
  const started = beginRun(ctx, task, request, sandbox, 'process-group', ` on host ${host.name}`);
  const { runId, log } = started;
  // The run's own input, streamed there as it comes (never read whole first), until the run ends.
  const input = hostRunInput(request);
  let result: SuperviseResult;
  try {
    result = await supervise({
      argv,
      cwd: task.path,
      env: process.env,
      // Held open for the run: its end is, on the host, the end of the run (a lost connection too).
      stdin: { held: hostRunFrame(task, record, request, runId), ...(input ? { then: input.frames } : {}) },
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      graceMs,
      logPath: log,
      output: request.output,
      containment: { kind: 'process-group', reason: `the task runs on host ${host.name}, where its tree is held` },
      sandboxed: false,
      command: 'ssh',
    });
  } catch (err) {
    runNotStarted(ctx, task, request, started, err);
    throw err;
  } finally {
    input?.stop();
  }
  const lost = lostConnection(result, host);
  const reason = lost ?? explain(result, request.timeoutMs, null);
  endRun(ctx, task, request, started, result, reason, ` on host ${host.name}`);
  if (lost) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'remote.lost',
      level: 'warn',
      message: `${request.kind} ${request.label}: ${lost}`,
      data: { host: host.name, runId },
    });
  }
  // An agent's: how it ended there, and its transcript into its state folder here.
  const agent = lost ? null : await agentFromHost(ctx, task, host, record, request, runId);
  // What the run committed there comes back now, checked; a lost connection leaves it for the next command.
  if (!lost) await syncBack(ctx, task);
  return outcomeOf(runId, log, result, {
    sandbox,
    reason,
    reasonInOutput: false,
    endedAfterFinal: agent?.endedAfterFinal ?? false,
    leftovers: agent?.leftovers ?? [],
  });
}

/**
 * What is said once an agent's final result is in and processes it left (never its own: the
 * supervisor tells them apart, and waits for them to outlive a settle period) keep it running.
 */
function finalWatch(
  ctx: ProjectContext,
  task: Task,
  runId: string,
  argv: readonly string[],
  final: NonNullable<RunRequest['final']>,
  claim: TaskClaim | null,
): NonNullable<Parameters<typeof supervise>[0]['final']> {
  const unasked = (error: string): void => {
    const message = `${final.agent}'s final result could not be looked for in task ${task.id}'s pod (${error}); the run goes on until it ends or times out, without the leftover grace (agents.${final.agent}.leftover_grace)`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'agent.final_unasked',
      level: 'warn',
      message,
      data: { runId, agent: final.agent, error },
    });
    ctx.reporter.line(`warren: warn: ${message}`);
  };
  return {
    marker: claim ? podMarker(ctx, task, claim, final.file, unasked) : { kind: 'file', file: final.file },
    graceMs: final.graceMs,
    argv,
    onLeftover(processes, remainingMs) {
      const listed =
        processes.slice(0, 5).join(', ') + (processes.length > 5 ? `, and ${processes.length - 5} more` : '');
      const when = remainingMs > 0 ? `in ${Math.ceil(remainingMs / 1000)}s` : 'now';
      const message = `${final.agent} gave its final result, but processes it left keep it running (${listed}); warren ends them ${when} (agents.${final.agent}.leftover_grace). A process meant to outlive the run belongs in a task service.`;
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'agent.leftover',
        level: 'warn',
        message,
        data: { runId, agent: final.agent, processes: processes.slice(0, 100), graceMs: final.graceMs },
      });
      ctx.reporter.line(`warren: warn: ${message}`);
    },
  };
}

/**
 * The CLI's exit status for a run: the command's, 124 on timeout, 128+N when warren was stopped
 * by signal N, 141 (128+SIGPIPE) when its output closed.
 */
export function exitStatusOf(outcome: RunOutcome): number {
  if (outcome.timedOut) return 124;
  if (outcome.canceledBy === 'SIGINT') return 130;
  if (outcome.canceledBy === 'SIGTERM') return 143;
  if (outcome.canceledBy === 'SIGHUP') return 129;
  if (outcome.canceledBy === 'SIGPIPE') return 141; // as a shell reports a command whose reader went away
  return outcome.exitCode ?? 1;
}

/** The last 8 KiB of a run's log (where a failed mount step or sandbox said why); '' when it cannot be read. */
function tail(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, 8192);
      const buf = Buffer.alloc(length);
      fs.readSync(fd, buf, 0, length, size - length);
      return buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** Layers that exist only in a namespace need one: refused, before anything runs, where the machine makes none. */
export function assertMountable(task: Task, mounts: readonly RunMount[], containment: Containment): void {
  if (mounts.length === 0 || containment.kind !== 'process-group') return;
  throw new WarrenError(
    'PROVISION_FAILED',
    `${mounts.map((m) => m.target).join(', ')} exist(s) only inside the namespace of each command warren runs, and commands cannot run in a namespace here (${containment.reason}); nothing was run.`,
    { hint: `Run \`warren provision ${task.id} --refresh\` to provision them again in a way this machine supports.` },
  );
}
