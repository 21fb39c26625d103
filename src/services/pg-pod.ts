import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PostgresServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { fileAt } from '../git/trees.js';
import { runInTask } from '../run/execute.js';
import {
  POD_CANNOT_RUN_AS_ROOT,
  POD_HAS_NO_POSTGRES,
  podPgClientArgv,
  podPgExec,
  podPgSaid,
} from '../run/k8s/pod-postgres.js';
import { servicePlace } from '../run/service-runner.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { reportStep } from '../workspace/reporter.js';
import type { ServiceFact } from './facts.js';
import { taskDbName } from './names.js';
import { onDatabase } from './pg-database.js';
import { roleLimitsSql, type RoleLimits } from './pg-limits.js';
import { psqlFailure, psqlSeedArgs, runSeedCommand, seedFailed, seedFile, seedKey } from './pg-seed.js';
import { PgError, pgDump, pgIdent, pgLiteral, pgQuery } from './pg-sql.js';
import { currentSeedKeys, dumpFor, serverFor, serviceLimits } from './postgres-task.js';
import { processPort } from './processes.js';
import { startAndRecord } from './service-steps.js';
import { serviceDir, serviceLog } from './task-services.js';
import { daemonState } from '../run/daemon.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';
import { writeFileAtomic } from '../util/atomic.js';

/**
 * A postgres service of a task in a cluster: a PostgreSQL server of the task's own in its pod
 * (src/run/k8s/pod-postgres.ts), started as the service's process there — held, logged here,
 * started again after a crash, stopped by `service stop`, `rm` and `gc` like a redis in a pod —
 * and its database made in it as on warren's server here: a role of its own (its limits as
 * warren.yaml asks, held to the user's caps), a database it owns, filled from the dump `restore`
 * brings back, from a template database (dumped here, loaded there as the task's role), or by
 * its seed run in the pod — the seed is the repository's code, which runs where the task's
 * commands do, and a pod does not reach a server of this machine, so no template is built on the
 * server here: what the first run made is dumped in its pod and kept here for the next tasks
 * (seededDumpDir). `rm --discard` dumps it there and keeps the dump here, as for a local task.
 */

type PodFact = Extract<ServiceFact, { server: 'pod' }>;

export async function createPodDatabase(
  ctx: ProjectContext,
  task: Task,
  name: string,
  config: PostgresServiceConfig,
  restoreAt: string | undefined,
): Promise<ServiceFact> {
  const started = Date.now();
  const database = taskDbName(ctx.key, task.id, name);
  const limits = serviceLimits(ctx, task, name, config);
  // What it is made from, read here before anything is started.
  const dump = restoreAt !== undefined ? dumpFor(ctx, task.id, name, restoreAt) : null;
  let from: PodFact['from'];
  let load: Buffer | null = null;
  if (dump) {
    load = fs.readFileSync(dump);
    from = { kind: 'dump', file: dump };
  } else if (config.template) {
    load = await templateDump(ctx, task, name, config.template);
    from = { kind: 'template', name: config.template, seed: null };
  } else if (config.seed) {
    const key = await podSeedKey(ctx, task, name, config.seed);
    from = { kind: 'seed', seed: key };
    const seeded = path.join(seededDumpDir(ctx), `${key}.sql`);
    if (fs.existsSync(seeded)) load = fs.readFileSync(seeded);
  } else from = { kind: 'empty' };
  const fact: PodFact = {
    kind: 'postgres',
    database,
    password: randomBytes(18).toString('hex'),
    server: 'pod',
    port: processPort(ctx, task, name),
    from,
  };
  // Recorded before its server starts (a task's row; the gate's integration workspace has none):
  // what starts it, and any command before `new` is done, read the fact from the task.
  const current = ctx.store.getTask(ctx.key, task.id) ?? task;
  const services = { ...(current.data.services ?? {}), [name]: fact };
  ctx.store.mergeData(ctx.key, task.id, { services });
  const recorded: Task = { ...current, data: { ...current.data, services } };
  try {
    await startAndRecord(ctx, recorded, name);
  } catch (err) {
    throw cannotRunInPod(task, name, err) ?? err;
  }
  const step = (what: string, work: () => Promise<void>) =>
    reportStep(ctx.reporter, `service ${name}: ${what}`, work).catch((err: unknown) => {
      if (err instanceof WarrenError) throw err;
      throw new WarrenError(
        'SERVICE_FAILED',
        `service ${name} of task ${task.id}: its database could not be made in the pod: ${err instanceof Error ? err.message : String(err)}.`,
        {
          hint: `See its server's log (${serviceLog(ctx, task.id, name)}); fix the cause and run the command again.`,
          cause: err,
        },
      );
    });
  await step('creating its database in the pod', () => makeDatabase(ctx, task, name, fact, limits));
  const loaded =
    from.kind === 'dump'
      ? `the dump ${from.file}`
      : from.kind === 'template'
        ? `template ${from.name}`
        : `its seed's database (kept from its first run, ${from.kind === 'seed' ? from.seed.slice(0, 12) : ''})`;
  if (load) {
    const source = load;
    await step(`loading ${loaded} in the pod`, () => loadDump(ctx, task, name, fact, source));
  } else if (config.seed && from.kind === 'seed') {
    const key = from.seed;
    await step('running its seed in the pod (once per seed)', () => runSeed(ctx, recorded, name, fact, config));
    await step("keeping its seed's database here for the next tasks", () => keepSeeded(ctx, task, name, fact, key));
  }
  const what = load
    ? loaded
    : from.kind === 'seed'
      ? `its seed, run in the pod (kept as ${from.seed.slice(0, 12)} for the next tasks)`
      : 'creating an empty database';
  const ms = Date.now() - started;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.database_created',
    message: `service ${name}: database ${database} (owned by role ${database}) on its own server in the task's pod, from ${what} in ${ms} ms`,
    data: { name, database, from: what, ms },
  });
  return fact;
}

/** Where the task's server runs (its pod), once started. */
function placeOf(ctx: ProjectContext, task: Task, name: string) {
  const place = servicePlace(serviceDir(ctx, task.id, name));
  if (!place) throw new Error(`service ${name} of task ${task.id} is not running in a pod`);
  return place;
}

/** As the pod server's superuser: the task's role (its password, its limits) and its database. */
async function makeDatabase(
  ctx: ProjectContext,
  task: Task,
  name: string,
  fact: PodFact,
  limits: RoleLimits,
): Promise<void> {
  const role = pgIdent(fact.database);
  const sql = `CREATE ROLE ${role} LOGIN PASSWORD ${pgLiteral(fact.password)};
DO $$ BEGIN ${roleLimitsSql(fact.database, limits)} END $$;
CREATE DATABASE ${role} OWNER ${role} TEMPLATE template0 ENCODING 'UTF8';
REVOKE ALL ON DATABASE ${role} FROM PUBLIC;
`;
  const argv = podPgClientArgv('psql', fact, { user: 'warren', database: 'postgres' }, [
    '-X',
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
  ]);
  const r = await podPgExec(ctx, placeOf(ctx, task, name), argv, Buffer.from(sql));
  if (r.status !== 0) throw new PgError(podPgSaid(r), 'CREATE ROLE, CREATE DATABASE');
}

/** A plain-SQL dump (pg_dump's) loaded in the pod as the task's own role, in one transaction, never as a superuser. */
async function loadDump(ctx: ProjectContext, task: Task, name: string, fact: PodFact, dump: Buffer): Promise<void> {
  const argv = podPgClientArgv('psql', fact, { user: fact.database, database: fact.database }, [
    '-X',
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
    '--single-transaction',
  ]);
  // The load is warren's: the role's statement_timeout does not cut a long COPY short.
  const input = Buffer.concat([Buffer.from('SET statement_timeout = 0;\n'), dump]);
  const r = await podPgExec(ctx, placeOf(ctx, task, name), argv, input);
  if (r.status !== 0) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id}: its dump could not be loaded in the pod as the task's own role ${fact.database} (${podPgSaid(r)}); nothing was created, and the dump is kept as it was.`,
      {
        hint: "A dump is loaded with the task role's rights, never a superuser's: fix what the message names, then run the command again.",
      },
    );
  }
}

/** A template database (`template:`, a database of the server here) as plain SQL, without owners or grants. */
async function templateDump(ctx: ProjectContext, task: Task, name: string, template: string): Promise<Buffer> {
  const server = await serverFor(ctx, task.id);
  // A template that takes no connection is cloned here (CREATE DATABASE … TEMPLATE), never read: pg_dump cannot reach it.
  const connectable = await pgQuery(
    server.admin,
    `SELECT datallowconn FROM pg_database WHERE datname = ${pgLiteral(template)}`,
  );
  if (connectable !== 't') {
    throw new WarrenError(
      'SERVICE_UNAVAILABLE',
      `service ${name} of task ${task.id}: template ${template} takes no connection (datallowconn is off), so it cannot be dumped for the task's pod; nothing was created.`,
      {
        hint: `Let it be read (\`ALTER DATABASE ${template} WITH ALLOW_CONNECTIONS true\`), or build the database from \`seed:\`, which runs in the pod.`,
      },
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-template-'));
  try {
    const file = path.join(dir, 'template.sql');
    await reportStep(ctx.reporter, `service ${name}: dumping template ${template} here`, () =>
      pgDump(onDatabase(server, template), file, ['--no-privileges']),
    );
    return fs.readFileSync(file);
  } finally {
    removeTreeOrThrow(dir, { inside: os.tmpdir() });
  }
}

/** The seed, in the pod (a run of the runner there, as the task's commands), as the task's own role. */
async function runSeed(
  ctx: ProjectContext,
  task: Task,
  name: string,
  fact: PodFact,
  config: PostgresServiceConfig,
): Promise<void> {
  const seed = config.seed;
  if (!seed) return;
  const timeoutMs =
    'run' in seed && seed.timeout ? parseDuration(seed.timeout, `services.${name}.seed.timeout`) : 30 * 60_000;
  if ('sql' in seed) {
    // The pod's clone is the workspace's: the file at the same path, relative to it.
    const rel = seedPath(task, name, seed.sql);
    const outcome = await runInTask(ctx, task, {
      kind: 'setup',
      label: `seed ${name}`,
      argv: podPgClientArgv('psql', fact, { user: fact.database, database: fact.database }, psqlSeedArgs(rel)),
      stdin: 'ignore',
      output: { stdout: null, stderr: null },
      timeoutMs,
      skipStateCheck: true,
    });
    if (outcome.exitCode !== 0) throw seedFailed(task, name, psqlFailure(outcome), outcome.log);
    return;
  }
  const url = `postgresql://${fact.database}:${fact.password}@127.0.0.1:${fact.port}/${fact.database}`;
  await runSeedCommand(ctx, task, name, seed.run, { [config.env]: url, DATABASE_URL: url }, { timeoutMs });
}

/**
 * The seed's content key, as a local task's (src/services/pg-seed.ts). The gate's integration
 * workspace in a claim holds no files here (its commit went to the pod): a SQL seed is then read
 * from that commit.
 */
async function podSeedKey(
  ctx: ProjectContext,
  task: Task,
  name: string,
  seed: NonNullable<PostgresServiceConfig['seed']>,
): Promise<string> {
  if (!('sql' in seed) || fs.existsSync(path.resolve(task.path, seed.sql))) return seedKey(ctx, task, name, seed);
  const content = await fileAt(ctx.repo, task.baseCommit, seedPath(task, name, seed.sql));
  if (content === null) seedFile(task, name, seed.sql); // throws: not a file of the workspace
  return createHash('sha256')
    .update('sql\0')
    .update(content ?? '')
    .digest('hex');
}

/**
 * The cluster's template of a seed: the database its seed made in the first task's pod, dumped
 * there before anything else ran in it and kept here, keyed by the seed's content as a template
 * is (`$WARREN_HOME/services/<project>/.seeded/<key>.sql`); the next tasks (and gates) with that
 * seed load it instead of running the seed. `gc` removes the ones the current seed no longer makes.
 */
export function seededDumpDir(ctx: ProjectContext): string {
  return path.join(ctx.store.home, 'services', ctx.key, '.seeded');
}

/** `gc`: the kept seeds' databases that the current seed does not make and no task was made from. */
export async function staleSeededDumps(ctx: ProjectContext, tasks: readonly Task[]): Promise<string[]> {
  const used = await currentSeedKeys(ctx);
  for (const t of tasks)
    for (const f of Object.values(t.data.services ?? {}))
      if (f.kind === 'postgres' && f.from.kind === 'seed') used.add(f.from.seed);
  const dir = seededDumpDir(ctx);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.sql') && !used.has(n.slice(0, -4))).map((n) => path.join(dir, n));
}

/** A SQL seed's path relative to the workspace (and the pod's clone), refused when it leaves it. */
function seedPath(task: Task, name: string, rel: string): string {
  const inside = path.relative(task.path, path.resolve(task.path, rel));
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) seedFile(task, name, rel);
  return inside.split(path.sep).join('/');
}

/** The database its seed just made, dumped in the pod as the task's role and kept here (written whole, then renamed). */
async function keepSeeded(ctx: ProjectContext, task: Task, name: string, fact: PodFact, key: string): Promise<void> {
  const r = await podPgExec(ctx, placeOf(ctx, task, name), dumpArgv(fact));
  if (r.status !== 0) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id}: the database its seed made could not be dumped in the pod (${podPgSaid(r)}); nothing was created.`,
      { hint: "A dump is taken with the task role's rights: the seed must leave its database readable to it." },
    );
  }
  fs.mkdirSync(seededDumpDir(ctx), { recursive: true, mode: 0o700 });
  writeFileAtomic(path.join(seededDumpDir(ctx), `${key}.sql`), r.stdout, { mode: 0o600 });
}

function dumpArgv(fact: PodFact): string[] {
  return podPgClientArgv('pg_dump', fact, { user: fact.database, database: fact.database }, [
    '--no-password',
    '--no-owner',
  ]);
}

/** `rm --discard`: the database dumped in the pod (its server started again if it was not running), the dump written here. */
export async function dumpPodDatabase(
  ctx: ProjectContext,
  task: Task,
  name: string,
  fact: PodFact,
  file: string,
): Promise<void> {
  if (daemonState(serviceDir(ctx, task.id, name)).state !== 'running') await startAndRecord(ctx, task, name);
  const r = await podPgExec(ctx, placeOf(ctx, task, name), dumpArgv(fact));
  if (r.status !== 0) throw new PgError(podPgSaid(r), 'pg_dump');
  fs.writeFileSync(file, r.stdout, { mode: 0o600 });
}

/** A start the pod cannot make (it runs as root and may not change its user; its image has no PostgreSQL), said as such. */
function cannotRunInPod(task: Task, name: string, err: unknown): WarrenError | null {
  const said = err instanceof Error ? err.message : '';
  const root = said.includes(POD_CANNOT_RUN_AS_ROOT);
  if (!root && !said.includes(POD_HAS_NO_POSTGRES)) return null;
  return new WarrenError(
    'SERVICE_UNAVAILABLE',
    root
      ? `service ${name} of task ${task.id} is a PostgreSQL server in the task's pod, and PostgreSQL refuses to run as root: the pod runs as root and may not change its user (no CAP_SETUID); nothing was lost (what was made for it is undone, its claim with it).`
      : `service ${name} of task ${task.id} is a PostgreSQL server in the task's pod, and the pod's image has none (postgres and initdb: neither on PATH nor in /usr/lib/postgresql/*/bin); nothing was lost (what was made for it is undone, its claim with it).`,
    {
      hint: root
        ? "Run the sandbox's container as a user of its own: `securityContext: {runAsUser: 70, runAsNonRoot: true}` in the cluster's warren SandboxTemplate (`warren help runners`); or run the task here (`--runner local`)."
        : "Install PostgreSQL's server in the image of the cluster's warren SandboxTemplate; or run the task here (`--runner local`).",
      cause: err,
    },
  );
}
