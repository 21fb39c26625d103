import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { runSteps, type StepResult, type StepsOutcome } from './commands.js';
import { withTaskLock } from '../workspace/locks.js';
import { requireTask } from './task.js';

/** Setup and verify for one task: run the steps, then record the outcome on the task. */

export interface SetupOutcome {
  state: 'ready' | 'setup_failed';
  log: string | null;
  results: StepResult[];
}

export async function runSetup(ctx: ProjectContext, task: Task, echo: 'split' | 'stderr' | 'none'): Promise<SetupOutcome> {
  const steps = ctx.config.setup;
  if (steps.length === 0) return { state: 'ready', log: null, results: [] };
  const outcome: StepsOutcome = await runSteps(ctx, task, 'setup', steps, { stopOnFailure: true, echo });
  const state = outcome.ok ? 'ready' : 'setup_failed';
  ctx.store.mergeData(ctx.key, task.id, {
    setup: { at: new Date().toISOString(), ok: outcome.ok, log: outcome.log, failed: outcome.failed?.id ?? null },
  });
  if (outcome.ok) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'setup.passed',
      message: `setup ran ${outcome.results.length} command(s) (log ${outcome.log})`,
      data: { log: outcome.log, results: outcome.results },
    });
  } else {
    const f = outcome.failed;
    ctx.store.setState(ctx.key, task.id, 'setup_failed');
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'setup.failed',
      level: 'error',
      message: `setup ${f?.id ?? ''} failed (${f?.reason ?? `exit ${f?.exitCode}`}); the workspace is kept as it is, in state setup_failed; log ${outcome.log}`,
      data: { log: outcome.log, results: outcome.results },
    });
  }
  return { state, log: outcome.log, results: outcome.results };
}

export interface VerifyOutcome {
  passed: boolean;
  log: string | null;
  results: StepResult[];
}

export async function runVerify(ctx: ProjectContext, task: Task, echo: 'split' | 'stderr' | 'none'): Promise<VerifyOutcome> {
  const steps = ctx.config.verify;
  if (steps.length === 0) {
    ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind: 'verify.empty', level: 'warn', message: 'no verify commands in warren.yaml; nothing was checked' });
    return { passed: true, log: null, results: [] };
  }
  const outcome = await runSteps(ctx, task, 'verify', steps, { stopOnFailure: false, echo });
  const failedIds = outcome.results.filter((r) => r.exitCode !== 0 || r.timedOut).map((r) => `${r.id}${r.required ? '' : ' (optional)'}`);
  ctx.store.mergeData(ctx.key, task.id, { verify: { at: new Date().toISOString(), passed: outcome.ok, log: outcome.log, results: outcome.results } });
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: outcome.ok ? 'verify.passed' : 'verify.failed',
    level: outcome.ok ? (failedIds.length > 0 ? 'warn' : 'info') : 'error',
    message: `verify ${outcome.ok ? 'passed' : 'failed'}${failedIds.length > 0 ? `; failed: ${failedIds.join(', ')}` : ''} (log ${outcome.log})`,
    data: { log: outcome.log, results: outcome.results },
  });
  return { passed: outcome.ok, log: outcome.log, results: outcome.results };
}

/** `warren verify ID` as a library call (the CLI and the dashboard both use it): under the task lock. */
export async function verifyTask(ctx: ProjectContext, rawId: string, echo: 'split' | 'stderr' | 'none' = 'none'): Promise<VerifyOutcome> {
  const task = requireTask(ctx, rawId);
  return withTaskLock(ctx, task.id, 'verify', () => runVerify(ctx, task, echo));
}
