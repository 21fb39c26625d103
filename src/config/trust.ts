import { createHash } from 'node:crypto';
import type { WarrenConfig } from './schema.js';

/**
 * The commands a repository's warren.yaml makes warren run — setup, verify, teardown and its
 * own agents — and the settings that bound them: the sandbox (and its allow list), the network,
 * the protected paths, the gate and the signed run policy. A freshly cloned repository is
 * someone else's word, and a landed task's warren.yaml is its agent's: these count only once
 * the user has trusted this exact set (src/run/trust.ts). This module is the pure part: the set
 * in one canonical form, its hash, and what differs from a set trusted before.
 */

export type RepoCommandKind = 'setup' | 'verify' | 'teardown' | 'agent' | 'service' | 'setting';

export interface RepoCommand {
  kind: RepoCommandKind;
  /** The step's id, the agent's name, the service's name, or the setting's key. */
  id: string;
  /**
   * A string runs with `sh -c`; a list is an argv. A setting: its value, as canonical JSON. A
   * service: its command (`run:`), or what it makes, as canonical JSON (a database cloned from a
   * template, or seeded by a command or SQL file).
   */
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
    .flatMap(([name, a]): RepoCommand[] =>
      a.command ? [{ kind: 'agent', id: name, run: [...a.command], prompt: a.prompt }] : [],
    );
  return [
    ...steps('setup', config.setup),
    ...steps('verify', config.verify),
    ...steps('teardown', config.teardown),
    ...agents,
    ...serviceCommands(config),
  ];
}

/**
 * Services by name: a `run:` service is its command; a database is what it is cloned from or
 * seeded with (a seed command runs like setup does; a template names a database of the user's
 * server to copy); a redis runs warren's own server, and is listed so that adding one is seen.
 */
function serviceCommands(config: WarrenConfig): RepoCommand[] {
  return Object.entries(config.services ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, s]): RepoCommand => {
      if (s.kind === 'run') return { kind: 'service', id: name, run: typeof s.run === 'string' ? s.run : [...s.run] };
      if (s.kind === 'redis') return { kind: 'service', id: name, run: JSON.stringify({ kind: 'redis' }) };
      const seed = s.seed && 'run' in s.seed ? { run: s.seed.run, inputs: s.seed.inputs ?? [] } : s.seed;
      return {
        kind: 'service',
        id: name,
        run: JSON.stringify({
          kind: 'postgres',
          ...(s.template ? { template: s.template } : {}),
          ...(seed ? { seed } : {}),
        }),
      };
    });
}

/**
 * The security-relevant settings, each present only when warren.yaml sets it (a deleted key
 * changes the set as much as an edited one): `sandbox` (its allow list included), `network`,
 * `protected`, `land.gate`, and the run policy (warren.policy.yaml, by its sha256).
 */
export function securitySettings(config: WarrenConfig, policySha256: string | null): RepoCommand[] {
  // Each as it acts: `sandbox: none` is no sandbox, as is no key; `network: false` is the default.
  const settings: [string, unknown][] = [
    ['sandbox', config.sandbox === 'none' ? undefined : config.sandbox],
    ['network', config.network === true ? true : undefined],
    ['protected', config.protected.length > 0 ? config.protected : undefined],
    ['land.gate', config.land?.gate],
    ['policy', policySha256 === null ? undefined : `warren.policy.yaml sha256 ${policySha256}`],
  ];
  return settings
    .filter(([, value]) => value !== undefined)
    .map(([id, value]) => ({ kind: 'setting', id, run: JSON.stringify(value) }));
}

/** The whole set a user trusts: the commands, then the settings. */
export function trustedSet(config: WarrenConfig, policySha256: string | null): RepoCommand[] {
  return [...repoCommands(config), ...securitySettings(config, policySha256)];
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
  if (c.kind === 'setting') return `setting ${c.id}: ${typeof c.run === 'string' ? c.run : JSON.stringify(c.run)}`;
  const run = typeof c.run === 'string' ? c.run : JSON.stringify(c.run);
  return `${c.kind} ${c.id}: ${run}${c.prompt ? ` (prompt ${c.prompt === 'argv' ? 'as the last argument' : c.prompt === 'stdin' ? 'on stdin' : 'in a file'})` : ''}`;
}

/** The commands of `now` that are new or different from the set trusted before (pure). */
export function changedCommands(now: readonly RepoCommand[], before: unknown): RepoCommand[] {
  if (!Array.isArray(before)) return [...now];
  const seen = new Set((before as RepoCommand[]).map((c) => JSON.stringify(canonical(c))));
  return now.filter((c) => !seen.has(JSON.stringify(canonical(c))));
}

/** The commands of the set trusted before that `now` no longer has (by kind and id; settings apart). Pure. */
export function removedCommands(now: readonly RepoCommand[], before: unknown): RepoCommand[] {
  if (!Array.isArray(before)) return [];
  const ids = new Set(now.map((c) => `${c.kind}\0${c.id}`));
  return (before as RepoCommand[]).filter((c) => c.kind !== 'setting' && !ids.has(`${c.kind}\0${c.id}`));
}

/** Pure: the settings of `now` that differ from those trusted before, each as `key: before → now` (`(unset)` when absent). */
export function changedSettings(now: readonly RepoCommand[], before: unknown): string[] {
  const was = new Map(
    (Array.isArray(before) ? (before as RepoCommand[]) : [])
      .filter((c) => c.kind === 'setting')
      .map((c) => [c.id, c.run]),
  );
  const is = new Map(now.filter((c) => c.kind === 'setting').map((c) => [c.id, c.run]));
  const keys = [...new Set([...was.keys(), ...is.keys()])].sort();
  return keys
    .filter((k) => JSON.stringify(was.get(k)) !== JSON.stringify(is.get(k)))
    .map((k) => `${k}: ${String(was.get(k) ?? '(unset)')} → ${String(is.get(k) ?? '(unset)')}`);
}
