/**
 * The environment a sandboxed process is given: declared, never warren's own. warren's
 * environment is the user's shell's — an SSH agent's socket, a D-Bus session bus, a cloud
 * login, a token in a variable — and a command the agent wrote reads all of it. So a sandbox
 * gets this short list of the user's variables (what toolchains need to run and to talk to a
 * terminal), the names an agent needs to reach its model (AGENT_ENV), the names the user adds
 * in `$WARREN_HOME/config.yaml` (`sandbox_env`), and then the task's own (ports, services,
 * TMPDIR). A process that runs without a sandbox keeps warren's environment, as a command
 * the user typed would.
 */

/** What every sandboxed process may be given of the user's environment. */
export const SANDBOX_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'TZ',
  'CI',
  // A proxy the user's network needs (with `network: true`; an egress allow list sets its own).
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
];

/**
 * What each built-in agent needs to reach its model: its endpoint and key, its own settings. Not
 * given to other commands of the task (a test run has no business with the user's API key).
 */
export const AGENT_ENV: Readonly<Record<string, readonly string[]>> = {
  claude: ['ANTHROPIC_*', 'CLAUDE_*', 'DISABLE_*'],
  codex: ['OPENAI_*', 'CODEX_*'],
  gemini: ['GEMINI_*', 'GOOGLE_*'],
  aider: ['AIDER_*', 'OPENAI_*', 'ANTHROPIC_*', 'GEMINI_*', 'OPENROUTER_*', 'DEEPSEEK_*'],
};

/** Pure: does `name` match `pattern` (a name, or a prefix ending in `*`)? */
export function envNameMatches(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/** Pure: the variables of `from` that one of `patterns` names. */
export function pickEnv(from: NodeJS.ProcessEnv, patterns: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value !== undefined && patterns.some((p) => envNameMatches(p, name))) out[name] = value;
  }
  return out;
}
