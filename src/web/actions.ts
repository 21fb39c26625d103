import { WarrenError, isWarrenError } from '../errors.js';
import { text, type ActionOption, type ActionValues, type KeepRunning, type WebAction } from './action-request.js';
import type { ProjectContext } from '../workspace/context.js';
import { checkpointTask } from '../land/checkpoint.js';
import { queueLand, workQueue } from '../queue/operations.js';
import { agentNames, assertAgentKnown, isRepositoryAgent } from '../run/agents.js';
import { runAgent } from '../run/operations.js';
import { verifyTask } from '../run/setup-verify.js';
import { assertTrusted, trustCommands } from '../trust/trust.js';
import type { WarrenConfig } from '../config/schema.js';
import { TASK_TYPES, type TaskState } from '../state/types.js';
import { addComment, setCommentState } from '../review/comments.js';
import { sendReview } from '../review/send.js';
import { createTask } from '../workspace/create.js';
import { openInEditor } from '../workspace/editor.js';
import { createdSummary } from '../workspace/created.js';
import { gc } from '../workspace/gc.js';
import { taskTypes } from '../workspace/ids.js';
import { removeTask } from '../workspace/remove.js';
import { removeView } from '../views/changes.js';
import { trustedView, verifyView } from '../views/runs.js';

/**
 * What the dashboard's buttons do: each entry calls the same guarded library function as the
 * CLI command of the same name, so a guard that refuses `warren rm` refuses the button too,
 * with the same message. Adding an action is one entry.
 */

/** Where a task can still change: verify, checkpoint and land are not offered on a landed task. */
const ACTIVE: readonly TaskState[] = ['ready', 'setup_failed'];

const AGENT_OPTIONS: readonly ActionOption[] = [
  { name: 'agent', label: 'agent', type: 'choice', choices: ['claude'], choicesFrom: 'agents' },
  { name: 'prompt', label: 'prompt', type: 'text', required: true, multiline: true },
];

/** How long the page waits for a started agent's run to be recorded before it answers. */
const START_WAIT_MS = 10_000;

/**
 * Starts `warren run ID --agent NAME --prompt …` (the same library call) and answers once the run
 * is recorded as started, or refused: an agent runs for minutes, and the page follows it through
 * the task's log and transcript instead of waiting on one request. The run goes on in the server.
 */
async function startAgent(
  ctx: ProjectContext,
  id: string,
  o: ActionValues,
  keep: KeepRunning,
): Promise<{ id: string; agent: string; started: boolean; runId: string | null }> {
  const agent = text(o.agent);
  const prompt = typeof o.prompt === 'string' ? o.prompt : '';
  const since = ctx.store.lastEventSeq();
  const running = runAgent(ctx, id, { agent, prompt });
  keep(running.catch(() => undefined)); // its outcome is in the run's events and log
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    const started = ctx.store
      .eventsSince(since)
      .find((e) => e.kind === 'run.started' && e.taskId === id && e.project === ctx.key);
    if (started?.kind === 'run.started') return { id, agent, started: true, runId: started.data.runId };
    // A refusal (the task is busy, not runnable) comes back as the run's rejection.
    const settled = await Promise.race([
      running.then((r) => r.runId),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 100)),
    ]);
    if (settled !== null) return { id, agent, started: true, runId: settled };
    if (Date.now() > deadline) return { id, agent, started: false, runId: null };
  }
}

/** Refuses an unknown agent, or a warren.yaml agent not trusted yet, before a task is made for it. */
function assertAgentRunnable(ctx: ProjectContext, agent: string): void {
  assertAgentKnown(ctx.config, agent);
  if (isRepositoryAgent(ctx.config, agent)) assertTrusted(ctx, ['agent'], 'Nothing was created or run.', [agent]);
}

export const ACTIONS: readonly WebAction[] = [
  {
    name: 'new',
    label: 'New task',
    scope: 'project',
    destructive: false,
    removesTask: false,
    options: [
      { name: 'type', label: 'type', type: 'choice', choices: TASK_TYPES, choicesFrom: 'types' },
      { name: 'id', label: 'task ID', type: 'text', required: true },
      { name: 'base', label: "base (default: the main worktree's branch)", type: 'text', required: false },
      { name: 'sandbox', label: 'sandbox', type: 'choice', choices: ['', 'none', 'bwrap', 'container'] },
      { name: 'skipSync', label: 'do not fetch and fast-forward the base first', type: 'boolean' },
      { name: 'skipSetup', label: 'do not run the setup commands', type: 'boolean' },
    ],
    // The same library call as `warren new`, with the same guards; the result lists the warnings
    // recorded while creating, as the command prints them.
    run: async (ctx, o) => {
      const since = ctx.store.lastEventSeq();
      const sandbox = text(o.sandbox);
      const task = await createTask(ctx, {
        type: text(o.type),
        id: text(o.id),
        sync: o.skipSync !== true,
        setup: o.skipSetup !== true,
        ...(text(o.base) ? { base: text(o.base) } : {}),
        ...(sandbox === 'none' || sandbox === 'bwrap' || sandbox === 'container' ? { sandbox } : {}),
      });
      return createdSummary(ctx, task, since);
    },
  },
  {
    name: 'agent',
    label: 'Start agent',
    scope: 'project',
    destructive: false,
    removesTask: false,
    options: [
      ...AGENT_OPTIONS,
      { name: 'type', label: 'type', type: 'choice', choices: TASK_TYPES, choicesFrom: 'types' },
      { name: 'id', label: 'task ID', type: 'text', required: true },
      { name: 'base', label: "base (default: the main worktree's branch)", type: 'text', required: false },
    ],
    // `warren new` and `warren run --agent` in one step, through the same library calls.
    run: async (ctx, o, keep) => {
      assertAgentRunnable(ctx, text(o.agent));
      const since = ctx.store.lastEventSeq();
      const task = await createTask(ctx, {
        type: text(o.type),
        id: text(o.id),
        ...(text(o.base) ? { base: text(o.base) } : {}),
      });
      const created = createdSummary(ctx, task, since);
      return { ...created, run: await startAgent(ctx, task.id, o, keep) };
    },
  },
  {
    name: 'run',
    label: 'Run agent',
    scope: 'task',
    destructive: false,
    removesTask: false,
    states: ACTIVE,
    options: AGENT_OPTIONS,
    run: (ctx, id, o, keep) => {
      assertAgentRunnable(ctx, text(o.agent));
      return startAgent(ctx, id, o, keep);
    },
  },
  {
    name: 'verify',
    label: 'Verify',
    scope: 'task',
    destructive: false,
    removesTask: false,
    states: ACTIVE,
    options: [],
    run: async (ctx, id) => verifyView(await verifyTask(ctx, id)),
  },
  {
    name: 'checkpoint',
    label: 'Checkpoint',
    scope: 'task',
    destructive: false,
    removesTask: false,
    states: ACTIVE,
    options: [{ name: 'acceptHooks', label: 'accept changed git hooks as the new baseline', type: 'boolean' }],
    run: (ctx, id, o) => checkpointTask(ctx, id, { acceptHooks: o.acceptHooks === true }),
  },
  {
    name: 'land',
    label: 'Land',
    scope: 'task',
    destructive: true,
    removesTask: false,
    // A landed task has nothing more to land.
    states: ACTIVE,
    options: [{ name: 'acceptHooks', label: 'accept changed git hooks as the new baseline', type: 'boolean' }],
    // Joins the merge queue; the server works the queue itself when nobody else does.
    run: async (ctx, id, o) => {
      const joined = await queueLand(ctx, id, { acceptHooks: o.acceptHooks === true, wait: false });
      void workQueue(ctx).catch(() => undefined); // its outcome is in the queue and the events
      return joined;
    },
  },
  {
    name: 'rm',
    label: 'Remove',
    scope: 'task',
    destructive: true,
    removesTask: true,
    options: [
      { name: 'deleteBranch', label: 'also delete the branch (only if its work is on another ref)', type: 'boolean' },
      {
        name: 'discard',
        label:
          'discard uncommitted and unlanded work, after saving it under refs/warren/archive/ (warren restore brings it back)',
        type: 'boolean',
      },
    ],
    run: (ctx, id, o) =>
      removeView(ctx, id, { deleteBranch: o.deleteBranch === true && o.discard !== true, discard: o.discard === true }),
  },
  {
    name: 'comment',
    label: 'Comment',
    scope: 'task',
    destructive: false,
    removesTask: false,
    inline: true,
    options: [
      { name: 'path', label: 'file', type: 'text', required: true },
      { name: 'line', label: 'line', type: 'text', required: true },
      { name: 'side', label: 'side', type: 'choice', choices: ['new', 'old'] },
      { name: 'body', label: 'comment', type: 'text', required: true },
    ],
    // The same call as `warren comment`: the hunk is read on the server, from the task's diff as it is now.
    run: (ctx, id, o) => {
      const line = Number(text(o.line));
      if (!Number.isInteger(line) || line < 1)
        throw new WarrenError(
          'USAGE',
          `line ${JSON.stringify(text(o.line))} is not a line number; nothing was recorded.`,
        );
      return addComment(ctx, id, {
        path: text(o.path),
        line,
        side: o.side === 'old' ? 'old' : 'new',
        body: typeof o.body === 'string' ? o.body : '',
      });
    },
  },
  {
    name: 'resolve',
    label: 'Resolve',
    scope: 'task',
    destructive: false,
    removesTask: false,
    inline: true,
    options: [
      { name: 'comment', label: 'comment number', type: 'text', required: true },
      { name: 'state', label: 'state', type: 'choice', choices: ['resolved', 'open'] },
    ],
    run: async (ctx, id, o) => {
      const n = Number(text(o.comment));
      if (!Number.isInteger(n))
        throw new WarrenError(
          'USAGE',
          `comment ${JSON.stringify(text(o.comment))} is not a number; nothing was changed.`,
        );
      return setCommentState(ctx, id, [n], o.state === 'open' ? 'open' : 'resolved')[0];
    },
  },
  {
    name: 'review',
    label: 'Send to agent',
    scope: 'task',
    destructive: false,
    removesTask: false,
    inline: true,
    options: [{ name: 'agent', label: 'agent', type: 'text', required: true }],
    // `warren run ID --agent NAME --review`: the open comments are the prompt.
    run: (ctx, id, o) => sendReview(ctx, id, { agent: text(o.agent) }),
  },
  {
    name: 'open',
    label: 'Open in editor',
    scope: 'task',
    destructive: false,
    removesTask: false,
    // Offered beside the editor links when config.yaml names an editor.
    inline: true,
    options: [],
    run: (ctx, id) => openInEditor(ctx, id),
  },
  {
    name: 'rm-landed',
    label: 'Remove landed tasks',
    scope: 'project',
    destructive: true,
    removesTask: false,
    // Offered by the disk view, which names the tasks first.
    inline: true,
    options: [],
    // `warren rm ID --discard` for each landed task: everything is saved under
    // refs/warren/archive/ID/ first (`warren restore ID` brings it back); one that is refused
    // (busy, say) is named with why, and the others go on.
    run: async (ctx) => {
      const removed: { id: string; archive: string | null }[] = [];
      const refused: { id: string; code: string; message: string }[] = [];
      for (const task of ctx.store.listTasks(ctx.key).filter((t) => t.state === 'landed')) {
        try {
          const r = await removeTask(ctx, task.id, { discard: true });
          removed.push({ id: task.id, archive: r.archive ?? null });
        } catch (err) {
          if (!isWarrenError(err)) throw err;
          refused.push({ id: task.id, code: err.code, message: err.message });
        }
      }
      return { removedLanded: removed, refused };
    },
  },
  {
    name: 'trust',
    label: 'Trust',
    scope: 'project',
    destructive: false,
    removesTask: false,
    inline: true,
    // The page shows the set (as `warren trust` does) and sends the hash it showed: a set that
    // changed in between is refused, not trusted unseen.
    options: [{ name: 'hash', label: 'sha256 of the set shown', type: 'text', required: true }],
    run: (ctx, o) => Promise.resolve(trustedView(trustCommands(ctx, text(o.hash)))),
  },
  {
    name: 'gc',
    label: 'Collect strays (gc)',
    scope: 'project',
    destructive: true,
    removesTask: false,
    options: [],
    run: (ctx) => gc(ctx),
  },
];

/** What the page needs to draw the buttons, with the repository's own choices; the functions stay on the server. */
export function describeActions(config: WarrenConfig): Omit<WebAction, 'run'>[] {
  const filled = (o: ActionOption): ActionOption =>
    o.type !== 'choice' || o.choicesFrom === undefined
      ? o
      : { ...o, choices: o.choicesFrom === 'types' ? taskTypes(config) : agentsFirstClaude(config) };
  return ACTIONS.map(({ name, label, scope, destructive, removesTask, options, states, inline }) => ({
    name,
    label,
    scope,
    destructive,
    removesTask,
    options: options.map(filled),
    ...(states ? { states } : {}),
    ...(inline ? { inline } : {}),
  }));
}

/** The agents to choose from, claude first (the default), then the others by name. */
function agentsFirstClaude(config: WarrenConfig): string[] {
  const names = agentNames(config);
  return names.includes('claude') ? ['claude', ...names.filter((n) => n !== 'claude')] : names;
}

export function findAction(name: string): WebAction | undefined {
  return ACTIONS.find((a) => a.name === name);
}
