import fs from 'node:fs';
import path from 'node:path';
import type { ServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { DEFAULT_PORT_COUNT, portsOf } from '../run/ports.js';
import { logDir } from '../run/records.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { daemonState, type DaemonState } from '../run/daemon.js';
import { serviceCluster, servicePlace } from '../run/service-runner.js';
import type { ServiceFact } from './facts.js';
import { listeningPort, serviceKind, takesPort } from './kinds.js';
import { clusterDir, parseServerUrl, userServerUrl } from './pg-server.js';
import { pgUrl } from './pg-sql.js';

/**
 * A task's services as warren.yaml declares them and its facts record them: which port each
 * takes, what variables the task's commands see, where each is reached and what state it is
 * in. A service's process (processes.ts) is a daemon (daemon.ts) in
 * `$WARREN_HOME/services/<project>/<task>/<name>/`; its log is beside the task's run logs,
 * `service-<name>.log`.
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
function portUsers(ctx: ProjectContext, inPod: boolean): string[] {
  return servicesOf(ctx)
    .filter(([, s]) => takesPort(s, inPod))
    .map(([name]) => name);
}

/**
 * Refuses, before anything is made, services that need more ports than a task's block holds.
 * The top of the block goes to services, so WARREN_PORT (the first) stays the task's own.
 */
export function checkServicePorts(ctx: ProjectContext, inPod: boolean): void {
  const count = ctx.config.ports?.count ?? DEFAULT_PORT_COUNT;
  const users = portUsers(ctx, inPod);
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
  const i = portUsers(ctx, serviceCluster(ctx, task) !== null).indexOf(name);
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
  if (fact.server === 'pod') {
    // The task's own server in its pod, on the pod's loopback.
    ({ port } = fact);
    host = '127.0.0.1';
  } else if (fact.server === 'user') {
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
    const url = serviceKind(fact.kind).url(ctx, fact);
    const port = listeningPort(fact);
    if (port !== null) env[`${prefix}_PORT`] = String(port);
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
  /** A task in a cluster: its process runs in the task's pod there (its URL is the pod's loopback), in this pod while it runs. */
  cluster?: string;
  pod?: string;
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
    return serviceKind(fact.kind).status(ctx, task, name, config, fact, clusterUp);
  });
}

/** A process service's status: running, crashed (ended by itself) or stopped, where it is reached, its log. */
export function processStatus(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: ServiceConfig,
  fact: Extract<ServiceFact, { port: number }>,
): ServiceStatus {
  const st = processState(ctx, task.id, name);
  const cluster = serviceCluster(ctx, task);
  const place = cluster !== null && st.state === 'running' ? servicePlace(serviceDir(ctx, task.id, name)) : null;
  return {
    name,
    kind: config.kind,
    state: st.state === 'running' ? 'running' : st.state === 'exited' ? 'crashed' : 'stopped',
    url: serviceKind(fact.kind).url(ctx, fact),
    port: fact.port,
    log: serviceLog(ctx, task.id, name),
    ...(st.state === 'exited' ? { exitCode: st.exitCode } : {}),
    ...(cluster !== null ? { cluster } : {}),
    ...(place ? { pod: place.pod } : {}),
  };
}

/** `127.0.0.1:PORT` of each service the task has: what its sandbox may reach on the host's loopback. */
export function serviceLoopback(ctx: ProjectContext, task: Task): string[] {
  const out: string[] = [];
  for (const fact of Object.values(task.data.services ?? {})) {
    const address = serviceKind(fact.kind).address(ctx, fact);
    if (address) out.push(address);
  }
  return [...new Set(out)];
}
