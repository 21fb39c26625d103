import { createHash } from 'node:crypto';
import type { WarrenConfig } from './schema.js';

/**
 * The commands a repository's warren.yaml makes warren run: setup, verify, teardown and its
 * own agents. A freshly cloned repository is someone else's word, so these run only once the
 * user has trusted this exact set (src/run/trust.ts); this module is the pure part: the set in
 * one canonical form, its hash, and what differs from a set trusted before.
 */

export type RepoCommandKind = 'setup' | 'verify' | 'teardown' | 'agent';

export interface RepoCommand {
  kind: RepoCommandKind;
  /** The step's id, or the agent's name. */
  id: string;
  /** A string runs with `sh -c`; a list is an argv. */
  run: string | string[];
  /** Agents only: how the prompt reaches the command. */
  prompt?: 'argv' | 'stdin' | 'file';
}

/** Bump when the canonical form changes: every trust recorded before is then asked for again. */
const FORM = 'warren-commands-v1';

/**
 * The set in a fixed order (setup, verify and teardown in the order they run, agents by name)
 * with fixed keys: the same warren.yaml commands always give the same list and hash, whatever
 * the file's formatting, comments, timeouts or other keys.
 */
export function repoCommands(config: WarrenConfig): RepoCommand[] {
  const steps = (
    kind: 'setup' | 'verify' | 'teardown',
    list: readonly { id: string; run: string | string[] }[],
  ): RepoCommand[] => list.map((s) => ({ kind, id: s.id, run: typeof s.run === 'string' ? s.run : [...s.run] }));
  const agents = Object.entries(config.agents ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, a]): RepoCommand => ({ kind: 'agent', id: name, run: [...a.command], prompt: a.prompt }));
  return [
    ...steps('setup', config.setup),
    ...steps('verify', config.verify),
    ...steps('teardown', config.teardown),
    ...agents,
  ];
}

/** sha256 of the canonical form, hex. */
export function commandsHash(commands: readonly RepoCommand[]): string {
  return createHash('sha256')
    .update(`${FORM}\n${JSON.stringify(commands.map(canonical))}`)
    .digest('hex');
}

/** Fixed key order, so equal commands serialise equally. */
function canonical(c: RepoCommand): RepoCommand {
  return { kind: c.kind, id: c.id, run: c.run, ...(c.prompt ? { prompt: c.prompt } : {}) };
}

/** One line a person can read: `setup deps: npm ci`, `agent fake: ["node","agent.js"] (prompt on stdin)`. */
export function describeCommand(c: RepoCommand): string {
  const run = typeof c.run === 'string' ? c.run : JSON.stringify(c.run);
  return `${c.kind} ${c.id}: ${run}${c.prompt ? ` (prompt ${c.prompt === 'argv' ? 'as the last argument' : c.prompt === 'stdin' ? 'on stdin' : 'in a file'})` : ''}`;
}

/** The commands of `now` that are new or different from the set trusted before (pure). */
export function changedCommands(now: readonly RepoCommand[], before: unknown): RepoCommand[] {
  if (!Array.isArray(before)) return [...now];
  const seen = new Set((before as RepoCommand[]).map((c) => JSON.stringify(canonical(c))));
  return now.filter((c) => !seen.has(JSON.stringify(canonical(c))));
}
