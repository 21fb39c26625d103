import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { readPromptFile, runAgent } from '../../run/operations.js';
import { parseDuration } from '../../util/duration.js';
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
        const prompt = opts.prompt ?? readPromptFile(path.resolve(env.repoDir, opts.promptFile ?? ''));
        const ctx = await env.project();
        const outcome = await runAgent(ctx, rawId, { agent: opts.agent, prompt, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
        return runResult(env, outcome);
      }),
    );
};
