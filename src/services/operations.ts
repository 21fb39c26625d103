import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { assertRunnable } from '../run/task-env.js';
import { assertTrusted } from '../trust/trust.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { requireTask } from '../workspace/tasks.js';
import { daemonState } from '../run/daemon.js';
import { shellExports, taskVariables } from './env-file.js';
import { clusterRunning } from './pg-server.js';
import { serverFor } from './postgres-task.js';
import { reportCrash, startAndRecord } from './service-steps.js';
import { stopProcess } from './processes.js';
import { serviceConfig, serviceDir, serviceLog, serviceStatuses, type ServiceStatus } from './task-services.js';
import { processOf, serviceKind } from './kinds.js';

/** `warren service start|stop|logs ID NAME`, `warren env ID`, and the services `show` lists. */

/** Every service of the task with its state; a process service found ended by itself is reported (once) as crashed. */
export function taskServices(ctx: ProjectContext, task: Task): ServiceStatus[] {
  const statuses = serviceStatuses(ctx, task, clusterRunning(ctx.store.home));
  for (const s of statuses) {
    if (s.state !== 'crashed') continue;
    const st = daemonState(serviceDir(ctx, task.id, s.name));
    if (st.state === 'exited') reportCrash(ctx, task, s.name, st.exitCode, st.record.startedAt);
  }
  return statuses;
}

function statusOf(ctx: ProjectContext, task: Task, name: string): ServiceStatus {
  const s = taskServices(ctx, requireTask(ctx, task.id)).find((x) => x.name === name);
  if (!s) throw new Error(`service ${name} vanished`);
  return s;
}

/** Starts one service (a crashed one again; postgres: its server, when warren's own was stopped). */
export async function startService(ctx: ProjectContext, rawId: string, name: string): Promise<ServiceStatus> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `service start ${name}`, async () => {
    const task = requireTask(ctx, id);
    serviceConfig(ctx, task, name);
    assertRunnable(task, 'exec');
    assertTrusted(ctx, ['service'], `Nothing was started; task ${id} is as it was.`, [name]);
    const fact = task.data.services?.[name];
    if (!fact) {
      throw new WarrenError(
        'SERVICE_UNKNOWN',
        `task ${id} was made before service ${name} was in warren.yaml, so it has none; nothing was started.`,
        {
          hint: `Make the task again (\`warren rm ${id} --discard\`, then \`warren restore ${id}\`) to give it every service warren.yaml lists now.`,
        },
      );
    }
    // A database is started by starting its server; a process of the task's own (a server in its pod too), itself.
    if (!processOf(fact)) await serverFor(ctx, id);
    else {
      const st = daemonState(serviceDir(ctx, id, name));
      if (st.state === 'exited') reportCrash(ctx, task, name, st.exitCode, st.record.startedAt);
      await startAndRecord(ctx, task, name);
    }
    return statusOf(ctx, task, name);
  });
}

/** Stops one process service (a database stays: it goes with the task). */
export async function stopService(ctx: ProjectContext, rawId: string, name: string): Promise<ServiceStatus> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `service stop ${name}`, async () => {
    const task = requireTask(ctx, id);
    const config = serviceConfig(ctx, task, name);
    const fact = task.data.services?.[name];
    if (fact ? !processOf(fact) : !serviceKind(config.kind).process) {
      throw new WarrenError(
        'SERVICE_FAILED',
        `service ${name} is a database on a server tasks share: it is not stopped alone; nothing was changed.`,
        {
          hint: `Its database goes with the task (\`warren rm ${id}\`); \`warren gc\` stops warren's server once no task uses it.`,
        },
      );
    }
    const stopped = await stopProcess(ctx, id, name);
    if (stopped.survivors.length > 0) {
      throw new WarrenError(
        'SERVICE_FAILED',
        `service ${name} of task ${id} would not stop: pid(s) ${stopped.survivors.join(', ')} are still running.`,
        {
          hint: 'Kill them by hand (kill -9 PID).',
        },
      );
    }
    if (stopped.leftInPod) {
      throw new WarrenError(
        'SERVICE_FAILED',
        `service ${name} of task ${id} was stopped here, and its pod says: ${stopped.leftInPod}.`,
        {
          hint: `\`warren service stop ${id} ${name}\` asks again; \`warren rm ${id}\` deletes the pod with its claim.`,
        },
      );
    }
    if (stopped.wasRunning) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'service.stopped',
        message: `service ${name} stopped${stopped.forced ? ' (SIGKILL after the grace)' : ''}`,
        data: { name, forced: stopped.forced },
      });
    }
    return statusOf(ctx, task, name);
  });
}

/** Where a service's log is, for `logs` to print or follow. */
export function serviceLogFile(ctx: ProjectContext, rawId: string, name: string): string {
  const task = requireTask(ctx, validateTaskId(rawId));
  const status = taskServices(ctx, task).find((s) => s.name === name) ?? (serviceConfig(ctx, task, name) && null);
  const log = status?.log ?? serviceLog(ctx, task.id, name);
  if (!fs.existsSync(log)) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `service ${name} of task ${task.id} has no log yet (${log}): it never started.`,
      {
        hint: `Start it: \`warren service start ${task.id} ${name}\`.`,
      },
    );
  }
  return log;
}

/** `warren env ID`: the task's variables, as `export` lines for `eval` and as data. */
export function taskEnvironment(ctx: ProjectContext, rawId: string): { env: Record<string, string>; shell: string } {
  const task = requireTask(ctx, validateTaskId(rawId));
  const env = taskVariables(ctx, task);
  return { env, shell: shellExports(env) };
}
