import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CommandSpec, PostgresServiceConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { treeEntry } from '../git/trees.js';
import { commandArgv } from '../run/commands.js';
import { runInTask, type RunOutcome } from '../run/execute.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import { acquireWaiting } from '../util/lockfile.js';
import { isInside } from '../util/paths.js';
import type { ProjectContext } from '../workspace/context.js';
import { startStep } from '../workspace/reporter.js';
import { templateName } from './names.js';
import { buildTemplate, templateComplete } from './pg-database.js';
import { clusterDir, type PgServer } from './pg-server.js';
import { pgEnv, pgTool, pgUrl } from './pg-sql.js';

/**
 * A template built from a seed (`seed: { sql }` or `seed: { run, inputs }`): keyed by the seed's
 * content, built once under a lock, the seed run inside the task's boundary as the template's
 * own role (src/run/boundary.ts): psql's `\!` and a seed command alike run where the task's
 * commands do, and reach the server through the sandbox's bridge.
 */

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

export function seedFile(task: { path: string }, name: string, rel: string): string {
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
export async function seededTemplate(
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
          argv: [pgTool('psql'), ...psqlSeedArgs(seedFile(task, name, seed.sql))],
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
      await runSeedCommand(
        ctx,
        task,
        name,
        seed.run,
        { [config.env]: pgUrl(conn), DATABASE_URL: pgUrl(conn) },
        {
          reach,
          ...timeout,
        },
      );
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
/** psql's arguments for a seed's SQL file: no psqlrc, quiet, the first error ends it, one transaction. */
export function psqlSeedArgs(file: string): string[] {
  return ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-f', file];
}

/**
 * A seed's `run:` command in the task's sandbox (for a task in a cluster, its pod), with the
 * database's URL in its variables; its output shown as setup's is. A failure is seedFailed.
 */
export async function runSeedCommand(
  ctx: ProjectContext,
  task: Task,
  name: string,
  command: CommandSpec,
  env: Record<string, string>,
  options: { reach?: string[]; timeoutMs: number },
): Promise<void> {
  const outcome = await runInTask(ctx, task, {
    kind: 'setup',
    label: `seed ${name}`,
    argv: commandArgv(command),
    stdin: 'ignore',
    output: { stdout: ctx.reporter.output.stderr, stderr: ctx.reporter.output.stderr },
    env,
    ...(options.reach ? { reach: options.reach } : {}),
    timeoutMs: options.timeoutMs,
    skipStateCheck: true,
  });
  if (outcome.exitCode !== 0)
    throw seedFailed(task, name, outcome.reason ?? `exit ${outcome.exitCode ?? outcome.signal}`, outcome.log);
}

export function psqlFailure(outcome: RunOutcome): string {
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

export function seedFailed(task: Task, name: string, why: string, log: string | null): WarrenError {
  return new WarrenError(
    'SERVICE_FAILED',
    `the seed of service ${name} failed (${why})${log ? `; its log is ${log}` : ''}, so task ${task.id}'s database could not be made.`,
    {
      hint: 'Fix the seed and run `warren new` again; the half-built template is dropped then.',
    },
  );
}
