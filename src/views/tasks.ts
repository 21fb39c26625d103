import { bringBackTask } from '../run/ssh/remote-task.js';
import { whereItRuns } from '../run/where-it-runs.js';
import { hostChanges } from '../run/ssh/remote-worktree.js';
import { validateTaskId } from '../workspace/ids.js';
import { conflictsOf, lastMap } from '../conflicts/view.js';
import { taskConflicts } from '../conflicts/operations.js';
import { statusTask } from '../provision/operations.js';
import { taskServices } from '../services/operations.js';
import type { ProjectContext } from '../workspace/context.js';
import { listTasks, requireTask, showTask } from '../workspace/tasks.js';

/**
 * The answers about tasks, shaped once: `warren list/show/status --json`, the MCP tools of the
 * same names and the dashboard all return these. A field added here reaches every front end.
 */

export type ListView = ReturnType<typeof listView>;

/** `list`: every task of the project, with whom each conflicts as the map was last computed (no git call). */
export function listView(ctx: ProjectContext) {
  const pairs = lastMap(ctx);
  return listTasks(ctx).map((t) => ({
    id: t.id,
    type: t.type,
    branch: t.branch,
    path: t.path,
    base: t.base,
    state: t.state,
    createdAt: t.createdAt,
    conflicts: conflictsOf(pairs, t.id).with,
  }));
}

export type ShowView = ReturnType<typeof showView>;

/** `show`: one task, its services and its newest `events` events, oldest first. */
export function showView(ctx: ProjectContext, rawId: string, events = 20) {
  const { task, events: recorded } = showTask(ctx, rawId, events);
  return {
    id: task.id,
    type: task.type,
    branch: task.branch,
    path: task.path,
    base: task.base,
    baseCommit: task.baseCommit,
    state: task.state,
    createdAt: task.createdAt,
    data: task.data,
    // Where its processes run (this machine, a host over SSH, a cluster) and what holds them.
    runner: whereItRuns(ctx, task),
    // An invalid warren.yaml does not hide the task (show opens it leniently): no services then.
    services: ctx.configProblem ? [] : taskServices(ctx, task),
    // The payload's own fields first: one named like the event's (a run's `kind`: exec or agent) never hides it.
    events: recorded.map((e) => ({ ...e.data, at: e.at, kind: e.kind, level: e.level, message: e.message })),
  };
}

export type StatusView = Awaited<ReturnType<typeof statusView>>;

/**
 * `status`: tracked changes and changes inside provisioned paths, the env files rewritten to the
 * task's services, the services' state, and what the task's work would not merge with. A
 * conflict map that cannot be computed does not hide the status: said on the reporter, and empty.
 */
export async function statusView(ctx: ProjectContext, rawId: string) {
  // A task on another machine: what it committed there, fetched and checked first.
  await bringBackTask(ctx, validateTaskId(rawId));
  const { remounted: _remounted, ...status } = await statusTask(ctx, rawId);
  const task = requireTask(ctx, rawId);
  // Its changes are those of its workspace there, uncommitted work included, and of the paths provisioned there.
  const there = await hostChanges(ctx, task);
  if (there) {
    status.tracked = there.tracked;
    status.provisioned = there.provisioned ?? [];
    status.stale = there.stale ?? false;
    status.staleLockfiles = there.staleLockfiles ?? [];
  }
  const conflicts = await taskConflicts(ctx, rawId).then(
    (c) => c.with,
    (err: unknown) => {
      ctx.reporter.line(
        `warren: warn: could not compute ${rawId}'s conflicts: ${err instanceof Error ? err.message : String(err)}`,
      );
      return [];
    },
  );
  return {
    ...status,
    envRewritten: task.data.servicesEnvRewritten ?? [],
    services: taskServices(ctx, task),
    conflicts,
  };
}
