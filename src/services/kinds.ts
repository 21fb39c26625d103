import { randomBytes } from 'node:crypto';
import type { ServiceConfig } from '../config/schema.js';
import { commandArgv } from '../run/commands.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { ServiceFact } from './facts.js';
import { userServerUrl } from './pg-server.js';
import { pgTool } from './pg-sql.js';
import { checkTemplate, createTaskDatabase, databaseStatus } from './postgres-task.js';
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
  /** Checked before `new` makes anything, first for every service: what must be installed here (throws saying what to install). */
  installed(ctx: ProjectContext): void;
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
    installed(ctx) {
      if (!userServerUrl(ctx.user)) pgTool('postgres');
    },
    check: (ctx, name, config) => checkTemplate(ctx, name, config),
    make: (ctx, task, name, config, restoredFrom) => createTaskDatabase(ctx, task, name, config, restoredFrom),
    process: null,
    http: false,
    url: (ctx, fact) => postgresUrl(ctx, fact),
    address(ctx, fact) {
      const url = fact.server === 'warren' ? postgresUrl(ctx, fact) : null;
      return url ? `127.0.0.1:${new URL(url).port}` : null;
    },
    status: (ctx, _task, name, _config, fact, clusterUp) => databaseStatus(ctx, name, fact, clusterUp),
  },
  redis: {
    installed: () => void redisBinary(),
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

/** The task's port of a service that listens on one (a process), else null. */
export function listeningPort(fact: ServiceFact): number | null {
  return 'port' in fact ? fact.port : null;
}
