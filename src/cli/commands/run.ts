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
    .option('--agent <name>', 'claude | codex | gemini | aider | a name under agents: in warren.yaml (with --resume: default the newest conversation\'s)')
    .option('--prompt <text>', 'the prompt, passed to the agent exactly as given')
    .option('--prompt-file <file>', 'read the prompt from this file')
    .option('--resume', 'continue the task\'s last conversation (claude, codex, gemini) with this prompt')
    .option('--timeout <dur>', 'end the whole process tree after this long; exit 124')
    .action((rawId: string, opts: { agent?: string; prompt?: string; promptFile?: string; resume?: boolean; timeout?: string }) =>
      run(async (env) => {
        if ((opts.prompt === undefined) === (opts.promptFile === undefined)) {
          throw new WarrenError('USAGE', 'give exactly one of --prompt and --prompt-file; nothing was run.');
        }
        if (opts.agent === undefined && !opts.resume) throw new WarrenError('USAGE', 'give --agent NAME (or --resume to continue a conversation); nothing was run.');
        const timeoutMs = opts.timeout === undefined ? undefined : parseDuration(opts.timeout, '--timeout');
        const prompt = opts.prompt ?? readPromptFile(path.resolve(env.repoDir, opts.promptFile ?? ''));
        const ctx = await env.project();
        const outcome = await runAgent(ctx, rawId, {
          prompt,
          ...(opts.agent === undefined ? {} : { agent: opts.agent }),
          ...(opts.resume ? { resume: true } : {}),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
        });
        const result = runResult(env, outcome);
        return { ...result, data: { ...(result.data as object), agent: outcome.agent, session: outcome.session } };
      }),
    );
};
