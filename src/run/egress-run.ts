import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { startEgressProxy, type EgressProxy } from './egress.js';

/** The run's egress proxy (egress.ts): every refused host:port is a warning event, once per run. Its socket under `parent` (a container's bound folder). */
export async function startEgress(
  ctx: ProjectContext,
  task: Task,
  runId: string,
  allow: string[],
  parent?: string,
): Promise<EgressProxy> {
  const proxy = await startEgressProxy(
    allow,
    (host, port, via, reason) => {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'sandbox.egress_refused',
        level: 'warn',
        message: `sandbox: run ${runId} tried to reach ${host}:${port}; refused: ${reason}`,
        data: { runId, host, port, via, reason },
      });
    },
    parent,
    ctx.store.home,
  );
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'sandbox.egress_allowed',
    message: `sandbox: run ${runId} may reach ${allow.length > 0 ? allow.join(', ') : 'no host'} through warren's proxy`,
    data: { runId, allow, proxy: proxy.socket },
  });
  return proxy;
}
