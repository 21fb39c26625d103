import { diffTask } from '../review/diff.js';
import type { ProjectContext } from '../workspace/context.js';
import { removeTask, type RemoveOptions } from '../workspace/remove.js';
import { requireTask } from '../workspace/tasks.js';

/** The answers about what a task changed and where its work went, shaped once (see tasks.ts). */

/** `land` that waited: the task landed, with what it left out. */
export function landedView<R extends object>(result: R) {
  return { state: 'landed' as const, ...result };
}

/**
 * What the task changed, in one answer for an agent: the committed patch (`diff --committed`)
 * and the uncommitted and untracked files beside it (`diff --uncommitted --stat`'s files).
 */
export async function changesView(ctx: ProjectContext, rawId: string) {
  const { id } = requireTask(ctx, rawId);
  // One after the other: of a task on a host, each fetches its commits from there first.
  const committed = await diffTask(ctx, id, { scope: 'committed' });
  const uncommitted = await diffTask(ctx, id, { scope: 'uncommitted', stat: true });
  return { committed, uncommitted: uncommitted.files };
}

export type RemovedView = Awaited<ReturnType<typeof removeView>>;

/**
 * `rm`: removes the task, then says what removal skipped or could not do (an untrusted or failed
 * teardown) on the reporter, never only in the log, and lists what went with its services.
 */
export async function removeView(ctx: ProjectContext, rawId: string, options: RemoveOptions) {
  const since = ctx.store.lastEventSeq();
  const result = await removeTask(ctx, rawId, options);
  // Read by sequence, not as the task's events: once removed, its events are no longer the current task's.
  const services: string[] = [];
  for (const e of ctx.store.eventsSince(since, 500)) {
    if (e.project !== ctx.key || e.taskId !== result.id) continue;
    if (e.level !== 'info') ctx.reporter.line(`warren: ${e.level}: ${e.message}`);
    // What went with the task's services (processes stopped, databases dropped and checked gone).
    else if (e.kind === 'service.stopped' || e.kind === 'service.database_dropped') services.push(e.message);
  }
  return { ...result, services };
}
