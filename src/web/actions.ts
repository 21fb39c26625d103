import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { checkpointTask } from '../land/checkpoint.js';
import { landTask } from '../land/land.js';
import { verifyTask } from '../run/steps.js';
import { gc } from '../workspace/gc.js';
import { removeTask } from '../workspace/remove.js';

/**
 * What the dashboard's buttons do: each entry calls the same guarded library function as the
 * CLI command of the same name, so a guard that refuses `warren rm` refuses the button too,
 * with the same message. Adding an action is one entry.
 */

export interface ActionOption {
  name: string;
  label: string;
  /** Booleans only for now: a checkbox in the confirmation. */
  type: 'boolean';
}

interface ActionBase {
  name: string;
  label: string;
  /** Destructive actions ask for a confirmation in the page first. */
  destructive: boolean;
  /** The task is gone afterwards: the page goes back to the fleet. */
  removesTask: boolean;
  options: readonly ActionOption[];
}

export interface TaskAction extends ActionBase {
  scope: 'task';
  run(ctx: ProjectContext, id: string, options: Record<string, boolean>): Promise<unknown>;
}

export interface ProjectAction extends ActionBase {
  scope: 'project';
  run(ctx: ProjectContext, options: Record<string, boolean>): Promise<unknown>;
}

export type WebAction = TaskAction | ProjectAction;

export const ACTIONS: readonly WebAction[] = [
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
    options: [{ name: 'acceptHooks', label: 'accept changed git hooks as the new baseline', type: 'boolean' }],
    run: (ctx, id, o) => landTask(ctx, id, { acceptHooks: o.acceptHooks === true }),
  },
  {
    name: 'rm',
    label: 'Remove',
    scope: 'task',
    destructive: true,
    removesTask: true,
    options: [{ name: 'deleteBranch', label: 'also delete the branch (only if its work is on another ref)', type: 'boolean' }],
    run: (ctx, id, o) => removeTask(ctx, id, { deleteBranch: o.deleteBranch === true }),
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

/** What the page needs to draw the buttons; the functions stay on the server. */
export function describeActions(): Omit<WebAction, 'run'>[] {
  return ACTIONS.map(({ name, label, scope, destructive, removesTask, options }) => ({ name, label, scope, destructive, removesTask, options }));
}

export interface ActionRequest {
  project: string;
  id?: string;
  options: Record<string, boolean>;
}

/** Pure: validates a request body against the action's declaration; unknown options are errors. */
export function parseActionRequest(action: WebAction, body: unknown): ActionRequest {
  const bad = (message: string) => new WarrenError('USAGE', `${message}; nothing was changed.`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.project !== 'string' || b.project === '') throw bad('"project" is required');
  if (action.scope === 'task' && typeof b.id !== 'string') throw bad(`"${action.name}" needs a task "id"`);
  const raw = b.options ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('"options" must be an object');
  const options: Record<string, boolean> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!action.options.some((o) => o.name === key)) throw bad(`"${action.name}" has no option "${key}"`);
    if (typeof value !== 'boolean') throw bad(`option "${key}" must be true or false`);
    options[key] = value;
  }
  return { project: b.project, ...(typeof b.id === 'string' ? { id: b.id } : {}), options };
}

export function findAction(name: string): WebAction | undefined {
  return ACTIONS.find((a) => a.name === name);
}
