import { z } from 'zod';
import { RUNNER } from './runner.js';

/** `warren.yaml`. Unknown keys and wrong types are errors that name the key (strict objects). */

// Zero is refused here, not first at run time (where parseDuration refuses it too).
const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)$/, 'a duration such as 500ms, 2s, 10m or 1h')
  .refine((text) => Number.parseFloat(text) > 0, 'a duration greater than zero, such as 500ms, 2s, 10m or 1h');
const command = z.union([z.string().min(1), z.array(z.string()).min(1)]);
const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, . _ - (1-64 characters)');
/** A task type is the first part of its branches' names (`TYPE/ID`): validate.ts also holds it to git's branch-name rules. */
const taskType = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._/-]{0,31}$/,
    'letters, digits, . _ - / (1-32 characters, starting with a letter or digit)',
  );
/** A duration of days or less, for how long things are kept: `14d`, `12h`. */
const keep = z.string().regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'a duration such as 12h or 14d');

/** An egress allowlist entry: `host`, `host:port`, `*.domain[:port]`, an IPv4 address or `[IPv6]`, with an optional port. */
export const ALLOW_ENTRY =
  /^(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;
const allowEntry = z
  .string()
  .regex(ALLOW_ENTRY, 'host, host:port, *.domain, an IPv4 address or [IPv6], with an optional :port')
  .refine((e) => {
    const port = /:(\d+)$/.exec(e)?.[1];
    return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
  }, 'a port from 1 to 65535')
  // Without its port a loopback entry would open every service on the host's loopback (the
  // dashboard among them): a local model server is `127.0.0.1:11434`, not `127.0.0.1`.
  .refine(
    (e) => !/^(?:127(?:\.\d{1,3}){3}|localhost|\[::1\]|::1)$/i.test(e),
    'a loopback entry needs its port (127.0.0.1:PORT, localhost:PORT, [::1]:PORT)',
  );

/**
 * `services:`: what warren runs for each task beside its files — a PostgreSQL database cloned
 * from a template, a Redis, or any long-running command (a dev server, a worker). A repository
 * names what to run, never a server to connect to: a PostgreSQL server other than warren's own
 * is the user's (`userConfigSchema.postgres`, WARREN_POSTGRES_URL).
 */
export const SERVICE_NAME = /^[a-z][a-z0-9_-]{0,30}$/;
const serviceName = z
  .string()
  .regex(SERVICE_NAME, 'a service name: lowercase letters, digits, _ and - (1-31 characters, starting with a letter)');
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/, 'an environment variable name such as DATABASE_URL');
/** A database name on the user's server (a template): PostgreSQL's plain identifiers. */
const pgName = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a database name: lowercase letters, digits and _ (1-63 characters)');
const readySchema = z.union(
  [
    z.strictObject({ http: z.string().regex(/^\/[^\s]*$/, 'a path such as /health'), timeout: duration.optional() }),
    z.strictObject({ port: z.literal(true), timeout: duration.optional() }),
    z.strictObject({ log: z.string().min(1), timeout: duration.optional() }),
  ],
  { error: 'expected { http: /PATH }, { port: true } or { log: TEXT }, each with an optional timeout' },
);
const startSchema = z.enum(['always', 'on-demand']);
/**
 * What a task's (and its template's, and the gate's) PostgreSQL role may take of the server:
 * src/services/pg-limits.ts. In warren.yaml, what the repository asks for; in the user's
 * config.yaml, the most any repository gets.
 */
export const pgLimits = z.strictObject({
  connections: z.number().int().min(1).max(10_000).optional(),
  statement_timeout: duration.optional(),
  idle_in_transaction_timeout: duration.optional(),
});
export type PgLimitsConfig = z.infer<typeof pgLimits>;
const postgresService = z.strictObject({
  kind: z.literal('postgres'),
  /** Clone this existing database (of the user's server, or warren's own). */
  template: pgName.optional(),
  /** Build the template once per seed content: a SQL file of the repository, or a command run against a fresh database. */
  seed: z
    .union(
      [
        z.strictObject({ sql: z.string().min(1) }),
        z.strictObject({ run: command, inputs: z.array(z.string().min(1)).optional(), timeout: duration.optional() }),
      ],
      { error: 'expected { sql: FILE } or { run: COMMAND, inputs: [PATH, …] }' },
    )
    .optional(),
  env: envName.default('DATABASE_URL'),
  start: startSchema.default('always'),
  /** What the database's role may take of the server, within the user's caps. */
  limits: pgLimits.optional(),
});
const redisService = z.strictObject({
  kind: z.literal('redis'),
  env: envName.default('REDIS_URL'),
  start: startSchema.default('always'),
});
const runService = z.strictObject({
  kind: z.literal('run'),
  run: command,
  ready: readySchema.optional(),
  /** The variable that holds the service's URL (http://127.0.0.1:PORT) for the task's other commands. */
  env: envName.optional(),
  start: startSchema.default('always'),
});
/** Keys that would point warren at a server: never a repository's to set. */
const SERVER_KEYS = ['url', 'host', 'server', 'port', 'socket', 'password', 'user'];
const serviceSchema = z.preprocess(
  // `run: CMD` alone is a run service; any other kind must be named.
  (v) => (v && typeof v === 'object' && !Array.isArray(v) && !('kind' in v) && 'run' in v ? { kind: 'run', ...v } : v),
  z
    .discriminatedUnion('kind', [postgresService, redisService, runService], {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? 'an unknown kind: expected kind: postgres, kind: redis, or run: COMMAND'
          : undefined,
    })
    .superRefine((s, ctx) => {
      if (s.kind === 'postgres' && s.template !== undefined && s.seed !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['seed'],
          message: 'template and seed are two ways to make the database: keep one',
        });
    }),
);
const servicesSchema = z
  .record(serviceName, z.unknown())
  .superRefine((all, ctx) => {
    for (const [name, raw] of Object.entries(all)) {
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) continue;
      for (const key of SERVER_KEYS.filter((k) => k in raw))
        ctx.addIssue({
          code: 'custom',
          path: [name, key],
          message: `a repository's warren.yaml may not name a server to connect to; a PostgreSQL server other than warren's own is the user's to set (postgres.url in $WARREN_HOME/config.yaml, or WARREN_POSTGRES_URL)`,
        });
    }
  })
  .pipe(z.record(serviceName, serviceSchema));

export type ServiceConfig = z.infer<typeof postgresService> | z.infer<typeof redisService> | z.infer<typeof runService>;
export type PostgresServiceConfig = z.infer<typeof postgresService>;
export type RedisServiceConfig = z.infer<typeof redisService>;
export type RunServiceConfig = z.infer<typeof runService>;

export const PROVISION_MODES = ['copy', 'hardlink', 'share', 'cow'] as const;
export type ProvisionMode = (typeof PROVISION_MODES)[number];

export const configSchema = z
  .strictObject({
    /** Refused: the machines a task may run on are the user's to declare, never a repository's. */
    hosts: z
      .unknown()
      .refine(
        (v) => v === undefined,
        "a repository's warren.yaml may not declare hosts: the machines its tasks run on are yours to declare, in $WARREN_HOME/config.yaml (hosts:)",
      )
      .optional(),
    /**
     * Where workspaces go; default `$WARREN_HOME/worktrees/<project>`. Relative to the repository
     * root. A repository may only choose a folder inside itself (not `.git`) or under WARREN_HOME;
     * a root elsewhere is the user's choice (`userConfigSchema`, WARREN_WORKTREE_ROOT).
     */
    worktree_root: z.string().min(1).optional(),
    provision: z.array(z.strictObject({ path: z.string().min(1), mode: z.enum(PROVISION_MODES) })).default([]),
    provision_budget: z
      .strictObject({
        bytes: z
          .union([z.number().int().positive(), z.string().regex(/^\d+(\.\d+)?\s*(B|KiB|MiB|GiB|TiB)$/)])
          .optional(),
        entries: z.number().int().positive().optional(),
      })
      .optional(),
    /**
     * `gate`: whether the step runs in the merge queue's integration workspace too — `true` on
     * every gate run, `install` only when no dependency snapshot matches the integrated tree's
     * lockfiles (default: `install` for a step that runs a package manager's install, else false).
     */
    setup: z
      .array(
        z.strictObject({
          id,
          run: command,
          timeout: duration.optional(),
          gate: z.union([z.boolean(), z.literal('install')]).optional(),
        }),
      )
      .default([]),
    verify: z
      .array(z.strictObject({ id, run: command, required: z.boolean().default(true), timeout: duration.optional() }))
      .default([]),
    teardown: z.array(z.strictObject({ id, run: command, timeout: duration.optional() })).default([]),
    protected: z.array(z.string().min(1)).default([]),
    /**
     * `none`, `bwrap`, `container`; bwrap with egress through warren's proxy to the listed hosts
     * only; a container with its image, limits and allow list (src/run/container/).
     */
    sandbox: z
      .union(
        [
          z.enum(['none', 'bwrap', 'container']),
          z.strictObject({ kind: z.literal('bwrap'), allow: z.array(allowEntry).default([]) }),
          z.strictObject({
            kind: z.literal('container'),
            allow: z.array(allowEntry).optional(),
            image: z
              .string()
              .regex(/^[a-z0-9][a-z0-9._/:@-]*$/i, 'an image name, e.g. localhost/mine:1')
              .optional(),
            memory: z
              .string()
              .regex(/^\d+[bkmg]?$/i, 'a size, e.g. 4g or 512m')
              .optional(),
            cpus: z.number().positive().max(1024).optional(),
            pids: z.number().int().min(16).max(1_000_000).optional(),
          }),
        ],
        {
          error:
            'expected none, bwrap, container, { kind: bwrap, allow: [host[:port], …] } or { kind: container, image?, memory?, cpus?, pids?, allow? }',
        },
      )
      .default('none'),
    /**
     * Where a task's processes run: `local` (this machine, the default), `ssh:NAME`, a host of
     * $WARREN_HOME/config.yaml's `hosts:` (src/run/ssh/), or `k8s:NAME`, a sandbox claimed per
     * task in the cluster NAME of its `clusters:` (src/run/k8s/). The host or cluster itself is
     * only ever declared by the user; `new --runner` overrides this for one task.
     */
    runner: z
      .string()
      .regex(RUNNER, 'local, ssh:NAME (a host of your config.yaml) or k8s:NAME (a cluster of your config.yaml)')
      .default('local'),
    /** How a workspace's tracked files are made: `git worktree add` (git), a copy-on-write overlay of a shared snapshot (cow), or cow above a measured size (auto). */
    checkout: z.enum(['git', 'cow', 'auto']).default('git'),
    network: z.boolean().optional(),
    ports: z.strictObject({ count: z.number().int().min(1).max(100).default(10) }).optional(),
    kill_grace: duration.optional(),
    /** The merge queue: which verify commands gate a land (default: the required ones), how many tasks are tested together, whether bisection gates both halves at once, how many batches are gated ahead and how many gates run at once. */
    land: z
      .strictObject({
        gate: z.array(id).optional(),
        batch: z.number().int().min(1).max(64).optional(),
        parallel: z.boolean().optional(),
        /** How many batches the queue integrates and gates ahead of the one in its gate, each on top of the one before (speculatively, as merge trains do); 0 gates one batch at a time (default 1). */
        speculate: z.number().int().min(0).max(8).optional(),
        /** How many gate runs may run at once, speculative ones included (default 2). */
        gates: z.number().int().min(1).max(16).optional(),
        /** Batches of entries that merge with each other, and an entry that no longer merges with the base bounced at once (default true). */
        conflicts: z.boolean().optional(),
      })
      .optional(),
    /** The conflict map: how `warren sync` brings the base in (rebase, the default, or merge), and whether `warren run` tells the agent of new conflicts (off by default). */
    conflicts: z
      .strictObject({
        sync: z.enum(['rebase', 'merge']).optional(),
        tell: z.boolean().optional(),
      })
      .optional(),
    /** The task types `warren new` takes (replacing the five built-in ones), each the prefix of its tasks' branches. */
    types: z.array(taskType).min(1).optional(),
    /** What `rm --discard` saves: how long `gc` keeps it. */
    archive: z.strictObject({ keep: keep.optional() }).optional(),
    services: servicesSchema.optional(),
    agents: z
      .record(
        z.string(),
        z.strictObject({
          /** Without one, the entry only tunes the built-in agent of that name (its leftover_grace). */
          command: z.array(z.string()).min(1).optional(),
          prompt: z.enum(['argv', 'stdin', 'file']).default('argv'),
          /** How long an agent that gave its final result may be kept running by processes it left, before warren ends them. */
          leftover_grace: duration.optional(),
        }),
      )
      .optional(),
  })
  .superRefine((config, ctx) => {
    if (typeof config.sandbox === 'object' && config.network === true) {
      ctx.addIssue({
        code: 'custom',
        path: ['network'],
        message:
          'network: true lets every connection out, which the sandbox allow list exists to prevent; keep one of the two',
      });
    }
  });

export type WarrenConfig = z.infer<typeof configSchema>;
export type CommandSpec = z.infer<typeof command>;
