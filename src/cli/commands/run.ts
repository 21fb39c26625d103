import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { buildAgentInvocation } from '../../run/agents.js';
import { runInTask } from '../../run/execute.js';
import { logDir, newRunId } from '../../run/records.js';
import { requireTask } from '../../run/task.js';
import { parseDuration } from '../../util/duration.js';
import { withTaskLock } from '../../workspace/locks.js';
import type { Register } from '../command.js';
import { runResult } from './exec.js';

export const registerRun: Register = (program, run) => {
  program
    .command('run')
    .description('run a coding agent (claude, codex, gemini, aider, or one from warren.yaml) in the workspace, supervised')
    .argument('<id>')
    .requiredOption('--agent <name>', 'claude | codex | gemini | aider | a name under agents: in warren.yaml')
    .option('--prompt <text>', 'the prompt, passed to the agent exactly as given')
    .option('--prompt-file <file>', 'read the prompt from this file')
    .option('--timeout <dur>', 'end the whole process tree after this long; exit 124')
    .action((rawId: string, opts: { agent: string; prompt?: string; promptFile?: string; timeout?: string }) =>
      run(async (env) => {
        if ((opts.prompt === undefined) === (opts.promptFile === undefined)) {
          throw new WarrenError('USAGE', 'give exactly one of --prompt and --prompt-file; nothing was run.');
        }
        const timeoutMs = opts.timeout === undefined ? undefined : parseDuration(opts.timeout, '--timeout');
        const prompt = opts.prompt ?? readPrompt(path.resolve(env.repoDir, opts.promptFile ?? ''));
        const ctx = await env.project();
        const task = requireTask(ctx, rawId);
        const promptFile = path.join(logDir(ctx.store, ctx.key, task.id), `${newRunId()}-prompt.txt`);
        const invocation = buildAgentInvocation(ctx.config, opts.agent, prompt, promptFile);
        const outcome = await withTaskLock(ctx, task.id, `run ${opts.agent}`, async () => {
          if (invocation.promptFile) fs.writeFileSync(invocation.promptFile, prompt, { mode: 0o600 });
          return runInTask(ctx, task, {
            kind: 'agent',
            label: opts.agent,
            argv: invocation.argv,
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
            stdin: invocation.stdin === null ? 'ignore' : { text: invocation.stdin },
            echo: env.json ? 'stderr' : 'split',
          });
        });
        return runResult(env, outcome);
      }),
    );
};

function readPrompt(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new WarrenError('USAGE', `cannot read --prompt-file ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}); nothing was run.`);
  }
}
