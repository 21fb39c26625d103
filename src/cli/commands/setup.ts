import { setupTask, verifyTask } from '../../run/setup-verify.js';
import type { Register } from '../command.js';
import { verifyView } from '../../views/runs.js';

export const registerSetup: Register = (program, run) => {
  program
    .command('setup')
    .description('rerun the setup commands; a task in setup_failed becomes ready when they pass')
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const outcome = await setupTask(ctx, rawId);
        const data = { state: outcome.state, log: outcome.log, results: outcome.results };
        return {
          data,
          human: outcome.passed
            ? `setup passed; ${rawId} is ${outcome.state}${outcome.log ? ` (log ${outcome.log})` : ''}`
            : `setup failed; ${rawId} is ${outcome.state}. Log: ${outcome.log}`,
          exitCode: outcome.passed ? 0 : 1,
        };
      }),
    );
};

export const registerVerify: Register = (program, run) => {
  program
    .command('verify')
    .description('run the verify commands; exit 1 when a required one fails')
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const outcome = await verifyTask(ctx, rawId);
        const data = verifyView(outcome);
        const lines = outcome.results.map(
          (r) =>
            `  ${r.exitCode === 0 && !r.timedOut ? 'pass' : 'FAIL'} ${r.id}${r.required ? '' : ' (optional)'}${r.timedOut ? ' (timed out)' : ''}`,
        );
        return {
          data,
          human: [
            `verify ${outcome.passed ? 'passed' : 'failed'}${outcome.log ? ` (log ${outcome.log})` : ''}`,
            ...lines,
          ].join('\n'),
          exitCode: outcome.passed ? 0 : 1,
        };
      }),
    );
};
