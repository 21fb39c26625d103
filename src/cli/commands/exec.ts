import { exitStatusOf, type RunOutcome } from '../../run/execute.js';
import { execTask } from '../../run/operations.js';
import { parseDuration } from '../../util/duration.js';
import type { CliEnv, CommandResult, Register } from '../command.js';
import { runView } from '../../views/runs.js';

export const registerExec: Register = (program, run) => {
  program
    .command('exec')
    .description('run a command inside the workspace, supervised (put the command after --)')
    .argument('<id>')
    .argument('<command...>', 'the command and its arguments, run without a shell')
    .option('--timeout <dur>', 'end the whole process tree after this long (500ms, 2s, 10m, 1h); exit 124')
    .action((rawId: string, argv: string[], opts: { timeout?: string }) =>
      run(async (env) => {
        const timeoutMs = opts.timeout === undefined ? undefined : parseDuration(opts.timeout, '--timeout');
        const ctx = await env.project();
        const outcome = await execTask(ctx, rawId, argv, {
          stdin: env.io.commandStdin,
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
        });
        return runResult(env, outcome);
      }),
    );
};

/** `exec` and `run` report alike: the data on stdout (--json), a summary on stderr for people. */
export function runResult(env: CliEnv, outcome: RunOutcome): CommandResult {
  const data = runView(outcome);
  const exitCode = exitStatusOf(outcome);
  if (!env.json && exitCode !== 0) {
    // A reason the run wrote itself was on the terminal a moment ago, with the run's output: not said twice.
    const why = outcome.reasonInOutput
      ? `not run (exit ${outcome.exitCode}, said above)`
      : (outcome.reason ?? `exit ${outcome.exitCode}`);
    env.log(`warren: ${why} after ${outcome.durationMs}ms; log ${outcome.log}`);
  }
  // Human mode prints nothing on stdout: it belongs to the command.
  return { data, human: '', exitCode };
}
