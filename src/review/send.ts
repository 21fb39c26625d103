import { WarrenError } from '../errors.js';
import { runAgent, type AgentOutcome } from '../run/operations.js';
import { newestRunLabel } from '../run/records.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { requireTask } from '../workspace/tasks.js';
import { markSent, taskComments, type Comment } from './comments.js';
import { reviewPrompt } from './prompt.js';

export interface ReviewOptions {
  /** The agent; with `resume`, defaults to the one whose conversation is newest. */
  agent?: string;
  /** Send the comments into the task's last conversation with the agent (`run --resume`). */
  resume?: boolean;
  /** Give the agent warren's MCP server for the task (`run --mcp`): the command that starts warren. */
  mcp?: readonly string[];
  timeoutMs?: number;
}

export interface ReviewOutcome extends AgentOutcome {
  /** The comments the agent received; resolved when it finished with exit 0. */
  comments: Comment[];
  resolved: boolean;
}

/**
 * `warren run ID --agent NAME --review`, and the dashboard's Send to agent: the task's open
 * comments become the prompt of a run through `runAgent`, the same path as `warren run`. An
 * agent that finishes with exit 0 has them resolved; otherwise they stay open, to be sent again.
 */
export async function sendReview(ctx: ProjectContext, rawId: string, options: ReviewOptions): Promise<ReviewOutcome> {
  const task = requireTask(ctx, rawId);
  const open = taskComments(ctx, task, { open: true });
  if (open.length === 0) {
    throw new WarrenError('NOTHING_TO_REVIEW', `task ${task.id} has no open review comments; nothing was run.`, {
      hint: `Add one with \`warren comment ${task.id} FILE:LINE TEXT\` (or on the dashboard's diff), or run the agent with --prompt.`,
    });
  }
  const outcome = await runAgent(ctx, task.id, {
    prompt: reviewPrompt(open),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    ...(options.resume ? { resume: true } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const resolved = outcome.exitCode === 0 && !outcome.timedOut && outcome.canceledBy === null;
  markSent(
    ctx,
    open.map((c) => c.id),
    outcome.runId,
    resolved,
  );
  return { ...outcome, comments: taskComments(ctx, task).filter((c) => open.some((o) => o.id === c.id)), resolved };
}

/**
 * The agent the dashboard's Send to agent offers first: the one this task last ran, else the
 * first of warren.yaml's `agents:`, else claude. The page lists every agent to choose from.
 */
export function defaultReviewAgent(ctx: ProjectContext, task: Pick<Task, 'id' | 'createdAt'>): string {
  return (
    newestRunLabel(ctx.store, ctx.key, task.id, 'agent', task.createdAt) ??
    Object.keys(ctx.config.agents ?? {})[0] ??
    'claude'
  );
}
