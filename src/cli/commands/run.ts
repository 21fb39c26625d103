import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { readPromptFile, runAgent } from '../../run/operations.js';
import { sendReview } from '../../review/send.js';
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
    .option('--review', "the prompt is the task's open review comments (`warren comments`), each with its file:line and hunk; resolved when the agent exits 0")
    .option('--timeout <dur>', 'end the whole process tree after this long; exit 124')
    .action((rawId: string, opts: { agent: string; prompt?: string; promptFile?: string; review?: boolean; timeout?: string }) =>
      run(async (env) => {
        if ([opts.prompt, opts.promptFile, opts.review].filter((o) => o !== undefined).length !== 1) {
          throw new WarrenError('USAGE', 'give exactly one of --prompt, --prompt-file and --review; nothing was run.');
        }
        const timeoutMs = opts.timeout === undefined ? undefined : parseDuration(opts.timeout, '--timeout');
        if (opts.review) {
          const ctx = await env.project();
          const { comments, resolved, ...outcome } = await sendReview(ctx, rawId, { agent: opts.agent, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
          if (!env.json) env.log(`warren: sent ${comments.length} comment(s) to ${opts.agent}; ${resolved ? 'resolved' : 'left open'}`);
          const result = runResult(env, outcome);
          return { ...result, data: { ...(result.data as object), comments: comments.map((c) => ({ id: c.id, state: c.state })) } };
        }
        const prompt = opts.prompt ?? readPromptFile(path.resolve(env.repoDir, opts.promptFile ?? ''));
        const ctx = await env.project();
        const outcome = await runAgent(ctx, rawId, { agent: opts.agent, prompt, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
        return runResult(env, outcome);
      }),
    );
};
