import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';

/** What `warren new` and the dashboard's "New task" report about a task they just created. */
export interface CreatedSummary {
  id: string;
  type: string;
  branch: string;
  path: string;
  base: string;
  baseCommit: string;
  state: string;
  ports?: { first: number; count: number };
  risk?: { level: string; reasons: string[]; recommendedSandbox: string };
  /** The setup log, when setup ran. */
  log?: string;
  setupOk?: boolean;
  /** The setup steps `new` skipped: installs of a tree provisioned matching its lockfile; `ran`: the root package's per-checkout scripts run instead. */
  setupSkipped?: { id: string; why: string; ran?: { scripts: string[]; command: string; summary?: string } }[];
  /** Warnings and errors recorded while creating (e.g. hooks that will not run, skipped paths): shown, never only logged. */
  warnings: { kind: string; level: string; message: string }[];
  /** What was made for the task's services (a template built, its database, a process started), in words. */
  services: { kind: string; message: string }[];
  /**
   * Ignored paths of the main checkout that nothing provisions (node_modules, a venv, `.env`), and
   * the `provision:` lines that would: present the one time a repository is told (also a warning).
   */
  provisionHint?: { paths: { path: string; mode: string }[]; lines: string[] };
}

/** The services' events that say what `new` made: the rest (a crash, a failure) are warnings. */
const MADE = new Set(['service.template_built', 'service.database_created', 'service.started', 'service.env_written']);

/** Reads the task's recorded facts, the non-info events and what its services made, newer than `sinceSeq`. */
export function createdSummary(ctx: ProjectContext, task: Task, sinceSeq: number): CreatedSummary {
  const recent = ctx.store.taskEvents(ctx.key, task.id, 200).filter((e) => e.seq > sinceSeq);
  const warnings = recent
    .filter((e) => e.level !== 'info')
    .map((e) => ({ kind: e.kind, level: e.level, message: e.message }));
  const services = recent
    .filter((e) => e.level === 'info' && MADE.has(e.kind))
    .map((e) => ({ kind: e.kind, message: e.message }));
  const hint = recent.find((e) => e.kind === 'provision.hint');
  const { ports, risk, setup } = task.data;
  return {
    id: task.id,
    type: task.type,
    branch: task.branch,
    path: task.path,
    base: task.base,
    baseCommit: task.baseCommit,
    state: task.state,
    ...(ports ? { ports } : {}),
    ...(risk ? { risk } : {}),
    ...(setup ? { log: setup.log, setupOk: setup.ok } : {}),
    ...(setup?.skipped ? { setupSkipped: setup.skipped } : {}),
    warnings,
    services,
    ...(hint?.kind === 'provision.hint' ? { provisionHint: { paths: hint.data.paths, lines: hint.data.lines } } : {}),
  };
}
