import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RedisServiceConfig, RunServiceConfig, ServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { commandArgv } from '../run/commands.js';
import { detectContainment } from '../run/containment.js';
import { DEFAULT_GRACE } from '../run/execute.js';
import { DEFAULT_PORT_COUNT, isPortFree, portsOf } from '../run/ports.js';
import { logDir } from '../run/records.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { daemonState, startDaemon, stopDaemon, type DaemonState } from './daemon.js';
import type { ServiceFact } from './facts.js';
import { clusterDir, parseServerUrl, userServerUrl } from './pg-server.js';
import { pgUrl } from './pg-sql.js';
import { logSize, logTail, waitReady, type ReadyCheck } from './ready.js';

/**
 * A task's services as warren.yaml declares them and its facts record them: which port each
 * takes, what variables the task's commands see, and starting, stopping and reading the state
 * of the processes (redis-server, `run:` commands). A service's process is a daemon
 * (daemon.ts) in `$WARREN_HOME/services/<project>/<task>/<name>/`; its log is beside the
 * task's run logs, `service-<name>.log`.
 */

export const DEFAULT_READY_TIMEOUT = '60s';

export function servicesOf(ctx: ProjectContext): [string, ServiceConfig][] {
  return Object.entries(ctx.config.services ?? {});
}

export function serviceConfig(ctx: ProjectContext, task: Task, name: string): ServiceConfig {
  const config = ctx.config.services?.[name];
  if (!config) {
    const names = Object.keys(ctx.config.services ?? {});
    throw new WarrenError(
      'SERVICE_UNKNOWN',
      `task ${task.id} has no service ${JSON.stringify(name)}; nothing was changed.`,
      {
        hint:
          names.length > 0
            ? `Its services: ${names.join(', ')}.`
            : 'warren.yaml defines no services: add them under `services:`.',
      },
    );
  }
  return config;
}

/** The services that listen on a port, in order: each takes one from the top of the task's block, down. */
function portUsers(ctx: ProjectContext): string[] {
  return servicesOf(ctx)
    .filter(([, s]) => s.kind !== 'postgres')
    .map(([name]) => name);
}

/**
 * Refuses, before anything is made, services that need more ports than a task's block holds.
 * The top of the block goes to services, so WARREN_PORT (the first) stays the task's own.
 */
export function checkServicePorts(ctx: ProjectContext): void {
  const count = ctx.config.ports?.count ?? DEFAULT_PORT_COUNT;
  const users = portUsers(ctx);
  if (users.length >= count) {
    const name = users[count - 1] ?? users[0] ?? '';
    throw new WarrenError(
      'CONFIG_INVALID',
      `warren.yaml is invalid: services.${name}: the task's port block has ${count} port(s) and ${users.length} service(s) need one each, besides WARREN_PORT; nothing was created.`,
      { hint: `Raise ports.count in warren.yaml to at least ${users.length + 1}.` },
    );
  }
}

export function servicePort(ctx: ProjectContext, task: Task, name: string): number | null {
  const i = portUsers(ctx).indexOf(name);
  const block = portsOf(ctx.store, ctx.key, task.id);
  if (i < 0 || !block) return null;
  return block.first + block.count - 1 - i;
}

export function serviceDir(ctx: ProjectContext, taskId: string, name?: string): string {
  const dir = path.join(ctx.store.home, 'services', ctx.key, taskId);
  return name === undefined ? dir : path.join(dir, name);
}

export function serviceLog(ctx: ProjectContext, taskId: string, name: string): string {
  return path.join(logDir(ctx.store, ctx.key, taskId), `service-${name}.log`);
}

/** `WARREN_SERVICE_<NAME>_…`: a name's letters as an environment variable's. */
function varPrefix(name: string): string {
  return `WARREN_SERVICE_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Where a task's PostgreSQL database is reached (the server's port read now: warren's may move when restarted). */
export function postgresUrl(ctx: ProjectContext, fact: Extract<ServiceFact, { kind: 'postgres' }>): string | null {
  let host: string;
  let port: number;
  if (fact.server === 'user') {
    const url = userServerUrl(ctx.user);
    if (!url) return null;
    ({ host, port } = parseServerUrl(url));
  } else {
    try {
      port = (
        JSON.parse(fs.readFileSync(path.join(clusterDir(ctx.store.home), 'cluster.json'), 'utf8')) as { port: number }
      ).port;
    } catch {
      return null;
    }
    host = '127.0.0.1';
  }
  return pgUrl({ host, port, user: fact.database, password: fact.password, database: fact.database });
}

export function redisUrl(fact: Extract<ServiceFact, { kind: 'redis' }>): string {
  return `redis://default:${fact.password}@127.0.0.1:${fact.port}/0`;
}

/** The variables every command of the task sees for its services (its `env:` names, and WARREN_SERVICE_<NAME>_URL/_PORT). */
export function serviceEnv(ctx: ProjectContext, task: Task): Record<string, string> {
  const env: Record<string, string> = {};
  const facts = task.data.services ?? {};
  for (const [name, config] of servicesOf(ctx)) {
    const fact = facts[name];
    if (!fact) continue;
    const prefix = varPrefix(name);
    let url: string | null = null;
    if (fact.kind === 'postgres') url = postgresUrl(ctx, fact);
    else if (fact.kind === 'redis') url = redisUrl(fact);
    else url = `http://127.0.0.1:${fact.port}`;
    if (fact.kind !== 'postgres') env[`${prefix}_PORT`] = String(fact.port);
    if (url) {
      env[`${prefix}_URL`] = url;
      if (config.env) env[config.env] = url;
    }
  }
  return env;
}

// ─── Processes: redis-server and `run:` ──────────────────────────────────────────────────────

/** `external`: a database on the user's own server, which warren does not watch. `absent`: the task was made before the service was declared. */
export type ServiceState = 'running' | 'stopped' | 'crashed' | 'absent' | 'external';

export interface ServiceStatus {
  name: string;
  kind: ServiceConfig['kind'];
  state: ServiceState;
  url: string | null;
  port: number | null;
  log: string | null;
  exitCode?: number | null;
  /** postgres: the database, and what it was cloned from. */
  database?: string;
  from?: string;
}

function processState(ctx: ProjectContext, taskId: string, name: string): DaemonState {
  return daemonState(serviceDir(ctx, taskId, name));
}

/** Every service of the task with its state, URL or port, and log: what `show` and the dashboard list. */
export function serviceStatuses(ctx: ProjectContext, task: Task, clusterUp: boolean | null): ServiceStatus[] {
  const facts = task.data.services ?? {};
  return servicesOf(ctx).map(([name, config]): ServiceStatus => {
    const fact = facts[name];
    if (!fact) return { name, kind: config.kind, state: 'absent', url: null, port: null, log: null };
    if (fact.kind === 'postgres') {
      const from =
        fact.from.kind === 'template'
          ? `template ${fact.from.name}${fact.from.seed ? ` (seed ${fact.from.seed.slice(0, 12)})` : ''}`
          : fact.from.kind === 'dump'
            ? `dump ${fact.from.file}`
            : 'empty';
      return {
        name,
        kind: 'postgres',
        state: fact.server === 'user' ? 'external' : clusterUp === false ? 'stopped' : 'running',
        url: postgresUrl(ctx, fact),
        port: null,
        log: fact.server === 'warren' ? path.join(clusterDir(ctx.store.home), 'postgres.log') : null,
        database: fact.database,
        from,
      };
    }
    const st = processState(ctx, task.id, name);
    return {
      name,
      kind: config.kind,
      state: st.state === 'running' ? 'running' : st.state === 'exited' ? 'crashed' : 'stopped',
      url: fact.kind === 'redis' ? redisUrl(fact) : `http://127.0.0.1:${fact.port}`,
      port: fact.port,
      log: serviceLog(ctx, task.id, name),
      ...(st.state === 'exited' ? { exitCode: st.exitCode } : {}),
    };
  });
}

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

/** The fact of a process service, made once at `new`: its port and (redis) password. */
export function processFact(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: RedisServiceConfig | RunServiceConfig,
): ServiceFact {
  const port = servicePort(ctx, task, name);
  if (port === null) throw new Error(`service ${name} of task ${task.id} has no port`);
  return config.kind === 'redis'
    ? { kind: 'redis', port, password: randomBytes(18).toString('hex') }
    : { kind: 'run', port };
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
  if (config.kind === 'postgres' || !fact || fact.kind === 'postgres')
    throw new Error(`${name} is not a process service`);
  const dir = serviceDir(ctx, task.id, name);
  if (daemonState(dir).state === 'running') return { started: false, readyMs: null };
  const log = serviceLog(ctx, task.id, name);
  // Taken: by a service of a task that is gone, perhaps (stopped now), else by someone else.
  if (
    !(await isPortFree(fact.port)) &&
    ((await stopOrphanProcesses(ctx)).stopped.length === 0 || !(await isPortFree(fact.port)))
  ) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id} cannot start: its port ${fact.port} is taken by another process; nothing was started.`,
      {
        hint: `Stop what listens on ${fact.port} (\`ss -ltnp 'sport = ${fact.port}'\`), then \`warren service start ${task.id} ${name}\`.`,
      },
    );
  }
  const argv =
    fact.kind === 'redis'
      ? [
          redisBinary(),
          '--port',
          String(fact.port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
          '--requirepass',
          fact.password,
          '--daemonize',
          'no',
          '--logfile',
          '',
        ]
      : commandArgv((config as RunServiceConfig).run);
  const check: ReadyCheck | null =
    fact.kind === 'redis' ? { log: 'Ready to accept connections' } : ((config as RunServiceConfig).ready ?? null);
  const timeout = (config.kind === 'run' ? config.ready?.timeout : undefined) ?? DEFAULT_READY_TIMEOUT;
  const from = logSize(log);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.appendFileSync(log, `── warren: starting ${name} (${new Date().toISOString()})\n`, { mode: 0o600 });
  const record = startDaemon({
    dir,
    argv,
    cwd: task.path,
    env: { ...process.env, ...env, WARREN_PORT: String(fact.port), PORT: String(fact.port), WARREN_SERVICE: name },
    log,
    containment: await detectContainment(path.join(ctx.store.home, 'cache')),
  });
  if (!check) return { started: true, readyMs: null };
  const ready = await waitReady({
    check,
    port: fact.port,
    log,
    logFrom: from,
    timeoutMs: parseDuration(timeout, `services.${name}.ready.timeout`),
    alive: () => daemonState(dir).state === 'running',
  });
  if (ready.ready) return { started: true, readyMs: ready.ms };
  const exited = daemonState(dir);
  await stopDaemon(dir, graceOf(ctx));
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
): Promise<{ wasRunning: boolean; forced: boolean; survivors: number[] }> {
  const dir = serviceDir(ctx, taskId, name);
  const running = daemonState(dir).state === 'running';
  const stopped = await stopDaemon(dir, graceOf(ctx));
  return { wasRunning: running, forced: stopped.forced, survivors: stopped.survivors };
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

/** `127.0.0.1:PORT` of each service the task has: what its sandbox may reach on the host's loopback. */
export function serviceLoopback(ctx: ProjectContext, task: Task): string[] {
  const out: string[] = [];
  for (const fact of Object.values(task.data.services ?? {})) {
    if (fact.kind !== 'postgres') out.push(`127.0.0.1:${fact.port}`);
    else if (fact.server === 'warren') {
      const url = postgresUrl(ctx, fact);
      if (url) out.push(`127.0.0.1:${new URL(url).port}`);
    }
  }
  return [...new Set(out)];
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
      const stopped = await stopDaemon(dir, graceOf(ctx));
      if (stopped.survivors.length > 0) {
        left = true;
        out.kept.push({ dir, reason: `pid(s) ${stopped.survivors.join(', ')} would not stop` });
      } else out.stopped.push({ id, name, dir });
    }
    if (!left) fs.rmSync(path.join(root, id), { recursive: true, force: true });
  }
  return out;
}
