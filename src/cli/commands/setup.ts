import { WarrenError } from '../../errors.js';
import { runSetup, verifyTask } from '../../run/steps.js';
import { requireTask } from '../../run/task.js';
import { withTaskLock } from '../../workspace/locks.js';
import type { Register } from '../command.js';

export const registerSetup: Register = (program, run) => {
  program
    .command('setup')
    .description("rerun the setup commands; a task in setup_failed becomes ready when they pass")
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const task = requireTask(ctx, rawId);
        if (task.state !== 'ready' && task.state !== 'setup_failed' && task.state !== 'landed') {
          throw new WarrenError('TASK_STATE', `task ${task.id} is in state ${task.state}; setup was not run.`);
        }
        const outcome = await withTaskLock(ctx, task.id, 'setup', () => runSetup(ctx, task, env.json ? 'stderr' : 'split'));
        if (outcome.state === 'ready' && task.state === 'setup_failed') ctx.store.setState(ctx.key, task.id, 'ready');
        const data = { state: outcome.state === 'ready' && task.state === 'landed' ? 'landed' : outcome.state, log: outcome.log, results: outcome.results };
        return {
          data,
          human: outcome.state === 'ready' ? `setup passed; ${task.id} is ${data.state}${outcome.log ? ` (log ${outcome.log})` : ''}` : `setup failed; ${task.id} stays setup_failed. Log: ${outcome.log}`,
          exitCode: outcome.state === 'ready' ? 0 : 1,
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
        const outcome = await verifyTask(ctx, rawId, env.json ? 'stderr' : 'split');
        const data = { passed: outcome.passed, log: outcome.log, results: outcome.results };
        const lines = outcome.results.map((r) => `  ${r.exitCode === 0 && !r.timedOut ? 'pass' : 'FAIL'} ${r.id}${r.required ? '' : ' (optional)'}${r.timedOut ? ' (timed out)' : ''}`);
        return {
          data,
          human: [`verify ${outcome.passed ? 'passed' : 'failed'}${outcome.log ? ` (log ${outcome.log})` : ''}`, ...lines].join('\n'),
          exitCode: outcome.passed ? 0 : 1,
        };
      }),
    );
};
