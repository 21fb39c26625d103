import { randomBytes } from 'node:crypto';
import type { ServiceConfig } from '../config/schema.js';
import { commandArgv } from '../run/commands.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { ServiceFact } from './facts.js';
import { userServerUrl } from './pg-server.js';
import { pgTool } from './pg-sql.js';
import { POSTGRES_READY, podPostgresArgv } from '../run/k8s/pod-postgres.js';
import { serviceCluster } from '../run/service-runner.js';
import { createPodDatabase } from './pg-pod.js';
import { checkTemplate, createTaskDatabase, databaseStatus, databaseStatusOf } from './postgres-task.js';
import { processPort, redisBinary } from './processes.js';
import type { ReadyCheck } from './ready.js';
import { redisArgv } from './redis-argv.js';
import { postgresUrl, processStatus, redisUrl, type ServiceStatus } from './task-services.js';

export type ServiceKind = ServiceConfig['kind'];
type ConfigOf<K extends ServiceKind> = Extract<ServiceConfig, { kind: K }>;
type FactOf<K extends ServiceKind> = Extract<ServiceFact, { kind: K }>;

/** A kind of warren.yaml's without its variant of ServiceFact (src/services/facts.ts) fails here, by name. */
type WithoutFact = Exclude<ServiceKind, ServiceFact['kind']>;
export const EVERY_KIND_HAS_A_FACT: [WithoutFact] extends [never] ? true : WithoutFact = true;

/**
 * What each kind of service is, in one place: how it is checked, made, started, reached and
 * stopped. Everything outside a kind's own module (postgres-task.ts and pg-*.ts for postgres)
 * asks this table rather than comparing the kind's name; a new kind without an entry does not
 * compile. Trust records a service by its warren.yaml entry, whatever its kind (config/trust.ts).
 */
export interface ServiceDriver<K extends ServiceKind> {
  /**
   * Checked before `new` makes anything, first for every service: what must be installed here
   * (throws saying what to install). `inPod`: the task runs in a cluster, where its processes do.
   */
  installed(ctx: ProjectContext, config: ConfigOf<K>, inPod: boolean): void;
  /** Then: what it is made from (a template database), still before anything is made. */
  check(ctx: ProjectContext, name: string, config: ConfigOf<K>): Promise<void>;
  /** Made at `new` (and for the gate): the task's fact of it. */
  make(
    ctx: ProjectContext,
    task: Task,
    name: string,
    config: ConfigOf<K>,
    restoredFrom: string | undefined,
  ): Promise<ServiceFact>;
  /**
   * Started: a process of the task's own on a port of its block, started through the runner,
   * stopped with the task's processes and collected with them. Null: a database on a server
   * tasks share, never started or stopped alone, dropped with the task.
   */
  process: ProcessKind<K> | null;
  /** A process it is only in a task's pod (postgres: a server of the task's own there); null when it is the same everywhere. */
  podProcess: ProcessKind<K> | null;
  /** Made in a task's pod (its fact says so): it is then `podProcess`, else `process`. */
  madeInPod(fact: FactOf<K>): boolean;
  /** Reached in a browser: the dashboard links its port. */
  http: boolean;
  /** Reached: the URL the task's commands are given. */
  url(ctx: ProjectContext, fact: FactOf<K>): string | null;
  /** The `host:port` a sandboxed command may reach it at, on the loopback, without the network. */
  address(ctx: ProjectContext, fact: FactOf<K>): string | null;
  /** What `show`, `service status` and the dashboard say of it (`clusterUp`: is warren's PostgreSQL server up, if known). */
  status(
    ctx: ProjectContext,
    task: Task,
    name: string,
    config: ServiceConfig,
    fact: FactOf<K>,
    clusterUp: boolean | null,
  ): ServiceStatus;
}

export interface ProcessKind<K extends ServiceKind> {
  /** In the starting line: what starts (`redis`), or nothing for the user's own command. */
  label: string;
  /** Started with the task (and by the gate), not only on demand. */
  startsWithTask(config: ConfigOf<K>): boolean;
  /** Started again by the next command when found ended by itself (else reported and left). */
  restartsAfterCrash: boolean;
  /** `inPod`: it runs in the task's pod (a task in a cluster), where its program is looked up on the pod's PATH. */
  argv(config: ConfigOf<K>, fact: FactOf<K>, data: string, inPod: boolean): string[];
  /** What says it is ready (null: started is ready), and within how long (warren's default when absent). */
  ready(config: ConfigOf<K>): ReadyCheck | null;
  readyTimeout(config: ConfigOf<K>): string | undefined;
  /** A folder of its own (redis's data and configuration), writable beside the workspace. */
  ownsData: boolean;
}

const loopback = (fact: { port: number }): string => `127.0.0.1:${fact.port}`;

const SERVICE_KINDS = {
  postgres: {
    installed(ctx, config, inPod) {
      // In a pod, the server and its seed are the pod's; only a template database is read here.
      if (inPod && !config.template) return;
      if (!userServerUrl(ctx.user)) pgTool('postgres');
    },
    check: (ctx, name, config) => checkTemplate(ctx, name, config),
    make: (ctx, task, name, config, restoredFrom) =>
      serviceCluster(ctx, task) !== null
        ? createPodDatabase(ctx, task, name, config, restoredFrom)
        : createTaskDatabase(ctx, task, name, config, restoredFrom),
    process: null,
    podProcess: {
      label: 'its PostgreSQL server in the pod',
      startsWithTask: () => true,
      restartsAfterCrash: true,
      argv(_config, fact) {
        if (fact.server !== 'pod') throw new Error(`database ${fact.database} is not in a pod`);
        return podPostgresArgv(fact.database, fact.port);
      },
      ready: () => ({ log: POSTGRES_READY, thenPort: true }),
      readyTimeout: () => undefined,
      ownsData: false,
    },
    madeInPod: (fact) => fact.server === 'pod',
    http: false,
    url: (ctx, fact) => postgresUrl(ctx, fact),
    address(ctx, fact) {
      if (fact.server === 'pod') return loopback(fact);
      const url = fact.server === 'warren' ? postgresUrl(ctx, fact) : null;
      return url ? `127.0.0.1:${new URL(url).port}` : null;
    },
    status: (ctx, task, name, config, fact, clusterUp) =>
      fact.server === 'pod'
        ? { ...processStatus(ctx, task, name, config, fact), ...databaseStatusOf(fact) }
        : databaseStatus(ctx, name, fact, clusterUp),
  },
  redis: {
    installed(_ctx, _config, inPod) {
      // In a pod, redis-server is the pod image's (its PATH); what this machine has is not checked.
      if (!inPod) redisBinary();
    },
    async check() {},
    make: async (ctx, task, name) => ({
      kind: 'redis',
      port: processPort(ctx, task, name),
      password: randomBytes(18).toString('hex'),
    }),
    process: {
      label: 'redis',
      startsWithTask: (config) => config.start === 'always',
      restartsAfterCrash: true,
      argv: (_config, fact, data, inPod) =>
        redisArgv(inPod ? 'redis-server' : redisBinary(), data, fact.port, fact.password),
      ready: () => ({ log: 'Ready to accept connections' }),
      readyTimeout: () => undefined,
      ownsData: true,
    },
    podProcess: null,
    madeInPod: () => false,
    http: false,
    url: (_ctx, fact) => redisUrl(fact),
    address: (_ctx, fact) => loopback(fact),
    status: (ctx, task, name, config, fact) => processStatus(ctx, task, name, config, fact),
  },
  run: {
    installed() {},
    async check() {},
    make: async (ctx, task, name) => ({ kind: 'run', port: processPort(ctx, task, name) }),
    process: {
      label: '',
      startsWithTask: (config) => config.start === 'always',
      restartsAfterCrash: false,
      argv: (config) => commandArgv(config.run),
      ready: (config) => config.ready ?? null,
      readyTimeout: (config) => config.ready?.timeout,
      ownsData: false,
    },
    podProcess: null,
    madeInPod: () => false,
    http: true,
    url: (_ctx, fact) => `http://127.0.0.1:${fact.port}`,
    address: (_ctx, fact) => loopback(fact),
    status: (ctx, task, name, config, fact) => processStatus(ctx, task, name, config, fact),
  },
} satisfies { [K in ServiceKind]: ServiceDriver<K> };

/**
 * The driver of `kind`. Its methods take the config and fact of that kind; callers hand them the
 * config or fact they read the kind from, which is why the union is widened here, once.
 */
export function serviceKind(kind: ServiceKind): ServiceDriver<ServiceKind> {
  return SERVICE_KINDS[kind] as ServiceDriver<ServiceKind>;
}

/**
 * What a service of the task is as a process, by its fact: redis and `run:` always; postgres in
 * a task's pod (its own server there); null for a database on a server tasks share.
 */
export function processOf(fact: ServiceFact): ProcessKind<ServiceKind> | null {
  const driver = serviceKind(fact.kind);
  return driver.madeInPod(fact) ? driver.podProcess : driver.process;
}

/** Does a service of this config take a port of the task's block (a process: in a pod, postgres too)? */
export function takesPort(config: ServiceConfig, inPod: boolean): boolean {
  const driver = serviceKind(config.kind);
  return driver.process !== null || (inPod && driver.podProcess !== null);
}

/** The task's port of a service that listens on one (a process), else null. */
export function listeningPort(fact: ServiceFact): number | null {
  return 'port' in fact ? fact.port : null;
}
