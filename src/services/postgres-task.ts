import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PostgresServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { reportStep } from '../workspace/reporter.js';
import type { ServiceFact } from './facts.js';
import { objectsOfTask } from './ledger.js';
import { taskDbName, templateName } from './names.js';
import { cloneDatabase, databaseExists, dropObjects, dumpDatabase, restoreDatabase, serverId } from './pg-database.js';
import { resolveLimits, type RoleLimits } from './pg-limits.js';
import { clusterDir, ensureServer, parseServerUrl, userServerUrl, type PgServer } from './pg-server.js';
import { PgError } from './pg-sql.js';
import { postgresUrl, type ServiceStatus } from './task-services.js';
import { seedKey, seededTemplate } from './pg-seed.js';
import { dumpPodDatabase } from './pg-pod.js';

/**
 * A task's PostgreSQL service: its database, cloned from a template at `new` (or filled from
 * the dump `rm --discard` saved, at `restore`), dropped at `rm`. A template is either a
 * database of the server named by `template:`, or one warren builds once per seed content
 * (`seed: {sql}` or `seed: {run, inputs}`), keyed like a dependency snapshot: the same seed
 * gives the same template, a changed seed a new one.
 */

/** The server, started if it is warren's own; a restart of one that had died is an event. */
export async function serverFor(ctx: ProjectContext, taskId: string | null): Promise<PgServer> {
  const { server, restarted } = await ensureServer(ctx.store.home, ctx.user, ctx.reporter);
  if (restarted) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'service.server_restarted',
      level: 'warn',
      message: restarted,
      data: { message: restarted },
    });
    ctx.reporter.line(`warren: ${restarted}`);
  }
  return server;
}

/** `template:` must name a database of the server: checked before anything is made. */
export async function checkTemplate(ctx: ProjectContext, name: string, config: PostgresServiceConfig): Promise<void> {
  if (!config.template) return;
  const server = await serverFor(ctx, null);
  if (!(await databaseExists(server, config.template))) {
    throw new WarrenError(
      'CONFIG_INVALID',
      `warren.yaml is invalid: services.${name}.template: no database ${config.template} on ${server.kind === 'warren' ? "warren's own PostgreSQL server" : `the server you named (${server.admin.host}:${server.admin.port})`}; nothing was created.`,
      {
        hint:
          server.kind === 'warren'
            ? "A template names a database of your own server (postgres.url in $WARREN_HOME/config.yaml); with warren's, build one from `seed:` instead."
            : `Create ${config.template} there, or use \`seed:\` to build the template from a SQL file or a command.`,
      },
    );
  }
}

/** The newest dump `rm --discard` saved of this task's service, made at or before `at` (an archive's UTC stamp). */
export function dumpFor(ctx: ProjectContext, taskId: string, name: string, at: string | undefined): string | null {
  const dir = archiveDir(ctx, taskId);
  let stamps: string[];
  try {
    stamps = fs.readdirSync(dir).sort();
  } catch {
    return null;
  }
  for (const stamp of stamps.reverse()) {
    if (at !== undefined && stamp > at) continue;
    const file = path.join(dir, stamp, `${name}.sql`);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

export function archiveDir(ctx: ProjectContext, taskId: string): string {
  return path.join(ctx.store.home, 'services', ctx.key, '.archive', taskId);
}

/** Makes the task's database (its fact recorded first, so that an undo finds what to drop). */
export async function createTaskDatabase(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: PostgresServiceConfig,
  restoreAt: string | undefined,
): Promise<ServiceFact> {
  const server = await limitedServer(ctx, task, name, config);
  const database = taskDbName(ctx.key, task.id, name);
  const password = randomBytes(18).toString('hex');
  const started = Date.now();
  const base = { project: ctx.key, taskId: task.id, name: database, password };
  const dump = restoreAt !== undefined ? dumpFor(ctx, task.id, name, restoreAt) : null;
  let from: Extract<ServiceFact, { kind: 'postgres' }>['from'];
  try {
    const step = (what: string, work: () => Promise<void>) =>
      reportStep(ctx.reporter, `service ${name}: ${what}`, work);
    if (dump) {
      await step(`restoring the database from the dump ${dump}`, () =>
        restoreDatabase(ctx.store, server, base, dump).catch((err: unknown) => {
          throw err instanceof PgError ? dumpRefused(task, name, dump, database, err) : err;
        }),
      );
      from = { kind: 'dump', file: dump };
    } else if (config.template) {
      const template = config.template;
      await step(`cloning the database from template ${template}`, () =>
        cloneDatabase(ctx.store, server, { ...base, template, templateRole: null }),
      );
      from = { kind: 'template', name: template, seed: null };
    } else if (config.seed) {
      const { template, key } = await seededTemplate(ctx, task, server, name, config);
      await step(`cloning the database from template ${template}`, () =>
        cloneDatabase(ctx.store, server, { ...base, template, templateRole: template }),
      );
      from = { kind: 'template', name: template, seed: key };
    } else {
      await step('creating an empty database', () =>
        cloneDatabase(ctx.store, server, { ...base, template: null, templateRole: null }),
      );
      from = { kind: 'empty' };
    }
  } catch (err) {
    if (err instanceof WarrenError) throw err;
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id}: its database could not be made: ${err instanceof Error ? err.message : String(err)}.`,
      {
        hint: `See ${server.kind === 'warren' ? path.join(clusterDir(ctx.store.home), 'postgres.log') : "your server's log"}; fix the cause and run the command again.`,
        cause: err,
      },
    );
  }
  const fact: ServiceFact = { kind: 'postgres', database, password, server: server.kind, from };
  const what =
    from.kind === 'template'
      ? `template ${from.name}`
      : from.kind === 'dump'
        ? `the dump ${from.file}`
        : 'creating an empty database';
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.database_created',
    message: `service ${name}: database ${database} (owned by role ${database}) from ${what} in ${Date.now() - started} ms`,
    data: { name, database, from: what, ms: Date.now() - started },
  });
  return fact;
}

/**
 * The server, with the limits this service's roles get (the template's, the task's, the gate's):
 * what warren.yaml asks, held to the user's caps; a request above a cap is a warning event.
 */
async function limitedServer(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: PostgresServiceConfig,
): Promise<PgServer> {
  const server = await serverFor(ctx, task.id);
  return { ...server, roles: serviceLimits(ctx, task, name, config) };
}

/** What warren.yaml asks for the service's roles, held to the user's caps; a request above a cap is a warning event. */
export function serviceLimits(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: PostgresServiceConfig,
): RoleLimits {
  const { limits, capped } = resolveLimits(ctx.user.postgres?.limits, config.limits);
  if (capped.length > 0) {
    const what = capped.map((c) => `${c.key} ${c.asked}${c.key === 'connections' ? '' : ' ms'} (cap ${c.cap})`);
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'service.limits_capped',
      level: 'warn',
      message: `service ${name}: warren.yaml asks for more than your PostgreSQL caps allow (${what.join(', ')}); its role gets the caps (postgres.limits in $WARREN_HOME/config.yaml raises them)`,
      data: { name, capped },
    });
  }
  return limits;
}

function dumpRefused(task: Task, name: string, dump: string, role: string, err: PgError): WarrenError {
  return new WarrenError(
    'SERVICE_FAILED',
    `service ${name} of task ${task.id}: the dump ${dump} could not be loaded as the task's own role ${role} (${err.message}); the dump is kept as it was.`,
    {
      hint: "A dump is loaded with the task role's rights, never a superuser's: what it needs beyond them (an untrusted extension, a file or program of the server) is refused. Fix the dump, or restore without the database (`warren restore` after moving the dump away).",
      cause: err,
    },
  );
}

/** The servers a task's ledgered objects are on, reachable now: warren's own (started), or the user's when it is the one named now. */
async function serverOf(ctx: ProjectContext, sid: string, taskId: string | null): Promise<PgServer | string> {
  const url = userServerUrl(ctx.user);
  if (sid === 'warren') {
    if (url)
      return `it is on warren's own PostgreSQL server, and you now name another (postgres.url): unset it to drop it`;
  } else if (!url) {
    return `it is on your PostgreSQL server ${sid}, which postgres.url no longer names`;
  }
  const server = await serverFor(ctx, taskId);
  if (serverId(server) !== sid) return `it is on ${sid}, and postgres.url now names ${serverId(server)}`;
  return server;
}

/** Drops every database and role warren made for the task; each problem in words (the ledger keeps what was not dropped). */
export async function dropTaskDatabases(ctx: ProjectContext, taskId: string): Promise<string[]> {
  const rows = objectsOfTask(ctx.store, ctx.key, taskId);
  const names = [...new Map(rows.map((r) => [`${r.server}\0${r.name}`, r])).values()];
  const problems: string[] = [];
  for (const row of names) {
    try {
      const server = await serverOf(ctx, row.server, taskId);
      if (typeof server === 'string') {
        problems.push(`database ${row.name}: ${server}`);
        continue;
      }
      await dropObjects(ctx.store, server, row.name);
      ctx.store.addEvent({
        project: ctx.key,
        taskId,
        kind: 'service.database_dropped',
        message: `dropped database and role ${row.name}, and checked both are gone`,
        data: { name: row.name, database: row.name },
      });
    } catch (err) {
      problems.push(`database ${row.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/** `rm --discard`: each database of the task dumped (plain SQL) beside the archive, before it is dropped. */
export async function dumpTaskDatabases(ctx: ProjectContext, task: Task, stamp: string): Promise<string[]> {
  const files: string[] = [];
  for (const [name, fact] of Object.entries(task.data.services ?? {})) {
    if (fact.kind !== 'postgres') continue;
    let dump: (file: string) => Promise<void>;
    if (fact.server === 'pod') {
      // The task's own server, in its pod: dumped there, the dump brought here.
      dump = (file) => dumpPodDatabase(ctx, task, name, fact, file);
    } else {
      const server = await serverOf(ctx, fact.server === 'warren' ? 'warren' : serverIdOfUser(ctx), task.id);
      if (typeof server === 'string') throw new Error(`cannot dump database ${fact.database}: ${server}`);
      if (!(await databaseExists(server, fact.database))) continue;
      dump = (file) => dumpDatabase(server, fact.database, fact.password, file);
    }
    const dir = path.join(archiveDir(ctx, task.id), stamp);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${name}.sql`);
    try {
      await reportStep(ctx.reporter, `service ${name}: saving the database as ${file}`, () => dump(file));
    } catch (err) {
      // Half a dump is no dump: restore would take it for the database.
      fs.rmSync(file, { force: true });
      if (!(err instanceof PgError)) throw err;
      throw new WarrenError(
        'SERVICE_FAILED',
        `service ${name} of task ${task.id}: its database ${fact.database} could not be dumped as the task's own role (${err.message}); nothing was removed.`,
        {
          hint: "A dump is taken with the task role's rights, never a superuser's: it must be able to read all of its database. Fix what the message names, or save the task's work and `warren rm` it without --discard.",
          cause: err,
        },
      );
    }
    files.push(file);
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'service.database_dumped',
      message: `saved database ${fact.database} of service ${name} as ${file}; \`warren restore ${task.id}\` brings it back`,
      data: { name, database: fact.database, file },
    });
  }
  return files;
}

function serverIdOfUser(ctx: ProjectContext): string {
  const url = userServerUrl(ctx.user);
  return url ? serverId(parseServerUrl(url)) : 'user';
}

/** The templates the current warren.yaml would clone from in the main checkout (kept by `gc` while unused). */
export async function currentTemplates(ctx: ProjectContext): Promise<Set<string>> {
  return new Set([...(await currentSeedKeys(ctx))].map((key) => templateName(ctx.key, key)));
}

/** The content keys of the current warren.yaml's seeds in the main checkout. */
export async function currentSeedKeys(ctx: ProjectContext): Promise<Set<string>> {
  const keys = new Set<string>();
  const head = await revParse(ctx.repo, 'HEAD');
  for (const [name, config] of Object.entries(ctx.config.services ?? {})) {
    if (config.kind !== 'postgres' || !config.seed || !head) continue;
    try {
      keys.add(await seedKey(ctx, { path: ctx.repo.root, baseCommit: head }, name, config.seed));
    } catch {
      // a seed that cannot be read now makes no template now
    }
  }
  return keys;
}

/** A task's database as `show` and the dashboard list it: on whose server, cloned from what. */
export function databaseStatus(
  ctx: ProjectContext,
  name: string,
  fact: Extract<ServiceFact, { kind: 'postgres' }>,
  clusterUp: boolean | null,
): ServiceStatus {
  return {
    name,
    kind: 'postgres',
    state: fact.server === 'user' ? 'external' : clusterUp === false ? 'stopped' : 'running',
    url: postgresUrl(ctx, fact),
    port: null,
    log: fact.server === 'warren' ? path.join(clusterDir(ctx.store.home), 'postgres.log') : null,
    ...databaseStatusOf(fact),
  };
}

/** The database and what it was made from, in words. */
export function databaseStatusOf(fact: Extract<ServiceFact, { kind: 'postgres' }>): { database: string; from: string } {
  return { database: fact.database, from: madeFrom(fact.from) };
}

function madeFrom(from: Extract<ServiceFact, { kind: 'postgres' }>['from']): string {
  switch (from.kind) {
    case 'template':
      return `template ${from.name}${from.seed ? ` (seed ${from.seed.slice(0, 12)})` : ''}`;
    case 'dump':
      return `dump ${from.file}`;
    case 'seed':
      return `its seed (${from.seed.slice(0, 12)}), run in the pod`;
    case 'empty':
      return 'empty';
  }
}

/** The template a task's database was cloned from, if it was. */
export function templateOf(fact: ServiceFact): string | null {
  return fact.kind === 'postgres' && fact.from.kind === 'template' ? fact.from.name : null;
}
