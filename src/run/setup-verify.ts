import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { withTaskLock } from '../workspace/locks.js';
import type { RunOutput } from '../workspace/reporter.js';
import { requireTask } from '../workspace/tasks.js';
import { validateTaskId } from '../workspace/ids.js';
import { provisionRecords } from '../provision/types.js';
import { runSteps, type StepResult, type StepsOutcome } from './commands.js';
import { installDecision } from './install-skip.js';

/** Setup and verify for one task: run the steps, then record the outcome on the task. */

export interface SetupOutcome {
  /** The task's state afterwards. */
  state: Task['state'];
  passed: boolean;
  log: string | null;
  results: StepResult[];
}

/**
 * Runs the setup commands and moves the task: a failure makes a new or ready task
 * `setup_failed` (a landed one stays landed, with the failure recorded); a pass makes a
 * `setup_failed` task ready again.
 */
export async function runSetup(
  ctx: ProjectContext,
  task: Task,
  output: RunOutput,
  options: { skipProvisionedInstalls?: boolean } = {},
): Promise<SetupOutcome> {
  if (ctx.config.setup.length === 0) return { state: task.state, passed: true, log: null, results: [] };
  const skipped = options.skipProvisionedInstalls ? await provisionedInstalls(ctx, task) : [];
  // A skipped install runs only what it would have done per checkout (the root package's own scripts).
  const steps = ctx.config.setup.flatMap((s) => {
    const k = skipped.find((x) => x.id === s.id);
    if (!k) return [s];
    return k.ran ? [{ ...s, run: k.ran.command }] : [];
  });
  const outcome: StepsOutcome = await runSteps(ctx, task, 'setup', steps, { stopOnFailure: true, output });
  ctx.store.mergeData(ctx.key, task.id, {
    setup: {
      at: new Date().toISOString(),
      ok: outcome.ok,
      log: outcome.log,
      failed: outcome.failed?.id ?? null,
      ...(skipped.length > 0 ? { skipped } : {}),
    },
  });
  let state = task.state;
  if (outcome.ok) {
    if (task.state === 'setup_failed') ctx.store.transition(ctx.key, task.id, 'setup_failed', (state = 'ready'));
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'setup.passed',
      message: `setup ran ${outcome.results.length} command(s)${skipped.length > 0 ? `; the install of ${skipped.map((k) => k.id).join(', ')} was skipped` : ''} (log ${outcome.log})`,
      data: { log: outcome.log, results: outcome.results },
    });
  } else {
    const f = outcome.failed;
    if (task.state === 'creating' || task.state === 'ready')
      ctx.store.transition(ctx.key, task.id, task.state, (state = 'setup_failed'));
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'setup.failed',
      level: 'error',
      message: `setup ${f?.id ?? ''} failed (${f?.reason ?? `exit ${f?.exitCode}`}); the workspace is kept as it is, in state ${state}; log ${outcome.log}`,
      data: { log: outcome.log, results: outcome.results },
    });
  }
  return { state, passed: outcome.ok, log: outcome.log, results: outcome.results };
}

/** A skipped install: why, and the per-checkout scripts run in its place (none when `ran` is absent). */
export interface SkippedInstall {
  id: string;
  why: string;
  ran?: { scripts: string[]; command: string; summary: string };
}

/**
 * At `new`: the setup steps that would only install a node_modules warren already provisioned
 * matching its lockfile, each recorded as skipped (with the root package's per-checkout scripts
 * run in its place); a step that reinstalls a cow tree anyway is warned about, with the way to
 * the fast path (src/run/install-skip.ts).
 */
async function provisionedInstalls(ctx: ProjectContext, task: Task): Promise<SkippedInstall[]> {
  const records = provisionRecords(task.data);
  const skipped: SkippedInstall[] = [];
  for (const step of ctx.config.setup) {
    const decision = await installDecision(step.run, records, task.path);
    const run = typeof step.run === 'string' ? step.run : JSON.stringify(step.run);
    if (decision.kind === 'skip') {
      const ran = decision.perCheckout ?? undefined;
      skipped.push({ id: step.id, why: decision.why, ...(ran ? { ran } : {}) });
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'setup.install_skipped',
        message: `setup ${step.id} (${run}) skipped: ${decision.why}${ran ? `; ran instead: ${ran.summary}` : ''}; \`warren setup ${task.id}\` runs the whole install`,
        data: {
          id: step.id,
          why: decision.why,
          ...(ran ? { scripts: ran.scripts, command: ran.command, summary: ran.summary } : {}),
        },
      });
    } else if (decision.kind === 'warn') {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'setup.reinstalls',
        level: 'warn',
        message: `setup ${step.id} (${run}) was run: ${decision.why}. For the fast path: ${decision.fastPath}`,
        data: { id: step.id, why: decision.why, fastPath: decision.fastPath },
      });
    }
  }
  return skipped;
}

/**
 * `warren setup ID`: under the task lock, then the state check (read after the lock, so
 * another command cannot change the task in between), then the commands.
 */
export async function setupTask(ctx: ProjectContext, rawId: string): Promise<SetupOutcome> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, 'setup', async () => {
    const task = requireTask(ctx, id);
    if (task.state !== 'ready' && task.state !== 'setup_failed' && task.state !== 'landed') {
      throw new WarrenError('TASK_STATE', `task ${task.id} is in state ${task.state}; setup was not run.`, {
        hint: `See \`warren show ${task.id}\`.`,
      });
    }
    return runSetup(ctx, task, ctx.reporter.output);
  });
}

export interface VerifyOutcome {
  passed: boolean;
  log: string | null;
  results: StepResult[];
}

export async function runVerify(ctx: ProjectContext, task: Task, output: RunOutput): Promise<VerifyOutcome> {
  const steps = ctx.config.verify;
  if (steps.length === 0) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'verify.empty',
      level: 'warn',
      message: 'no verify commands in warren.yaml; nothing was checked',
    });
    return { passed: true, log: null, results: [] };
  }
  const outcome = await runSteps(ctx, task, 'verify', steps, { stopOnFailure: false, output });
  const failedIds = outcome.results
    .filter((r) => r.exitCode !== 0 || r.timedOut)
    .map((r) => `${r.id}${r.required ? '' : ' (optional)'}`);
  ctx.store.mergeData(ctx.key, task.id, {
    verify: { at: new Date().toISOString(), passed: outcome.ok, log: outcome.log, results: outcome.results },
  });
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
export async function verifyTask(ctx: ProjectContext, rawId: string): Promise<VerifyOutcome> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, 'verify', () => runVerify(ctx, requireTask(ctx, id), ctx.reporter.output));
}
