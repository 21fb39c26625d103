import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { ServiceFact } from './facts.js';
import { processOf, serviceKind } from './kinds.js';
import { dropTaskDatabases } from './postgres-task.js';
import { startAndRecord, stopAll } from './service-steps.js';
import { serviceDir, servicesOf } from './task-services.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';

/**
 * The merge queue's gate tests the integrated commit against services of its own: a fresh
 * database cloned from the template (of the integrated commit's seed; in a cluster's claim, a
 * server of its own in its pod, seeded there), a redis and the `always` processes, exactly as a
 * task gets them, and never a task's. They go when the gate is done.
 * `gate` is the integration workspace as a task (it has a port block, and no row).
 */
export async function startGateServices(ctx: ProjectContext, gate: Task): Promise<Record<string, ServiceFact>> {
  const facts: Record<string, ServiceFact> = {};
  for (const [name, config] of servicesOf(ctx)) {
    facts[name] = await serviceKind(config.kind).make(ctx, gate, name, config, undefined);
  }
  const withServices: Task = { ...gate, data: { ...gate.data, services: facts } };
  for (const [name, config] of servicesOf(ctx)) {
    const fact = facts[name];
    if (fact && processOf(fact)?.startsWithTask(config)) await startAndRecord(ctx, withServices, name);
  }
  return facts;
}

/** Everything the gate's services were: stopped, dropped; the problems in words. */
export async function stopGateServices(ctx: ProjectContext, gateId: string): Promise<string[]> {
  const problems = [...(await stopAll(ctx, gateId)), ...(await dropTaskDatabases(ctx, gateId))];
  if (problems.length === 0) removeTreeOrThrow(serviceDir(ctx, gateId), { inside: ctx.store.home });
  return problems;
}
