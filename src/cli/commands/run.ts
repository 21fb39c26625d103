import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { readPromptFile, RESUME_PROMPT, runAgent } from '../../run/operations.js';
import { sendReview } from '../../review/send.js';
import { conflictNote, resolvePrompt } from '../../conflicts/prompt.js';
import { parseDuration } from '../../util/duration.js';
import type { Register } from '../command.js';
import { installedCommand } from '../installed.js';
import { runResult } from './exec.js';

export const registerRun: Register = (program, run) => {
  program
    .command('run')
    .description(
      'run a coding agent (claude, codex, gemini, aider, or one from warren.yaml) in the workspace, supervised',
    )
    .argument('<id>')
    .option(
      '--agent <name>',
      "claude | codex | gemini | aider | a name under agents: in warren.yaml (with --resume: default the newest conversation's)",
    )
    .option('--prompt <text>', 'the prompt, passed to the agent exactly as given')
    .option('--prompt-file <file>', 'read the prompt from this file')
    .option(
      '--resume',
      `continue the task's last conversation (claude, codex, gemini) with this prompt (without one: "${RESUME_PROMPT}")`,
    )
    .option(
      '--review',
      "the prompt is the task's open review comments (`warren comments`), each with its file:line and hunk; resolved when the agent exits 0",
    )
    .option(
      '--mcp',
      "give the agent warren's own MCP server for this run, serving this task alone (claude, codex; MCP servers you added to the agent yourself are not in the task's config folder)",
    )
    .option(
      '--resolve',
      "the prompt is the conflict `warren sync ID --keep` left in the workspace: each file's two sides and the base's commits there; `warren checkpoint ID` concludes it",
    )
    .option(
      '--tell-conflicts',
      "add a short note about the task's new conflicts (other tasks, its base: `warren conflicts`) to the prompt; `conflicts: { tell: true }` in warren.yaml does it for every run",
    )
    .option('--timeout <dur>', 'end the whole process tree after this long; exit 124')
    .action(
      (
        rawId: string,
        opts: {
          agent?: string;
          prompt?: string;
          promptFile?: string;
          resume?: boolean;
          review?: boolean;
          mcp?: boolean;
          resolve?: boolean;
          tellConflicts?: boolean;
          timeout?: string;
        },
      ) =>
        run(async (env) => {
          const given = [opts.prompt, opts.promptFile, opts.review, opts.resolve].filter((o) => o !== undefined).length;
          if (given > 1 || (given === 0 && !opts.resume)) {
            throw new WarrenError(
              'USAGE',
              `give exactly one of --prompt, --prompt-file, --review and --resolve (with --resume, none: it continues with "${RESUME_PROMPT}"); nothing was run.`,
            );
          }
          if (opts.agent === undefined && !opts.resume)
            throw new WarrenError(
              'USAGE',
              'give --agent NAME (or --resume to continue a conversation); nothing was run.',
            );
          const timeoutMs = opts.timeout === undefined ? undefined : parseDuration(opts.timeout, '--timeout');
          if (opts.review) {
            const ctx = await env.project();
            const { comments, resolved, ...outcome } = await sendReview(ctx, rawId, {
              ...(opts.agent === undefined ? {} : { agent: opts.agent }),
              ...(opts.resume ? { resume: true } : {}),
              ...(opts.mcp ? { mcp: installedCommand(env.io.self, process.env.PATH) } : {}),
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
            });
            if (!env.json)
              env.log(
                `warren: sent ${comments.length} comment(s) to ${outcome.agent}; ${resolved ? 'resolved' : 'left open'}`,
              );
            const result = runResult(env, outcome);
            return {
              ...result,
              data: {
                ...(result.data as object),
                agent: outcome.agent,
                session: outcome.session,
                comments: comments.map((c) => ({ id: c.id, state: c.state })),
              },
            };
          }
          const ctx = await env.project();
          const asked =
            opts.prompt ??
            (opts.resolve
              ? await resolvePrompt(ctx, rawId)
              : opts.promptFile === undefined
                ? RESUME_PROMPT
                : readPromptFile(path.resolve(env.repoDir, opts.promptFile)));
          if (opts.prompt === undefined && opts.promptFile === undefined && !opts.resolve && !env.json)
            env.log(`warren: no prompt given; continuing the conversation with "${RESUME_PROMPT}"`);
          // The note of new conflicts, asked for here or in warren.yaml: said on stderr too, never silent.
          const note =
            opts.tellConflicts === true || ctx.config.conflicts?.tell === true ? await conflictNote(ctx, rawId) : null;
          if (note) env.log(`warren: told the agent of new conflicts:\n${note}`);
          const prompt = note ? `${asked}\n\n${note}` : asked;
          const outcome = await runAgent(ctx, rawId, {
            prompt,
            ...(opts.agent === undefined ? {} : { agent: opts.agent }),
            ...(opts.resume ? { resume: true } : {}),
            ...(opts.mcp ? { mcp: installedCommand(env.io.self, process.env.PATH) } : {}),
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
          });
          const result = runResult(env, outcome);
          return { ...result, data: { ...(result.data as object), agent: outcome.agent, session: outcome.session } };
        }),
    );
};
