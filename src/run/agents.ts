import { WarrenError } from '../errors.js';
import type { WarrenConfig } from '../config/schema.js';

/**
 * Adapters from (agent, prompt) to a command line. No shell is ever involved: the prompt is one
 * argv element, the command's stdin, or a file, and reaches the agent byte for byte — quotes,
 * newlines and a leading `-` included. Where an agent's own option parser could read a prompt
 * as an option (or `-` as "read stdin"), the adapter uses stdin, a file or `--opt=VALUE`.
 */
export type PromptVia = 'argv' | 'stdin' | 'file';

export interface AgentInvocation {
  argv: string[];
  /** Text for the command's stdin; null leaves stdin empty. */
  stdin: string | null;
  /** The prompt written to this file first (prompt: file). */
  promptFile: string | null;
}

type Builder = (prompt: string, promptFile: string) => AgentInvocation;

/** Built-in agents. A same-named entry under `agents:` in warren.yaml replaces one. */
export const BUILTIN_AGENTS = {
  // Claude Code: print mode reads the prompt from stdin when no prompt argument is given.
  claude: (prompt) => ({ argv: ['claude', '-p'], stdin: prompt, promptFile: null }),
  // Codex: `exec -` reads the prompt from stdin (a prompt argument "-" would mean the same).
  codex: (prompt) => ({ argv: ['codex', 'exec', '-'], stdin: prompt, promptFile: null }),
  // Gemini CLI: the `=` form keeps a prompt that starts with "-" a value, not an option.
  gemini: (prompt) => ({ argv: ['gemini', `--prompt=${prompt}`], stdin: null, promptFile: null }),
  // Aider: one message from a file, then exit; --yes-always since nobody is there to answer.
  aider: (_prompt, file) => ({ argv: ['aider', '--yes-always', '--message-file', file], stdin: null, promptFile: file }),
} as const satisfies Record<string, Builder>;

export function agentNames(config: WarrenConfig): string[] {
  return [...new Set([...Object.keys(BUILTIN_AGENTS), ...Object.keys(config.agents ?? {})])].sort();
}

/** Does warren.yaml define (or replace) this agent? Its command is then the repository's word. */
export function isRepositoryAgent(config: WarrenConfig, name: string): boolean {
  return config.agents !== undefined && Object.hasOwn(config.agents, name);
}

/**
 * Pure: which command line runs `name` with `prompt`. `promptFile` is where a file prompt goes.
 * A prompt that must go in argv and holds a NUL byte is refused (USAGE): argv cannot carry it.
 */
export function buildAgentInvocation(config: WarrenConfig, name: string, prompt: string, promptFile: string): AgentInvocation {
  const invocation = invocationOf(config, name, prompt, promptFile);
  if (prompt.includes('\0') && invocation.argv.some((arg) => arg.includes('\0'))) {
    throw new WarrenError('USAGE', `the prompt contains a NUL byte, and agent ${name} takes its prompt as a command-line argument, which cannot carry one; nothing was run.`, {
      hint: 'Remove the NUL byte, or use an agent that reads its prompt from stdin or a file (`prompt: stdin` or `prompt: file` under `agents:` in warren.yaml).',
    });
  }
  return invocation;
}

function invocationOf(config: WarrenConfig, name: string, prompt: string, promptFile: string): AgentInvocation {
  // hasOwn: a name like `toString` or `__proto__` must not reach Object.prototype.
  const custom = isRepositoryAgent(config, name) ? config.agents?.[name] : undefined;
  if (custom) {
    const via: PromptVia = custom.prompt;
    if (via === 'argv') return { argv: [...custom.command, prompt], stdin: null, promptFile: null };
    if (via === 'stdin') return { argv: [...custom.command], stdin: prompt, promptFile: null };
    return { argv: [...custom.command, promptFile], stdin: null, promptFile };
  }
  if (Object.hasOwn(BUILTIN_AGENTS, name)) return BUILTIN_AGENTS[name as keyof typeof BUILTIN_AGENTS](prompt, promptFile);
  throw new WarrenError('AGENT_UNKNOWN', `no agent named ${JSON.stringify(name)}; nothing was run.`, {
    hint: `Use one of ${agentNames(config).join(', ')}, or add it under \`agents:\` in warren.yaml.`,
  });
}
