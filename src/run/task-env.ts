import { createHash } from 'node:crypto';
import { WarrenError } from '../errors.js';
import type { Task, TaskState } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { portsOf } from './ports.js';
import type { RunKind } from './records.js';

/** The variables every supervised command of a task sees (setup and teardown included). */
export function taskEnv(ctx: ProjectContext, task: Task): Record<string, string> {
  const env: Record<string, string> = {
    WARREN_TASK_ID: task.id,
    WARREN_WORKSPACE: task.path,
    WARREN_BRANCH: task.branch,
    WARREN_DB_NAME: dbNameFor(ctx.key, task.id),
  };
  const block = portsOf(ctx.store, ctx.key, task.id);
  if (block) {
    const ports = Array.from({ length: block.count }, (_, i) => block.first + i);
    env.WARREN_PORT = String(block.first);
    env.PORT = String(block.first);
    env.WARREN_PORTS = ports.join(',');
  }
  // What the features add (each service's DATABASE_URL, REDIS_URL, …): the task's own, never the main checkout's.
  return Object.assign(env, ...ctx.lifecycle.reach.map((step) => step.env(ctx, task)));
}

/**
 * A database name unique to the task on this machine: a readable part plus a hash of project
 * and ID (two projects may both have a task `api`). Lowercase [a-z0-9_], at most 63
 * characters (PostgreSQL's limit; MySQL allows 64). Pure.
 */
export function dbNameFor(projectKey: string, taskId: string): string {
  const hash = createHash('sha256').update(`${projectKey}\0${taskId}`).digest('hex').slice(0, 10);
  const slug = taskId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  return `warren_${slug}${slug ? '_' : ''}${hash}`;
}

/** Which task states a kind of run may start from. */
const RUNNABLE: Record<RunKind, readonly TaskState[]> = {
  exec: ['ready', 'landed'],
  agent: ['ready', 'landed'],
  verify: ['ready', 'landed'],
  setup: ['creating', 'ready', 'setup_failed', 'landed'],
  teardown: ['removing', 'ready', 'setup_failed', 'landed'],
  // Wherever `checkpoint` may commit (src/land/task.ts).
  hook: ['ready', 'setup_failed', 'landed'],
};

export function assertRunnable(task: Task, kind: RunKind): void {
  if (RUNNABLE[kind].includes(task.state)) return;
  const hint =
    task.state === 'setup_failed'
      ? `Its setup failed; fix the cause and run \`warren setup ${task.id}\` (the setup log is shown by \`warren show ${task.id}\`).`
      : task.state === 'remove_failed' || task.state === 'removing'
        ? `It is being removed or its removal failed; finish it with \`warren rm ${task.id}\`.`
        : `Wait for the task to be ready (\`warren show ${task.id}\`).`;
  throw new WarrenError(
    'TASK_STATE',
    `task ${task.id} is in state ${task.state}, so warren will not run a command in it; nothing was run.`,
    { hint },
  );
}
