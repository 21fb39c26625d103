import { auditSections } from '../audit/sections.js';
import { WarrenError, isWarrenError } from '../errors.js';
import type { WarrenEvent } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { fleetTask, type FleetTask } from './fleet.js';
import { commitsNotOn } from '../git/repo.js';
import { baseTip, diffAgainstBase, type TaskDiff } from './git-facts.js';
import { RUN_EVENTS, logSource, newestWithPrefix } from './run-events.js';

export interface AuditView {
  name: string;
  lines: string[];
  error: string | null;
}

export interface TaskView {
  task: FleetTask;
  events: WarrenEvent[];
  setup: WarrenEvent | null;
  verify: WarrenEvent | null;
  /** The newest command with a log: whether it is still running, and its log path. */
  log: { startedSeq: number; path: string; running: boolean } | null;
  /** Commits on the branch that the base does not have, newest first (at most 100). */
  commits: { sha: string; subject: string }[];
  diff: TaskDiff | null;
  audit: AuditView[];
}

function messageOf(err: unknown): string {
  return isWarrenError(err) ? err.message : err instanceof Error ? err.message : String(err);
}

export async function taskView(ctx: ProjectContext, rawId: string): Promise<TaskView> {
  const id = validateTaskId(rawId);
  const task = ctx.store.getTask(ctx.key, id);
  if (!task) throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was changed.`, { hint: 'It may have been removed.' });
  const row = await fleetTask(ctx, task);
  const events = ctx.store.taskEvents(ctx.key, id, 200);
  const source = logSource(events);
  const audit: AuditView[] = [];
  for (const section of auditSections()) {
    try {
      const { lines } = await section.collect(ctx, task);
      audit.push({ name: section.name, lines, error: null });
    } catch (err) {
      audit.push({ name: section.name, lines: [], error: messageOf(err) });
    }
  }
  return {
    task: row,
    events,
    setup: newestWithPrefix(events, RUN_EVENTS.setupPrefix),
    verify: newestWithPrefix(events, RUN_EVENTS.verifyPrefix),
    log: source ? { startedSeq: source.startedSeq, path: source.path, running: source.finished === null } : null,
    commits: await branchCommits(ctx, task.branch, task.base),
    diff: await diffAgainstBase(ctx.repo, task).catch(() => null),
    audit,
  };
}

async function branchCommits(ctx: ProjectContext, branch: string, base: string): Promise<{ sha: string; subject: string }[]> {
  const tip = await baseTip(ctx.repo, base);
  try {
    return (await commitsNotOn(ctx.repo, `refs/heads/${branch}`, tip ? [tip] : [])).slice(0, 100);
  } catch {
    return [];
  }
}
