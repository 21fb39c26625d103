import { runnerFor } from '../config/runner.js';
import { assertTrusted } from '../trust/trust.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { taskEnv } from '../run/task-env.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { startStep } from '../workspace/reporter.js';
import type { BeforeRunStep, CreateStep, GcStep, ReachStep, RemoveStep } from '../workspace/types.js';
import { daemonState } from '../run/daemon.js';
import { rewriteCopiedEnv, writeEnvFile } from './env-file.js';
import type { ServiceFact } from './facts.js';
import { collectServices } from './gc.js';
import { listeningPort, processOf, serviceKind } from './kinds.js';
import { dropTaskDatabases, dumpTaskDatabases, serverFor } from './postgres-task.js';
import { processDirs, startProcess, stopProcess } from './processes.js';
import { checkServicePorts, serviceDir, serviceEnv, serviceLog, serviceLoopback, servicesOf } from './task-services.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';

/**
 * The services' steps in a task's life: made at `new` after the port block and before setup
 * (which sees their variables), started again before any command when one had died, stopped
 * and dropped at `rm` after teardown (which may still use them), collected by `gc`.
 */

export const servicesCreate: CreateStep = {
  name: 'services',
  async check(ctx, options) {
    const services = servicesOf(ctx);
    if (services.length === 0) return;
    // A task in a cluster: its processes run in its pod (what this machine has installed is not
    // theirs), and so does a server of its own for each database (src/services/pg-pod.ts).
    const inPod = runnerFor(ctx.config, options).startsWith('k8s:');
    checkServicePorts(ctx, inPod);
    assertTrusted(ctx, ['service'], 'Nothing was created.');
    // A server that is not installed says what to install, before anything is made.
    for (const [, config] of services) serviceKind(config.kind).installed(ctx, config, inPod);
    for (const [name, config] of services) await serviceKind(config.kind).check(ctx, name, config);
  },
  async run(ctx, task, options) {
    const services = servicesOf(ctx);
    if (services.length === 0) return;
    // A task on another machine: its services are the host's, made and started there by the
    // host's own `new`, next to the code its commands run (none here: it would run the task's
    // code on this machine, and take its ports twice).
    if (remoteHostName(task) !== null) return;
    const facts: Record<string, ServiceFact> = {};
    for (const [name, config] of services) {
      facts[name] = await serviceKind(config.kind).make(ctx, task, name, config, options.restoredFrom);
      ctx.store.mergeData(ctx.key, task.id, { services: { ...facts } });
    }
    const made = ctx.store.getTask(ctx.key, task.id) ?? task;
    const rewritten = rewriteCopiedEnv(ctx, made);
    if (rewritten.length > 0) ctx.store.mergeData(ctx.key, task.id, { servicesEnvRewritten: rewritten });
    await writeEnvFile(ctx, made);
    for (const [name, config] of services) {
      const fact = made.data.services?.[name];
      if (fact && processOf(fact)?.startsWithTask(config)) await startAndRecord(ctx, made, name);
    }
  },
};

/** Starts a process service, and records that it did. */
export async function startAndRecord(ctx: ProjectContext, task: Task, name: string): Promise<boolean> {
  const config = ctx.config.services?.[name];
  const fact = task.data.services?.[name];
  const proc = fact ? processOf(fact) : null;
  const waits = config && proc ? proc.ready(config) !== null : false;
  const step = startStep(
    ctx.reporter,
    `service ${name}: starting${proc?.label ? ` ${proc.label}` : ''}${waits ? ' (until it is ready)' : ''}`,
  );
  let outcome: Awaited<ReturnType<typeof startProcess>>;
  try {
    outcome = await startProcess(ctx, task, name, taskEnv(ctx, task));
  } catch (err) {
    step.fail();
    throw err;
  }
  const { started, readyMs } = outcome;
  step.done(started ? undefined : 'already running');
  if (!started) return false;
  const port = fact ? listeningPort(fact) : null;
  const log = serviceLog(ctx, task.id, name);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.started',
    message: `service ${name} started${port ? ` on port ${port}` : ''}${readyMs !== null ? `, ready in ${readyMs} ms` : ''} (log ${log})`,
    data: { name, service: ctx.config.services?.[name]?.kind ?? 'run', port, log, readyMs },
  });
  return true;
}

/** Stops every process service of the task; what would not stop, in words. */
export async function stopAll(ctx: ProjectContext, taskId: string): Promise<string[]> {
  const problems: string[] = [];
  for (const name of processDirs(ctx, taskId)) {
    const stopped = await stopProcess(ctx, taskId, name);
    if (stopped.survivors.length > 0)
      problems.push(`service ${name}: pid(s) ${stopped.survivors.join(', ')} still running after SIGKILL`);
    else if (stopped.leftInPod) problems.push(`service ${name}: ${stopped.leftInPod}`);
    else if (stopped.wasRunning) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId,
        kind: 'service.stopped',
        message: `service ${name} stopped${stopped.forced ? ' (SIGKILL after the grace)' : ''}`,
        data: { name, forced: stopped.forced },
      });
    }
  }
  return problems;
}

/**
 * `rm`: the processes stop with the rest of what runs in the workspace (release: a `rm` cut off
 * after it settles back, and the next use starts them again); the databases are dropped only
 * past removal's point of no return (after-remove, which a crash rolls forward), so a task that
 * is kept is never a task without its database. A drop that fails fails the `rm`, whose next
 * run (or `gc`) drops what the ledger still names.
 */
export const servicesRemove: RemoveStep = {
  name: 'services',
  async save(ctx, task, stamp) {
    await dumpTaskDatabases(ctx, task, stamp);
  },
  async release(ctx, task) {
    return stopAll(ctx, task.id);
  },
  async afterRemove(ctx, task) {
    // A `new` undone before its workspace existed has had no release: its processes stop here too.
    const problems = [...(await stopAll(ctx, task.id)), ...(await dropTaskDatabases(ctx, task.id))];
    if (problems.length > 0) throw new Error(`task ${task.id}'s services: ${problems.join('; ')}`);
    removeTreeOrThrow(serviceDir(ctx, task.id), { inside: ctx.store.home });
  },
};

/**
 * Before any command of the task: warren's PostgreSQL server running (started again, and
 * reported, when it had been killed), a redis that ended by itself reported and started again;
 * a `run:` service that ended by itself is reported as crashed (once) and left for
 * `warren service start` — as is anything the user stopped.
 */
export const servicesBeforeRun: BeforeRunStep = {
  name: 'services',
  // A service starting (src/run/service-runner.ts) goes through the task's boundary, whose
  // before-run steps would start a crashed redis again from inside that start: not this step.
  beforeServices: false,
  async run(ctx, task) {
    const facts = task.data.services;
    if (!facts) return [];
    if (Object.values(facts).some((f) => !processOf(f))) {
      await serverFor(ctx, task.id);
      // A server started again may be on another port (its own was taken meanwhile): the file says where.
      await writeEnvFile(ctx, task);
    }
    for (const [name] of servicesOf(ctx)) {
      const fact = facts[name];
      const proc = fact ? processOf(fact) : null;
      if (!proc) continue;
      const state = daemonState(serviceDir(ctx, task.id, name));
      if (state.state !== 'exited') continue;
      reportCrash(ctx, task, name, state.exitCode, state.record.startedAt);
      if (proc.restartsAfterCrash) await startAndRecord(ctx, task, name);
    }
    return [];
  },
};

/** A process service found ended by itself: an event, once per start. */
export function reportCrash(
  ctx: ProjectContext,
  task: Task,
  name: string,
  exitCode: number | null,
  startedAt: string,
): void {
  const seen = ctx.store
    .taskEvents(ctx.key, task.id, 200)
    .some((e) => e.kind === 'service.crashed' && (e.data as { startedAt?: string }).startedAt === startedAt);
  if (seen) return;
  const log = serviceLog(ctx, task.id, name);
  const message = `service ${name} (started ${startedAt}) had ended by itself (${exitCode === null ? 'killed' : `exit ${exitCode}`}); log ${log}`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.crashed',
    level: 'warn',
    message,
    data: { name, exitCode, log, startedAt },
  });
  ctx.reporter.line(`warren: ${message}`);
}

/** Each service's variables and loopback port, for every process of the task the runner starts. */
export const servicesReach: ReachStep = { name: 'services', env: serviceEnv, addresses: serviceLoopback };

export const servicesGc: GcStep = { name: 'services', collect: (ctx) => collectServices(ctx) };
