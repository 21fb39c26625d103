import { WarrenError, isWarrenError } from '../errors.js';
import type { Task, WarrenEvent } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { agentNames } from '../run/agents.js';
import { newestConversation, type Conversation } from '../run/transcript.js';
import { taskComments, type Comment } from '../review/comments.js';
import { DASHBOARD_PATCH_BYTES, diffTask, type TaskDiff } from '../review/diff.js';
import { defaultReviewAgent } from '../review/send.js';
import { branchCommits } from '../workspace/git-view.js';
import { taskConflictPairs } from '../conflicts/operations.js';
import type { PairResult } from '../conflicts/types.js';
import { requireTask } from '../workspace/tasks.js';
import { whereItRuns, type WhereItRuns } from '../run/where-it-runs.js';
import { taskServices } from '../services/operations.js';
import type { ServiceStatus } from '../services/task-services.js';
import { fleetTask, taskDetails, type FleetTask, type TaskDetails } from './fleet.js';
import { SETUP_KINDS, VERIFY_KINDS, logSource, newestOfKinds } from './run-events.js';

export interface AuditView {
  name: string;
  lines: string[];
  error: string | null;
}

/** A part of the view that could not be read: the page says so, instead of showing it empty. */
export type Readout<T> = { ok: true; value: T } | { ok: false; error: string };

export interface TaskView {
  /** The fleet's row and what git and the workspace say about it: the task view asks for both at once. */
  task: FleetTask & Omit<TaskDetails, 'id'> & { runner: WhereItRuns };
  events: WarrenEvent[];
  setup: WarrenEvent | null;
  verify: WarrenEvent | null;
  /** The newest agent run whose CLI keeps a transcript: the page follows it (`/api/transcript`). */
  conversation: Conversation | null;
  /** The newest command with a log: whether it is still running, and its log path. */
  log: { startedSeq: number; path: string; running: boolean } | null;
  /** Commits on the branch that the base does not have, newest first (at most 100). */
  commits: Readout<{ sha: string; subject: string }[]>;
  /** What the task changed against its base, uncommitted work included, file by file (`warren diff`). */
  diff: Readout<TaskDiff>;
  /** Review comments, oldest first. */
  comments: Comment[];
  /** Agents Send to agent can run, and the one it offers first. */
  agents: { names: string[]; preferred: string };
  audit: AuditView[];
  /** The task's services: state, where each is reached (passwords left out) and its log. */
  services: ServiceStatus[];
  /** The pairs of this task that do not merge (its uncommitted work read again), with both sides' hunks. */
  conflicts: Readout<PairResult[]>;
}

function messageOf(err: unknown): string {
  return isWarrenError(err) ? err.message : err instanceof Error ? err.message : String(err);
}

async function readout<T>(read: () => Promise<T>): Promise<Readout<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (err) {
    return { ok: false, error: messageOf(err) };
  }
}

export async function taskView(ctx: ProjectContext, rawId: string): Promise<TaskView> {
  let task;
  try {
    task = requireTask(ctx, rawId);
  } catch (err) {
    if (isWarrenError(err, 'TASK_NOT_FOUND'))
      throw new WarrenError('TASK_NOT_FOUND', err.message, { hint: 'It may have been removed.' });
    throw err;
  }
  const events = ctx.store.taskEvents(ctx.key, task.id, 200);
  const source = logSource(events);
  // Each part reads git or the disk on its own: read them side by side, not one after another.
  const [details, audit, commits, diff, conflicts] = await Promise.all([
    taskDetails(ctx, task),
    auditOf(ctx, task),
    readout(() => branchCommits(ctx.repo, task)),
    // `warren diff`'s own answer: of a task on a host, its workspace there.
    readout(() => diffTask(ctx, task.id, { byFile: true, maxPatchBytes: DASHBOARD_PATCH_BYTES })),
    readout(() => taskConflictPairs(ctx, task.id)),
  ]);
  const { id: _, ...detailsOfTask } = details;
  return {
    task: { ...fleetTask(ctx, task), ...detailsOfTask, runner: whereItRuns(ctx, task) },
    events,
    setup: newestOfKinds(events, SETUP_KINDS),
    verify: newestOfKinds(events, VERIFY_KINDS),
    conversation: newestConversation(ctx.store, ctx.key, task.id),
    log: source ? { startedSeq: source.startedSeq, path: source.path, running: source.finished === null } : null,
    commits,
    diff,
    comments: taskComments(ctx, task),
    agents: { names: agentNames(ctx.config), preferred: defaultReviewAgent(ctx, task) },
    audit,
    services: taskServices(ctx, task).map((s) => ({ ...s, url: s.url === null ? null : withoutPassword(s.url) })),
    conflicts,
  };
}

/** Each audit section registered in the lifecycle, in order; one that fails says why instead. */
async function auditOf(ctx: ProjectContext, task: Task): Promise<AuditView[]> {
  return Promise.all(
    ctx.lifecycle.audit.map(async (section): Promise<AuditView> => {
      try {
        const { lines } = await section.collect(ctx, task);
        return { name: section.name, lines, error: null };
      } catch (err) {
        return { name: section.name, lines: [], error: messageOf(err) };
      }
    }),
  );
}

/** A URL as the page shows it: the user and password out (the page is a view; `warren env` has them). */
function withoutPassword(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}
