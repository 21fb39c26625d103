import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { checkpointTask } from '../land/checkpoint.js';
import { queueLand, workQueue } from '../queue/operations.js';
import { verifyTask } from '../run/setup-verify.js';
import type { WarrenConfig } from '../config/schema.js';
import { TASK_TYPES, type TaskState } from '../state/types.js';
import { addComment, setCommentState } from '../review/comments.js';
import { sendReview } from '../review/send.js';
import { createTask } from '../workspace/create.js';
import { createdSummary } from '../workspace/created.js';
import { gc } from '../workspace/gc.js';
import { taskTypes } from '../workspace/ids.js';
import { removeTask } from '../workspace/remove.js';

/**
 * What the dashboard's buttons do: each entry calls the same guarded library function as the
 * CLI command of the same name, so a guard that refuses `warren rm` refuses the button too,
 * with the same message. Adding an action is one entry.
 */

/** One field of an action's dialog: a checkbox, a text box or a list to choose from. */
export type ActionOption =
  | { name: string; label: string; type: 'boolean' }
  | { name: string; label: string; type: 'text'; required: boolean }
  /**
   * The first choice is the default; an empty value means "as warren.yaml says". `choicesFrom`:
   * the choices are the repository's own (its task types), and the library call checks them.
   */
  | { name: string; label: string; type: 'choice'; choices: readonly string[]; choicesFrom?: 'types' };

export type ActionValues = Record<string, boolean | string>;

interface ActionBase {
  name: string;
  label: string;
  /** Destructive actions ask for a confirmation in the page first. */
  destructive: boolean;
  /** The task is gone afterwards: the page goes back to the fleet. */
  removesTask: boolean;
  options: readonly ActionOption[];
  /** The task states it is offered in (default: all); the library's guards still decide. */
  states?: readonly TaskState[];
  /** Not a button of its own: the page calls it from its part of the view (the diff's comments, Send to agent). */
  inline?: boolean;
}

export interface TaskAction extends ActionBase {
  scope: 'task';
  run(ctx: ProjectContext, id: string, options: ActionValues): Promise<unknown>;
}

export interface ProjectAction extends ActionBase {
  scope: 'project';
  run(ctx: ProjectContext, options: ActionValues): Promise<unknown>;
}

export type WebAction = TaskAction | ProjectAction;

const text = (v: boolean | string | undefined): string => (typeof v === 'string' ? v.trim() : '');

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
      { name: 'sandbox', label: 'sandbox', type: 'choice', choices: ['', 'none', 'bwrap'] },
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
        ...(sandbox === 'none' || sandbox === 'bwrap' ? { sandbox } : {}),
      });
      return createdSummary(ctx, task, since);
    },
  },
  {
    name: 'verify',
    label: 'Verify',
    scope: 'task',
    destructive: false,
    removesTask: false,
    options: [],
    run: (ctx, id) => verifyTask(ctx, id),
  },
  {
    name: 'checkpoint',
    label: 'Checkpoint',
    scope: 'task',
    destructive: false,
    removesTask: false,
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
    states: ['ready', 'setup_failed'],
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
      removeTask(ctx, id, { deleteBranch: o.deleteBranch === true && o.discard !== true, discard: o.discard === true }),
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
    o.type === 'choice' && o.choicesFrom === 'types' ? { ...o, choices: taskTypes(config) } : o;
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

export interface ActionRequest {
  project: string;
  id?: string;
  options: ActionValues;
}

/** Pure: validates a request body against the action's declaration; unknown options are errors. */
export function parseActionRequest(action: WebAction, body: unknown): ActionRequest {
  const bad = (message: string) => new WarrenError('USAGE', `${message}; nothing was changed.`);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw bad('the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.project !== 'string' || b.project === '') throw bad('"project" is required');
  if (action.scope === 'task' && typeof b.id !== 'string') throw bad(`"${action.name}" needs a task "id"`);
  const raw = b.options ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('"options" must be an object');
  const options: ActionValues = {};
  for (const [key, value] of Object.entries(raw)) {
    const declared = action.options.find((o) => o.name === key);
    if (!declared) throw bad(`"${action.name}" has no option "${key}"`);
    if (declared.type === 'boolean' && typeof value !== 'boolean') throw bad(`option "${key}" must be true or false`);
    if (declared.type !== 'boolean' && typeof value !== 'string') throw bad(`option "${key}" must be a string`);
    if (
      declared.type === 'choice' &&
      declared.choicesFrom === undefined &&
      !declared.choices.includes(value as string)
    ) {
      throw bad(`option "${key}" must be one of ${declared.choices.map((c) => JSON.stringify(c)).join(', ')}`);
    }
    options[key] = value as boolean | string;
  }
  for (const o of action.options) {
    if (o.type === 'text' && o.required && text(options[o.name]) === '')
      throw bad(`"${action.name}" needs option "${o.name}"`);
  }
  return { project: b.project, ...(typeof b.id === 'string' ? { id: b.id } : {}), options };
}

export function findAction(name: string): WebAction | undefined {
  return ACTIONS.find((a) => a.name === name);
}
