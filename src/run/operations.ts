import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { requireTask } from '../workspace/tasks.js';
import type { AgentSession } from './facts.js';
import type { Task } from '../state/types.js';
import { agentHome, codexSessionSince, seedAgentHome } from './agent-home.js';
import {
  buildAgentInvocation,
  isRepositoryAgent,
  isResumable,
  leftoverGrace,
  RESUMABLE,
  type ResumableAgent,
} from './agents.js';
import { taskTmp } from './task-tmp.js';
import { parseDuration } from '../util/duration.js';
import { sandboxProfileFor } from './sandbox.js';
import { AGENT_ENV } from './declared-env.js';
import { assertRunnable } from './task-env.js';
import { runInTask, type RunOutcome, type RunRequest } from './execute.js';
import { clusterOf } from './k8s/k8s-run.js';
import { logDir, newRunId } from './records.js';
import { assertTrusted } from '../trust/trust.js';
import { remoteHostName } from './ssh/hosts.js';

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

export async function execTask(
  ctx: ProjectContext,
  rawId: string,
  argv: readonly string[],
  options: ExecOptions = {},
): Promise<RunOutcome> {
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

/** The turn `warren run ID --resume` sends when no prompt is given. */
export const RESUME_PROMPT = 'continue';

export interface AgentOptions {
  /** The agent; with `resume`, defaults to the one whose conversation is newest. */
  agent?: string;
  prompt: string;
  timeoutMs?: number;
  /** Continue the task's last conversation with this agent (claude, codex, gemini) instead of starting one. */
  resume?: boolean;
  /**
   * Give the agent warren's own MCP server, scoped to this task (claude, codex): the command line
   * that starts warren (the CLI's installed `warren`); `--repo ROOT mcp --task ID` is added.
   */
  mcp?: readonly string[];
}

export interface AgentOutcome extends RunOutcome {
  agent: string;
  /** The conversation this run had (null when the agent keeps none warren can resume). */
  session: string | null;
}

/**
 * Runs a coding agent with a prompt; the prompt reaches it byte for byte (src/run/agents.ts).
 * Built-in agents keep their state in a folder of the task's own (agent-home.ts), and the
 * run's conversation is recorded (`agentSessions`, an `agent.session` event) for `--resume`.
 */
export async function runAgent(ctx: ProjectContext, rawId: string, options: AgentOptions): Promise<AgentOutcome> {
  const id = validateTaskId(rawId);
  if (options.agent === undefined && !options.resume)
    throw new WarrenError(
      'USAGE',
      'name the agent with --agent (or continue a conversation with --resume); nothing was run.',
    );
  if (options.agent !== undefined) {
    // Refused (AGENT_UNKNOWN, a prompt argv cannot carry, or an agent of warren.yaml's not
    // trusted yet) before the lock or any file: the same pure build the run does below.
    buildAgentInvocation(ctx.config, options.agent, {
      prompt: options.prompt,
      promptFile: '',
      home: '',
      resume: null,
      sandboxed: false,
      mcp: options.mcp ? mcpCommand(options.mcp, ctx.repo.root, id) : null,
    });
    if (isRepositoryAgent(ctx.config, options.agent))
      assertTrusted(ctx, ['agent'], 'Nothing was run.', [options.agent]);
  }
  return withTaskLock(ctx, id, `run ${options.agent ?? 'resume'}`, async () => {
    const task = requireTask(ctx, id);
    // Refused before the agent's state folder is made or seeded (runInTask checks it again).
    assertRunnable(task, 'agent');
    // A task in a cluster runs in its sandbox there, whatever warren.yaml's `sandbox:` says.
    const sandboxed = sandboxProfileFor(ctx, task).kind !== 'none' || clusterOf(ctx, task) !== null;
    if (options.mcp && sandboxed) {
      throw new WarrenError(
        'USAGE',
        `task ${id} runs in a sandbox, where warren's state (WARREN_HOME) is not visible, so \`warren mcp\` cannot run there; nothing was run.`,
        { hint: `Run it without --mcp, or make the task's sandbox none (\`warren new … --sandbox none\`).` },
      );
    }
    // A task on another machine: its agent runs there, where this warren's state is not.
    const onHost = remoteHostName(task);
    if (options.mcp && onHost !== null) {
      throw new WarrenError(
        'USAGE',
        `task ${id} runs on host ${onHost}, where this warren's state (WARREN_HOME) is not, so \`warren mcp\` cannot serve its agent there; nothing was run.`,
        { hint: `Run it without --mcp.` },
      );
    }
    const resumed = options.resume ? sessionToResume(ctx, task, options.agent) : null;
    const agent = resumed?.agent ?? options.agent ?? '';
    const promptFile = path.join(logDir(ctx.store, ctx.key, id), `${newRunId()}-prompt.txt`);
    const resumable = isResumable(ctx.config, agent);
    const home = resumable ? agentHome(ctx.store, ctx.key, id, agent) : '';
    // On a host, the host's warren seeds its own folder from its user's; this one gets the transcript back.
    if (resumable && onHost === null) seedTaskAgentHome(ctx, id, agent, home);
    const invocation = buildAgentInvocation(ctx.config, agent, {
      prompt: options.prompt,
      promptFile,
      home,
      resume: resumed?.id ?? null,
      sandboxed,
      mcp: options.mcp ? mcpCommand(options.mcp, ctx.repo.root, id) : null,
    });
    if (invocation.promptFile) fs.writeFileSync(invocation.promptFile, options.prompt, { mode: 0o600 });
    // The agent (or its hook: Claude Code's Stop) touches this once it gave its final result.
    const done = path.join(taskTmp(ctx.store, ctx.key, id), `.warren-agent-done-${randomUUID()}`);
    const graceMs = parseDuration(leftoverGrace(ctx.config, agent), `agents.${agent}.leftover_grace`);
    const started = Date.now();
    const ran = await runInTask(ctx, task, {
      kind: 'agent',
      label: agent,
      argv: invocation.argv,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      stdin: invocation.stdin === null ? 'ignore' : { text: invocation.stdin },
      output: ctx.reporter.output,
      env: { ...invocation.env, WARREN_AGENT_DONE: done },
      // In a sandbox, what reaches its model (its endpoint and key) and nothing else of the user's.
      passEnv: AGENT_ENV[agent] ?? [],
      writable: resumable ? [home] : [],
      final: {
        file: done,
        graceMs,
        agent,
        ...(resumable ? { home } : {}),
        ...(invocation.promptFile ? { promptFile: invocation.promptFile } : {}),
      },
    });
    fs.rmSync(done, { force: true });
    // Ended by warren after its final result: the agent's work is done, and the run says how it ended.
    const outcome = ran.endedAfterFinal
      ? {
          ...ran,
          exitCode: 0,
          signal: null,
          reason:
            ran.leftovers.length > 0
              ? `${agent} gave its final result; the processes it left were ended after ${graceMs / 1000}s`
              : `${agent} gave its final result but had not exited ${graceMs / 1000}s later; warren ended it`,
        }
      : ran;
    const session = resumable
      ? (invocation.session ?? (agent === 'codex' ? codexSessionSince(home, started) : null))
      : null;
    if (session)
      recordSession(
        ctx,
        id,
        { agent, id: session, runId: outcome.runId, at: new Date().toISOString() },
        resumed !== null,
      );
    return { ...outcome, agent, session };
  });
}

/**
 * The user's login and settings copied into the task's state folder of `agent` (agent-home.ts),
 * each copy and each link replaced said as an event. On an SSH runner's host, the host's user's.
 */
export function seedTaskAgentHome(
  ctx: ProjectContext,
  id: string,
  agent: ResumableAgent,
  home: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const { copied, replacedLinks } = seedAgentHome(agent, home, env);
  for (const link of replacedLinks) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'agent.link_replaced',
      level: 'warn',
      message: `${agent}: ${link.path} in the task's state folder was a symlink to ${link.target}; warren replaced the link (it wrote nothing through it)`,
      data: { agent, ...link },
    });
  }
  if (copied.length > 0) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'agent.seeded',
      message: `${agent}: copied ${copied.join(', ')} into the task's own state folder ${home}`,
      data: { agent, home, files: copied },
    });
  }
}

/** `warren mcp` for one task of this repository, whatever folder the agent starts it in. */
function mcpCommand(warren: readonly string[], root: string, id: string): string[] {
  return [...warren, '--repo', root, 'mcp', '--task', id];
}

/** The conversation `--resume` continues: the newest of `agent`'s, or of any agent's. */
function sessionToResume(ctx: ProjectContext, task: Task, agent: string | undefined): AgentSession {
  const sessions = task.data.agentSessions ?? [];
  const found = [...sessions].reverse().find((s) => agent === undefined || s.agent === agent);
  if (agent !== undefined && !isResumable(ctx.config, agent)) {
    throw new WarrenError(
      'AGENT_NO_SESSION',
      `agent ${agent} keeps no conversation warren can resume; nothing was run.`,
      {
        hint: `--resume works with ${RESUMABLE.join(', ')}; run \`warren run ${task.id} --agent ${agent} --prompt …\` to start again.`,
      },
    );
  }
  if (!found) {
    throw new WarrenError(
      'AGENT_NO_SESSION',
      `task ${task.id} has no conversation${agent ? ` with ${agent}` : ''} to resume; nothing was run.`,
      {
        hint: `Start one with \`warren run ${task.id} --agent ${agent ?? 'claude'} --prompt …\`.`,
      },
    );
  }
  return found;
}

function recordSession(ctx: ProjectContext, taskId: string, session: AgentSession, resumed: boolean): void {
  const task = requireTask(ctx, taskId);
  const others = (task.data.agentSessions ?? []).filter((s) => s.agent !== session.agent);
  ctx.store.mergeData(ctx.key, taskId, { agentSessions: [...others, session] });
  ctx.store.addEvent({
    project: ctx.key,
    taskId,
    kind: 'agent.session',
    message: `${session.agent} ${resumed ? 'continued' : 'started'} session ${session.id} (\`warren run ${taskId} --resume\` continues it)`,
    data: { agent: session.agent, session: session.id, runId: session.runId, resumed },
  });
}

/** Reads a prompt file for `run --prompt-file`, refusing (USAGE) one that cannot be read. */
export function readPromptFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new WarrenError(
      'USAGE',
      `cannot read --prompt-file ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}); nothing was run.`,
    );
  }
}
