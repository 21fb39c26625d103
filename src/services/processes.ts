import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { DEFAULT_GRACE } from '../run/execute.js';
import { isPortFree } from '../run/ports.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { daemonState } from '../run/daemon.js';
import { serviceCluster, startServiceInTask, stopServiceInTask } from '../run/service-runner.js';
import { listeningPort, processOf } from './kinds.js';
import { logSize, logTail, waitReady, type ReadyCheck } from './ready.js';
import { DEFAULT_READY_TIMEOUT, serviceConfig, serviceDir, serviceLog, servicePort } from './task-services.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';

/**
 * The process services (redis, `run:`): their fact at `new`, started as daemons and waited on
 * until ready, stopped bounded, and those of tasks that are gone collected.
 */

export function redisBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const file = path.join(dir || '.', 'redis-server');
    if (dir && fs.existsSync(file)) return file;
  }
  throw new WarrenError(
    'SERVICE_UNAVAILABLE',
    'redis-server is not installed here (not found on PATH); nothing was started.',
    {
      hint: 'Install it (Debian: `apt-get install redis-server`).',
    },
  );
}

/** A process service's port, taken once at `new` from the top of the task's block. */
export function processPort(ctx: ProjectContext, task: Task, name: string): number {
  const port = servicePort(ctx, task, name);
  if (port === null) throw new Error(`service ${name} of task ${task.id} has no port`);
  return port;
}

/**
 * Starts a redis or `run:` service of the task and waits until it is ready; one that does not
 * become ready is stopped and refused with the end of its log. Already running: nothing to do.
 */
export async function startProcess(
  ctx: ProjectContext,
  task: Task,
  name: string,
  env: Record<string, string>,
): Promise<{ started: boolean; readyMs: number | null }> {
  const config = serviceConfig(ctx, task, name);
  const fact = task.data.services?.[name];
  // What starts is the fact's (made at `new`), with warren.yaml's command and readiness.
  const proc = fact && fact.kind === config.kind ? processOf(fact) : null;
  const port = fact ? listeningPort(fact) : null;
  if (!fact || !proc || port === null) throw new Error(`${name} is not a process service`);
  const dir = serviceDir(ctx, task.id, name);
  if (daemonState(dir).state === 'running') return { started: false, readyMs: null };
  const log = serviceLog(ctx, task.id, name);
  // In a cluster it runs in the task's pod, whose loopback is its own: this machine's ports say nothing of it.
  const inPod = serviceCluster(ctx, task) !== null;
  // Taken: by a service of a task that is gone, perhaps (stopped now), else by someone else.
  if (
    !inPod &&
    !(await isPortFree(port)) &&
    ((await stopOrphanProcesses(ctx)).stopped.length === 0 || !(await isPortFree(port)))
  ) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id} cannot start: its port ${port} is taken by another process; nothing was started.`,
      {
        hint: `Stop what listens on ${port} (\`ss -ltnp 'sport = ${port}'\`), then \`warren service start ${task.id} ${name}\`.`,
      },
    );
  }
  // redis's working folder and its configuration (its password): apart from the daemon's record, which a sandbox never sees.
  const data = path.join(dir, 'data');
  if (proc.ownsData) fs.mkdirSync(data, { recursive: true, mode: 0o700 });
  const argv = proc.argv(config, fact, data, inPod);
  const check: ReadyCheck | null = proc.ready(config);
  const timeout = proc.readyTimeout(config) ?? DEFAULT_READY_TIMEOUT;
  const from = logSize(log);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.appendFileSync(log, `── warren: starting ${name} (${new Date().toISOString()})\n`, { mode: 0o600 });
  const { record, ingress, probe } = await startServiceInTask(ctx, task, {
    dir,
    name,
    argv,
    log,
    env: { ...env, WARREN_PORT: String(port), PORT: String(port), WARREN_SERVICE: name },
    port: port,
    ...(proc.ownsData ? { writable: [data] } : {}),
  });
  if (!check) return { started: true, readyMs: null };
  const ready = await waitReady({
    // A sandboxed service is reached from the host once its host half listens: a line of its log is not enough.
    check: ingress && 'log' in check ? { ...check, thenPort: true } : check,
    port,
    log,
    logFrom: from,
    ...(probe ? { probe } : {}),
    timeoutMs: parseDuration(timeout, `services.${name}.ready.timeout`),
    alive: () => daemonState(dir).state === 'running',
  });
  if (ready.ready) return { started: true, readyMs: ready.ms };
  const exited = daemonState(dir);
  await stopServiceInTask(ctx, dir, graceOf(ctx));
  const why =
    ready.why === 'timeout'
      ? `it was not ready within ${timeout} (${describeCheck(check)})`
      : `it exited${exited.state === 'exited' && exited.exitCode !== null ? ` with status ${exited.exitCode}` : ''} before it was ready`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.failed',
    level: 'error',
    message: `service ${name} did not start: ${why}; it was stopped (log ${log})`,
    data: { name, reason: why, log },
  });
  throw new WarrenError(
    'SERVICE_FAILED',
    `service ${name} of task ${task.id} did not start: ${why}; it was stopped (pid ${record.pid}). Its log (${log}) ends:\n${logTail(log, from)}`,
    { hint: `Fix the cause, then \`warren service start ${task.id} ${name}\`.` },
  );
}

function describeCheck(check: ReadyCheck): string {
  return 'http' in check
    ? `GET ${check.http} answering`
    : 'port' in check
      ? 'its port accepting connections'
      : `its log saying ${JSON.stringify(check.log)}`;
}

export function graceOf(ctx: ProjectContext): number {
  return parseDuration(ctx.config.kill_grace ?? DEFAULT_GRACE, 'kill_grace');
}

/** Stops one process service (bounded: SIGTERM, then SIGKILL after the grace). */
export async function stopProcess(
  ctx: ProjectContext,
  taskId: string,
  name: string,
): Promise<{ wasRunning: boolean; forced: boolean; survivors: number[]; leftInPod?: string }> {
  const dir = serviceDir(ctx, taskId, name);
  const running = daemonState(dir).state === 'running';
  const stopped = await stopServiceInTask(ctx, dir, graceOf(ctx));
  return {
    wasRunning: running,
    forced: stopped.forced,
    survivors: stopped.survivors,
    ...(stopped.leftInPod ? { leftInPod: stopped.leftInPod } : {}),
  };
}

/** Every process service folder of a task (whatever warren.yaml says now): what `rm` and `gc` stop. */
export function processDirs(ctx: ProjectContext, taskId: string): string[] {
  try {
    return fs
      .readdirSync(serviceDir(ctx, taskId), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * The process services of tasks that no longer exist (a `new` undone by a command that could
 * not stop them, a daemon a killed warren left): stopped, and their folders removed once
 * nothing of them runs. A merge queue gate's are its own while its integration workspace is
 * there. What `gc` collects, and what a service whose port is taken looks for first.
 */
export async function stopOrphanProcesses(
  ctx: ProjectContext,
): Promise<{ stopped: { id: string; name: string; dir: string }[]; kept: { dir: string; reason: string }[] }> {
  const out = {
    stopped: [] as { id: string; name: string; dir: string }[],
    kept: [] as { dir: string; reason: string }[],
  };
  const list = (dir: string): string[] => {
    try {
      return fs.readdirSync(dir);
    } catch {
      return [];
    }
  };
  const gates = list(ctx.root)
    .filter((n) => n.startsWith('.queue-'))
    .map((n) => n.slice('.queue-'.length));
  const live = new Set([...ctx.store.listTasks(ctx.key).map((t) => t.id), ...gates]);
  const root = path.join(ctx.store.home, 'services', ctx.key);
  for (const id of list(root).filter((n) => !n.startsWith('.') && !live.has(n))) {
    let left = false;
    for (const name of list(path.join(root, id))) {
      const dir = path.join(root, id, name);
      if (daemonState(dir).state !== 'running') continue;
      const stopped = await stopServiceInTask(ctx, dir, graceOf(ctx));
      if (stopped.survivors.length > 0 || stopped.leftInPod) {
        left = true;
        const reason = [
          ...(stopped.survivors.length > 0 ? [`pid(s) ${stopped.survivors.join(', ')} would not stop`] : []),
          ...(stopped.leftInPod ? [stopped.leftInPod] : []),
        ].join('; ');
        out.kept.push({ dir, reason });
      } else out.stopped.push({ id, name, dir });
    }
    if (!left) removeTreeOrThrow(path.join(root, id), { inside: root });
  }
  return out;
}
