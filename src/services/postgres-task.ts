import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PostgresServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { treeEntry } from '../git/trees.js';
import { commandArgv } from '../run/commands.js';
import { runInTask, type RunOutcome } from '../run/execute.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import { acquireWaiting } from '../util/lockfile.js';
import { isInside } from '../util/paths.js';
import type { ProjectContext } from '../workspace/context.js';
import { reportStep, startStep } from '../workspace/reporter.js';
import type { ServiceFact } from './facts.js';
import { objectsOfTask } from './ledger.js';
import { taskDbName, templateName } from './names.js';
import {
  buildTemplate,
  cloneDatabase,
  databaseExists,
  dropObjects,
  dumpDatabase,
  restoreDatabase,
  serverId,
  templateComplete,
} from './pg-database.js';
import { resolveLimits } from './pg-limits.js';
import { clusterDir, ensureServer, parseServerUrl, userServerUrl, type PgServer } from './pg-server.js';
import { PgError, pgEnv, pgTool, pgUrl } from './pg-sql.js';

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

/** The seed's content key: the SQL file's bytes, or the command and the git objects of its inputs at the task's base. */
export async function seedKey(
  ctx: ProjectContext,
  at: { path: string; baseCommit: string },
  name: string,
  seed: NonNullable<PostgresServiceConfig['seed']>,
): Promise<string> {
  const h = createHash('sha256');
  if ('sql' in seed) {
    const file = seedFile(at, name, seed.sql);
    h.update('sql\0').update(fs.readFileSync(file));
  } else {
    h.update('run\0').update(JSON.stringify(seed.run));
    for (const input of seed.inputs ?? []) {
      const entry = await treeEntry(ctx.repo, at.baseCommit, input.replace(/\/+$/, ''));
      if (!entry) {
        throw new WarrenError(
          'CONFIG_INVALID',
          `warren.yaml is invalid: services.${name}.seed.inputs: ${input} is not in the task's base commit; nothing was created.`,
          {
            hint: 'List tracked files or folders whose content the seed depends on (migrations, seed data).',
          },
        );
      }
      h.update(`\0${input}\0${entry.sha}`);
    }
  }
  return h.digest('hex');
}

function seedFile(task: { path: string }, name: string, rel: string): string {
  const file = path.resolve(task.path, rel);
  if (!isInside(task.path, file) || !fs.existsSync(file)) {
    throw new WarrenError(
      'CONFIG_INVALID',
      `warren.yaml is invalid: services.${name}.seed.sql: ${rel} is not a file of the workspace; nothing was created.`,
      {
        hint: 'Name a SQL file of the repository, relative to its root.',
      },
    );
  }
  return file;
}

/** The template for this task's seed: built now (once, under a lock: tasks made at once wait for one build) unless already complete. */
async function seededTemplate(
  ctx: ProjectContext,
  task: Task,
  server: PgServer,
  name: string,
  config: PostgresServiceConfig,
): Promise<{ template: string; key: string }> {
  const seed = config.seed;
  if (!seed) throw new Error('no seed');
  const key = await seedKey(ctx, task, name, seed);
  const template = templateName(ctx.key, key);
  const lockDir = path.join(clusterDir(ctx.store.home), 'locks');
  fs.mkdirSync(lockDir, { recursive: true, mode: 0o700 });
  const lock = await acquireWaiting(path.join(lockDir, `${template}.lock`), `build ${template}`, 60 * 60_000);
  if (!lock.ok)
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `another warren has been building template ${template} for an hour; nothing was created.`,
    );
  try {
    if (await templateComplete(server, template, key)) return { template, key };
    const started = Date.now();
    const building = startStep(ctx.reporter, `service ${name}: building the template from its seed (once per seed)`);
    await buildTemplate(ctx.store, ctx.key, server, template, key, async (conn) => {
      // The seed is the repository's (an agent may have written it): it runs inside the task's
      // boundary, as the template's own role, and reaches the server through the sandbox's bridge.
      const reach = [`${conn.host}:${conn.port}`];
      const timeout =
        'run' in seed && seed.timeout
          ? { timeoutMs: parseDuration(seed.timeout, `services.${name}.seed.timeout`) }
          : { timeoutMs: 30 * 60_000 };
      if ('sql' in seed) {
        // psql's own meta-commands (`\!`) are psql's: run there, they reach nothing of the host's.
        const outcome = await runInTask(ctx, task, {
          kind: 'setup',
          label: `seed ${name}`,
          argv: [
            pgTool('psql'),
            '-X',
            '-q',
            '-v',
            'ON_ERROR_STOP=1',
            '--single-transaction',
            '-f',
            seedFile(task, name, seed.sql),
          ],
          stdin: 'ignore',
          output: { stdout: null, stderr: null },
          env: pgEnv(conn),
          reach,
          ...timeout,
          skipStateCheck: true,
        });
        if (outcome.exitCode !== 0) throw seedFailed(task, name, psqlFailure(outcome), outcome.log);
        return;
      }
      const url = pgUrl(conn);
      const outcome = await runInTask(ctx, task, {
        kind: 'setup',
        label: `seed ${name}`,
        argv: commandArgv(seed.run),
        stdin: 'ignore',
        output: { stdout: ctx.reporter.output.stderr, stderr: ctx.reporter.output.stderr },
        env: { [config.env]: url, DATABASE_URL: url },
        reach,
        ...timeout,
        skipStateCheck: true,
      });
      if (outcome.exitCode !== 0)
        throw seedFailed(task, name, outcome.reason ?? `exit ${outcome.exitCode ?? outcome.signal}`, outcome.log);
    }).catch((err: unknown) => {
      building.fail();
      throw err;
    });
    building.done();
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'service.template_built',
      message: `built template ${template} for service ${name} from its seed (${key.slice(0, 12)}) in ${Date.now() - started} ms`,
      data: { name, template, seed: key, ms: Date.now() - started },
    });
    return { template, key };
  } finally {
    lock.lock.release();
  }
}

/** Why psql failed, in its own words: the first lines of its log that say ERROR (else its end), or how the run ended. */
function psqlFailure(outcome: RunOutcome): string {
  let text = '';
  try {
    text = fs.readFileSync(outcome.log, 'utf8');
  } catch {
    // no log: how it ended says it
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const errors = lines.filter((l) => /\b(ERROR|FATAL)\b/.test(l));
  const said = (errors.length > 0 ? errors : lines.slice(-3)).slice(0, 3).join(' ');
  return said || outcome.reason || `exit ${outcome.exitCode ?? outcome.signal}`;
}

function seedFailed(task: Task, name: string, why: string, log: string | null): WarrenError {
  return new WarrenError(
    'SERVICE_FAILED',
    `the seed of service ${name} failed (${why})${log ? `; its log is ${log}` : ''}, so task ${task.id}'s database could not be made.`,
    {
      hint: 'Fix the seed and run `warren new` again; the half-built template is dropped then.',
    },
  );
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
  return { ...server, roles: limits };
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
    const server = await serverOf(ctx, fact.server === 'warren' ? 'warren' : serverIdOfUser(ctx), task.id);
    if (typeof server === 'string') throw new Error(`cannot dump database ${fact.database}: ${server}`);
    if (!(await databaseExists(server, fact.database))) continue;
    const dir = path.join(archiveDir(ctx, task.id), stamp);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${name}.sql`);
    try {
      await reportStep(ctx.reporter, `service ${name}: saving the database as ${file}`, () =>
        dumpDatabase(server, fact.database, fact.password, file),
      );
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
  const names = new Set<string>();
  const head = await revParse(ctx.repo, 'HEAD');
  for (const [name, config] of Object.entries(ctx.config.services ?? {})) {
    if (config.kind !== 'postgres' || !config.seed || !head) continue;
    try {
      names.add(
        templateName(ctx.key, await seedKey(ctx, { path: ctx.repo.root, baseCommit: head }, name, config.seed)),
      );
    } catch {
      // a seed that cannot be read now makes no template now
    }
  }
  return names;
}
