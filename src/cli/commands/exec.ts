import { exitStatusOf, type RunOutcome } from '../../run/execute.js';
import { execTask } from '../../run/operations.js';
import { parseDuration } from '../../util/duration.js';
import { WarrenError } from '../../errors.js';
import type { CliEnv, CommandResult, Register } from '../command.js';

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
        const outcome = await execTask(ctx, rawId, argv, { stdin: 'inherit', ...(timeoutMs === undefined ? {} : { timeoutMs }) });
        return runResult(env, outcome);
      }),
    );
};

/** `exec` and `run` report alike: the data on stdout (--json), a summary on stderr for people. */
export function runResult(env: CliEnv, outcome: RunOutcome): CommandResult {
  const data = {
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    durationMs: outcome.durationMs,
    log: outcome.log,
    signal: outcome.signal,
    canceledBy: outcome.canceledBy,
    sandbox: outcome.sandbox,
    reason: outcome.reason,
    runId: outcome.runId,
  };
  const exitCode = exitStatusOf(outcome);
  if (!env.json && exitCode !== 0) {
    // A reason the run wrote itself was on the terminal a moment ago, with the run's output: not said twice.
    const why = outcome.reasonInOutput ? `not run (exit ${outcome.exitCode}, said above)` : (outcome.reason ?? `exit ${outcome.exitCode}`);
    env.log(`warren: ${why} after ${outcome.durationMs}ms; log ${outcome.log}`);
  }
  // Human mode prints nothing on stdout: it belongs to the command.
  return { data, human: '', exitCode };
}

/**
 * Pure: refuses an `exec` whose command has a word starting with `-` and no `--` before it.
 * warren would read such a word as its own option: an unknown one fails, a known one
 * (`--timeout`, `--json`) is silently taken from the command. Options before the command's first
 * word are warren's; `exec ID -- CMD ARGS` passes every word after `--` to CMD untouched.
 */
export function checkExecArgv(argv: readonly string[]): void {
  let i = 0;
  // Global options, then the command name.
  while (i < argv.length && argv[i]?.startsWith('-') && argv[i] !== '--') i += argv[i] === '--repo' ? 2 : 1;
  if (argv[i] !== 'exec') return;
  const rest = argv.slice(i + 1);
  const own: string[] = [];
  let id: string | null = null;
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j] ?? '';
    if (word === '--') return;
    if (word.startsWith('-')) {
      own.push(word);
      if (word === '--timeout' || word === '--repo') own.push(rest[++j] ?? '');
      continue;
    }
    if (id === null) {
      id = word;
      continue;
    }
    // The command's first word: a word after it that starts with `-` needs `--` before the command.
    const command = rest.slice(j);
    const option = command.find((w) => w.startsWith('-'));
    if (option === undefined || command.includes('--')) return;
    throw new WarrenError('USAGE', `\`warren exec\` would read ${JSON.stringify(option)} as its own option, not as part of the command; nothing was run.`, {
      hint: `Put the command after \`--\`: warren exec ${[id, ...own].join(' ')} -- ${command.join(' ')} (warren's own options, such as --timeout, go before \`--\`).`,
    });
  }
}
