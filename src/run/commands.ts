import fs from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../config/schema.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { logDir, newRunId } from './records.js';
import { startStep, type RunOutput } from '../workspace/reporter.js';
import { runInTask, type RunOutcome } from './execute.js';
import { assertTrusted } from '../trust/trust.js';

/**
 * setup / verify / teardown from warren.yaml, each command through the supervisor. One log per
 * invocation, each command's output under a header line, so a failure's context is in one file.
 */
export const DEFAULT_STEP_TIMEOUT = '10m';

/** `run:` as a string goes to `sh -c` (the user wrote shell); a list is an argv. */
export function commandArgv(run: CommandSpec): string[] {
  return typeof run === 'string' ? ['sh', '-c', run] : [...run];
}

export interface StepResult {
  id: string;
  exitCode: number | null;
  timedOut: boolean;
  required: boolean;
  durationMs: number;
  reason: string | null;
}

interface Step {
  id: string;
  run: CommandSpec;
  timeout?: string | undefined;
  required?: boolean;
}

export interface StepsOutcome {
  ok: boolean;
  log: string;
  results: StepResult[];
  /** The first failed step (setup and teardown stop there; verify runs them all). */
  failed: StepResult | null;
}

export interface StepsOptions {
  stopOnFailure: boolean;
  output: RunOutput;
  skipStateCheck?: boolean;
  /**
   * `coordinator`: on a host, steps a coordinator sent (the merge queue's gate there), checked
   * against its user's trust before they were sent, as every command it sends is; the host's
   * own settings are still checked before each runs (boundary.ts).
   */
  trustedBy?: 'coordinator';
}

export async function runSteps(
  ctx: ProjectContext,
  task: Task,
  kind: 'setup' | 'verify' | 'teardown',
  steps: readonly Step[],
  options: StepsOptions,
): Promise<StepsOutcome> {
  // The one place warren.yaml's steps run: none of them without the user's trust (the
  // coordinator's, for a gate it sent here: it checked them, as it does every command it sends).
  if (options.trustedBy !== 'coordinator') assertTrusted(ctx, [kind], `Nothing was run; task ${task.id} is as it was.`);
  const log = path.join(logDir(ctx.store, ctx.key, task.id), `${newRunId()}-${kind}.log`);
  fs.writeFileSync(log, '', { mode: 0o600 });
  const results: StepResult[] = [];
  let failed: StepResult | null = null;
  for (const step of steps) {
    const argv = commandArgv(step.run);
    const said = `${kind} ${step.id}: ${typeof step.run === 'string' ? step.run : JSON.stringify(step.run)}`;
    fs.appendFileSync(log, `\n### ${said}\n`);
    const shown = startStep(ctx.reporter, said);
    let outcome: RunOutcome;
    try {
      outcome = await runInTask(ctx, task, {
        kind,
        label: step.id,
        argv,
        timeoutMs: parseDuration(step.timeout ?? DEFAULT_STEP_TIMEOUT, `${kind} ${step.id} timeout`),
        stdin: 'ignore',
        output: options.output,
        logPath: log,
        ...(options.skipStateCheck ? { skipStateCheck: true } : {}),
      });
    } catch (err) {
      shown.fail();
      throw err;
    }
    const result: StepResult = {
      id: step.id,
      exitCode: outcome.exitCode,
      timedOut: outcome.timedOut,
      required: step.required ?? true,
      durationMs: outcome.durationMs,
      reason: outcome.reason,
    };
    results.push(result);
    const passed = outcome.exitCode === 0 && !outcome.timedOut && outcome.canceledBy === null;
    if (passed) shown.done();
    else shown.fail(failedHow(outcome));
    if (!passed && failed === null && result.required) failed = result;
    if (outcome.canceledBy !== null) break;
    if (failed && options.stopOnFailure) break;
  }
  return { ok: failed === null, log, results, failed };
}

/** How a command failed, in a few words: `exit 1`, `timed out`, `interrupted`. */
function failedHow(outcome: RunOutcome): string {
  if (outcome.timedOut) return 'timed out';
  if (outcome.canceledBy !== null) return 'interrupted';
  return outcome.exitCode !== null ? `exit ${outcome.exitCode}` : (outcome.reason ?? `killed by ${outcome.signal}`);
}
