import { WarrenError } from '../errors.js';
import type { TaskState } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';

/** What a dashboard action is (its dialog's fields, its scope) and how a request for one is read. */

/** One field of an action's dialog: a checkbox, a text box or a list to choose from. */
export type ActionOption =
  | { name: string; label: string; type: 'boolean' }
  /** `multiline`: a box for a paragraph (a prompt), not a line. */
  | { name: string; label: string; type: 'text'; required: boolean; multiline?: boolean }
  /**
   * The first choice is the default; an empty value means "as warren.yaml says". `choicesFrom`:
   * the choices are the repository's own (its task types, its agents), and the library call checks them.
   */
  | {
      name: string;
      label: string;
      type: 'choice';
      choices: readonly string[];
      choicesFrom?: 'types' | 'agents';
    };

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

/**
 * Work an action starts and does not wait for (an agent's run): the server keeps it, and waits
 * for it before it exits, as for an action still answering.
 */
export type KeepRunning = (work: Promise<unknown>) => void;

export interface TaskAction extends ActionBase {
  scope: 'task';
  run(ctx: ProjectContext, id: string, options: ActionValues, keep: KeepRunning): Promise<unknown>;
}

export interface ProjectAction extends ActionBase {
  scope: 'project';
  run(ctx: ProjectContext, options: ActionValues, keep: KeepRunning): Promise<unknown>;
}

export type WebAction = TaskAction | ProjectAction;

/** A text option's value, trimmed; '' when it is not text. */
export const text = (v: boolean | string | undefined): string => (typeof v === 'string' ? v.trim() : '');

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
