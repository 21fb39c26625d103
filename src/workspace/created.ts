import { codeCacheUse } from '../system/code-cache-state.js';
import { spawnMethod } from '../system/spawn.js';
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
  /** Warnings and errors recorded while creating (e.g. hooks that will not run, skipped paths): shown, never only logged. */
  warnings: { kind: string; level: string; message: string }[];
}

/** Reads the task's recorded facts and the non-info events newer than `sinceSeq`. */
export function createdSummary(ctx: ProjectContext, task: Task, sinceSeq: number): CreatedSummary {
  const warnings = ctx.store
    .taskEvents(ctx.key, task.id, 200)
    .filter((e) => e.seq > sinceSeq && e.level !== 'info')
    .map((e) => ({ kind: e.kind, level: e.level, message: e.message }));
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
    warnings,
  };
}

/**
 * What made this command slower than it should be, on the task's record at level warn (so
 * `warren new` prints it): processes started by forking warren because the native starter is
 * missing or failed to load (src/system/native-spawn.ts), or code compiled without the build's
 * code cache (src/cli/code-cache.ts). Nothing else differs.
 */
export function noteSlowStart(ctx: ProjectContext, taskId: string): void {
  const spawning = spawnMethod();
  if (spawning.method === 'fork' && spawning.fallback) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'spawn.fallback',
      level: 'warn',
      message: `processes start by forking warren, which costs this command ~5-15 ms more for each process it starts: ${spawning.why}. Nothing else changes; \`npm run build\` with a C compiler builds the native starter.`,
      data: { why: spawning.why },
    });
  }
  const loading = codeCacheUse();
  if (loading !== undefined && !loading.cached) {
    const why = loading.why ?? 'unknown';
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'startup.uncached',
      level: 'warn',
      message: `warren new compiled its code without the build's code cache, ~30 ms more: ${why}. Nothing else changes; \`npm run build\`, with this Node and no V8 flags, makes it again.`,
      data: { why },
    });
  }
}
