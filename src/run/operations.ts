import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { requireTask } from '../workspace/tasks.js';
import { buildAgentInvocation, isRepositoryAgent } from './agents.js';
import { runInTask, type RunOutcome, type RunRequest } from './execute.js';
import { logDir, newRunId } from './records.js';
import { assertTrusted } from './trust.js';

/**
 * `warren exec` and `warren run` as library calls. Each holds the task lock for the whole run:
 * rm, setup, checkpoint or land cannot change the workspace under a running command, and one
 * supervised command at a time is what a task is for. Output goes to the context's reporter.
 */

export interface ExecOptions {
  timeoutMs?: number;
  /** Default: none (a program embedding warren); the CLI passes its own stdin. */
  stdin?: RunRequest['stdin'];
}

export async function execTask(ctx: ProjectContext, rawId: string, argv: readonly string[], options: ExecOptions = {}): Promise<RunOutcome> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `exec ${argv[0] ?? ''}`, () =>
    runInTask(ctx, requireTask(ctx, id), {
      kind: 'exec',
      label: argv[0] ?? 'exec',
      argv,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      stdin: options.stdin ?? 'ignore',
      output: ctx.reporter.output,
    }),
  );
}

export interface AgentOptions {
  agent: string;
  prompt: string;
  timeoutMs?: number;
}

/** Runs a coding agent with a prompt; the prompt reaches it byte for byte (src/run/agents.ts). */
export async function runAgent(ctx: ProjectContext, rawId: string, options: AgentOptions): Promise<RunOutcome> {
  const id = validateTaskId(rawId);
  const promptFile = path.join(logDir(ctx.store, ctx.key, id), `${newRunId()}-prompt.txt`);
  // Refused (AGENT_UNKNOWN, or an agent of warren.yaml's not trusted yet) before the lock or any file.
  const invocation = buildAgentInvocation(ctx.config, options.agent, options.prompt, promptFile);
  if (isRepositoryAgent(ctx.config, options.agent)) assertTrusted(ctx, ['agent'], 'Nothing was run.', [options.agent]);
  return withTaskLock(ctx, id, `run ${options.agent}`, async () => {
    const task = requireTask(ctx, id);
    if (invocation.promptFile) fs.writeFileSync(invocation.promptFile, options.prompt, { mode: 0o600 });
    return runInTask(ctx, task, {
      kind: 'agent',
      label: options.agent,
      argv: invocation.argv,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      stdin: invocation.stdin === null ? 'ignore' : { text: invocation.stdin },
      output: ctx.reporter.output,
    });
  });
}

/** Reads a prompt file for `run --prompt-file`, refusing (USAGE) one that cannot be read. */
export function readPromptFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new WarrenError('USAGE', `cannot read --prompt-file ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}); nothing was run.`);
  }
}
