import { randomUUID } from 'node:crypto';
import { WarrenError } from '../errors.js';
import type { WarrenConfig } from '../config/schema.js';

/**
 * Adapters from (agent, prompt) to a command line. No shell is ever involved: the prompt is one
 * argv element, the command's stdin, or a file, and reaches the agent byte for byte — quotes,
 * newlines and a leading `-` included. Where an agent's own option parser could read a prompt
 * as an option (or `-` as "read stdin"), the adapter uses stdin, a file or `--opt=VALUE`.
 *
 * The built-in flags are what each CLI needs to work unattended in a workspace, settled by
 * running the real CLIs against a scripted model server (test/agents-real.test.ts,
 * docs/agents.md). Each agent also gets a state folder of its own per task (`home`): its
 * config, sessions and history go there instead of the user's HOME (see agent-home.ts).
 */
export type PromptVia = 'argv' | 'stdin' | 'file';

export interface AgentInvocation {
  argv: string[];
  /** Text for the command's stdin; null leaves stdin empty. */
  stdin: string | null;
  /** The prompt written to this file first (prompt: file). */
  promptFile: string | null;
  /** Variables that point the agent at its own state folder for this task. */
  env: Record<string, string>;
  /** The conversation this run continues or starts, when it is known before the run (else read from `home` after it). */
  session: string | null;
}

export interface AgentRequest {
  prompt: string;
  /** Where a file prompt goes. */
  promptFile: string;
  /** The task's state folder for this agent. */
  home: string;
  /** Continue this conversation instead of starting one. */
  resume: string | null;
  /** warren's bwrap sandbox is around the agent: an agent's own nested sandbox is turned off. */
  sandboxed: boolean;
  /** Give the agent warren's MCP server, scoped to the task (`warren run --mcp`): the command line that starts it. */
  mcp?: readonly string[] | null;
}

/** The built-in agents warren can hand its MCP server to, through their own flags (`run --mcp`). */
export const MCP_AGENTS = ['claude', 'codex'] as const;

/** The name warren's MCP server is registered under in the agent: its tools are `mcp__warren__…` in Claude Code. */
export const MCP_SERVER_NAME = 'warren';

type Builder = (r: AgentRequest) => AgentInvocation;

/** The built-in agents that can continue a conversation (`warren run --resume`). */
export const RESUMABLE = ['claude', 'codex', 'gemini'] as const;
export type ResumableAgent = (typeof RESUMABLE)[number];

/** Built-in agents. A same-named entry under `agents:` in warren.yaml replaces one. */
export const BUILTIN_AGENTS = {
  // Claude Code: print mode reads the prompt from stdin. acceptEdits lets its file tools write,
  // `--allowedTools Bash` lets it run commands; without them `claude -p` refuses every tool
  // call and still exits 0. (--dangerously-skip-permissions is refused when run as root.)
  // warren names the session up front, so it is known even if the run is cut short.
  // With `mcp`, `--mcp-config` (a JSON string) adds warren's server for this run only, and
  // `--allowedTools mcp__warren` lets it call the server's tools unattended.
  claude: (r) => {
    const session = r.resume ?? randomUUID();
    const [command, ...args] = r.mcp ?? [];
    const mcp =
      command === undefined
        ? []
        : ['--mcp-config', JSON.stringify({ mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command, args } } })];
    return {
      argv: [
        'claude',
        '-p',
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        'Bash',
        ...(command === undefined ? [] : [`mcp__${MCP_SERVER_NAME}`]),
        ...mcp,
        ...(r.resume ? ['--resume', session] : ['--session-id', session]),
        '--settings',
        CLAUDE_FINAL_SETTINGS,
      ],
      stdin: r.prompt,
      promptFile: null,
      env: { CLAUDE_CONFIG_DIR: r.home },
      session,
    };
  },
  // Codex: `exec -` reads the prompt from stdin; `exec resume ID -` continues a session (under a
  // new id, read from its session files after the run). Its own workspace-write sandbox
  // confines its commands to the workspace; inside warren's bwrap that nested sandbox cannot
  // start, so it is turned off there — the case its flag exists for.
  // With `mcp`, `-c mcp_servers.warren.…` (TOML values; a JSON string or array of strings is one)
  // adds warren's server for this run only.
  codex: (r) => ({
    argv: [
      'codex',
      'exec',
      ...(r.sandboxed ? ['--dangerously-bypass-approvals-and-sandbox'] : ['--sandbox', 'workspace-write']),
      ...codexMcp(r.mcp ?? null),
      ...(r.resume ? ['resume', r.resume, '-'] : ['-']),
    ],
    stdin: r.prompt,
    promptFile: null,
    env: { CODEX_HOME: r.home },
    session: null,
  }),
  // Gemini CLI: the `=` form keeps a prompt that starts with "-" a value, not an option. It
  // refuses an untrusted folder unattended (--skip-trust) and offers no write or shell tool
  // without an approval mode that allows them (yolo). GEMINI_CLI_HOME stands in for HOME.
  gemini: (r) => {
    const session = r.resume ?? randomUUID();
    return {
      argv: [
        'gemini',
        '--skip-trust',
        '--approval-mode',
        'yolo',
        ...(r.resume ? ['--resume', session] : ['--session-id', session]),
        `--prompt=${r.prompt}`,
      ],
      stdin: null,
      promptFile: null,
      env: { GEMINI_CLI_HOME: r.home },
      session,
    };
  },
  // Aider: one message from a file, then exit; --yes-always since nobody is there to answer.
  aider: (r) => ({
    argv: ['aider', '--yes-always', '--message-file', r.promptFile],
    stdin: null,
    promptFile: r.promptFile,
    env: {},
    session: null,
  }),
} as const satisfies Record<string, Builder>;

function codexMcp(mcp: readonly string[] | null): string[] {
  const [command, ...args] = mcp ?? [];
  if (command === undefined) return [];
  const key = `mcp_servers.${MCP_SERVER_NAME}`;
  return ['-c', `${key}.command=${JSON.stringify(command)}`, '-c', `${key}.args=${JSON.stringify(args)}`];
}

export function agentNames(config: WarrenConfig): string[] {
  return [...new Set([...Object.keys(BUILTIN_AGENTS), ...Object.keys(config.agents ?? {})])].sort();
}

/** A warren.yaml entry of this name, if any (hasOwn: `toString` or `__proto__` must not reach Object.prototype). */
function customAgent(config: WarrenConfig, name: string) {
  const entry = config.agents && Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
  // An entry without a command tunes the built-in of its name; it is not an agent of its own.
  return entry?.command ? { ...entry, command: entry.command } : undefined;
}

/** The default of `agents.NAME.leftover_grace`. */
export const DEFAULT_LEFTOVER_GRACE = '30s';

/** How long `name` may be kept running by its leftovers once it gave its final result. */
export function leftoverGrace(config: WarrenConfig, name: string): string {
  const entry = config.agents && Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
  return entry?.leftover_grace ?? DEFAULT_LEFTOVER_GRACE;
}

/**
 * Claude Code's Stop hook, given with `--settings` (its own settings and the user's stay as they
 * are): it marks the final result, so warren knows when only leftover processes keep it alive.
 */
export const CLAUDE_FINAL_SETTINGS = JSON.stringify({
  hooks: { Stop: [{ hooks: [{ type: 'command', command: 'touch "$WARREN_AGENT_DONE"' }] }] },
});

/** Does warren.yaml define (or replace) this agent? Its command is then the repository's word. */
export function isRepositoryAgent(config: WarrenConfig, name: string): boolean {
  return customAgent(config, name) !== undefined;
}

/** Whether `name` is a built-in that keeps sessions warren can resume (a warren.yaml agent of that name replaces it). */
export function isResumable(config: WarrenConfig, name: string): name is ResumableAgent {
  return (RESUMABLE as readonly string[]).includes(name) && !customAgent(config, name);
}

/** Refuses an unknown agent (AGENT_UNKNOWN) before anything happens. */
export function assertAgentKnown(config: WarrenConfig, name: string): void {
  if (customAgent(config, name) || Object.hasOwn(BUILTIN_AGENTS, name)) return;
  throw new WarrenError('AGENT_UNKNOWN', `no agent named ${JSON.stringify(name)}; nothing was run.`, {
    hint: `Use one of ${agentNames(config).join(', ')}, or add it under \`agents:\` in warren.yaml.`,
  });
}

/**
 * Pure: which command line runs `name` with the request. A prompt that must go in argv and
 * holds a NUL byte is refused (USAGE): argv cannot carry it.
 */
export function buildAgentInvocation(config: WarrenConfig, name: string, request: AgentRequest): AgentInvocation {
  const invocation = invocationOf(config, name, request);
  if (request.prompt.includes('\0') && invocation.argv.some((arg) => arg.includes('\0'))) {
    throw new WarrenError(
      'USAGE',
      `the prompt contains a NUL byte, and agent ${name} takes its prompt as a command-line argument, which cannot carry one; nothing was run.`,
      {
        hint: 'Remove the NUL byte, or use an agent that reads its prompt from stdin or a file (`prompt: stdin` or `prompt: file` under `agents:` in warren.yaml).',
      },
    );
  }
  return invocation;
}

function invocationOf(config: WarrenConfig, name: string, request: AgentRequest): AgentInvocation {
  assertAgentKnown(config, name);
  const custom = customAgent(config, name);
  if (request.mcp && (custom || !(MCP_AGENTS as readonly string[]).includes(name))) {
    throw new WarrenError(
      'USAGE',
      `warren cannot hand its MCP server to agent ${name} for one run (--mcp works with ${MCP_AGENTS.join(' and ')}); nothing was run.`,
      {
        hint: "Leave out --mcp, or register `warren mcp` in that agent's own configuration (`warren help agents`, 'MCP servers in a task').",
      },
    );
  }
  if (custom) {
    const via: PromptVia = custom.prompt;
    const plain = { env: {}, session: null };
    if (via === 'argv') return { argv: [...custom.command, request.prompt], stdin: null, promptFile: null, ...plain };
    if (via === 'stdin') return { argv: [...custom.command], stdin: request.prompt, promptFile: null, ...plain };
    return { argv: [...custom.command, request.promptFile], stdin: null, promptFile: request.promptFile, ...plain };
  }
  return BUILTIN_AGENTS[name as keyof typeof BUILTIN_AGENTS](request);
}
