import { createHash } from 'node:crypto';
import { DEFAULT_CONFIG } from './load.js';
import type { ServiceConfig, WarrenConfig } from './schema.js';
import { CONFIG_TRUST } from './trust-rule.js';

/**
 * The commands a repository's warren.yaml makes warren run — setup, verify, teardown, its own
 * agents and services — and every setting that changes what a later task sees or keeps: each
 * key of warren.yaml as its rule says (trust-rule.ts: trusted unless shown free), with the
 * signed run policy and `.worktreeinclude` beside it. A freshly cloned repository is someone
 * else's word, and a landed task's warren.yaml is its agent's: these count only once the user
 * has trusted this exact set (src/trust/trust.ts). This module is the pure part: the set in one
 * canonical form, its hash, and what differs from a set trusted before.
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
  /** Services only, when not the kind's own: the variable the task's commands find its URL in. */
  env?: string;
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
      const env = s.env !== undefined && s.env !== SERVICE_ENV[s.kind] ? { env: s.env } : {};
      return { kind: 'service', id: name, run: trustedRun(s), ...env };
    });
}

type ServiceOf<K extends ServiceConfig['kind']> = Extract<ServiceConfig, { kind: K }>;

/**
 * What of a service of each kind is trusted (the rest of the service kinds' table is
 * src/services/kinds.ts, above this layer): a new kind without an entry does not compile.
 */
const TRUSTED_RUN: { [K in ServiceConfig['kind']]: (s: ServiceOf<K>) => string | string[] } = {
  run: (s) => (typeof s.run === 'string' ? s.run : [...s.run]),
  redis: () => JSON.stringify({ kind: 'redis' }),
  postgres: (s) => {
    const seed = s.seed && 'run' in s.seed ? { run: s.seed.run, inputs: s.seed.inputs ?? [] } : s.seed;
    return JSON.stringify({
      kind: 'postgres',
      ...(s.template ? { template: s.template } : {}),
      ...(seed ? { seed } : {}),
      // How much of the shared server its role may take: counted once set (none keeps old hashes).
      ...(s.limits ? { limits: s.limits } : {}),
    });
  },
};

function trustedRun(s: ServiceConfig): string | string[] {
  return (TRUSTED_RUN[s.kind] as (s: ServiceConfig) => string | string[])(s);
}

/** The variable each kind's URL is in unless `env:` says otherwise (the schema's defaults). */
const SERVICE_ENV: Record<ServiceConfig['kind'], string | undefined> = {
  postgres: 'DATABASE_URL',
  redis: 'REDIS_URL',
  run: undefined,
};

/**
 * The files beside warren.yaml that the set counts: the signed run policy (warren.policy.yaml,
 * by its sha256) and `.worktreeinclude` (its text; null when it is absent or not a plain file,
 * which provisioning does not read).
 */
export interface TrustedFiles {
  policySha256: string | null;
  worktreeInclude: string | null;
}

/**
 * The settings of the set: every key of warren.yaml that trust-rule.ts counts by its value, in
 * its table's order, then the policy and `.worktreeinclude`. Each is present only when it acts
 * otherwise than warren's default (a deleted key changes the set as much as an edited one).
 */
export function securitySettings(config: WarrenConfig, files: TrustedFiles): RepoCommand[] {
  const settings: [string, unknown][] = [];
  for (const [key, rule] of Object.entries(CONFIG_TRUST)) {
    if (rule === 'setting') settings.push([key, asItActs(key, config)]);
    else if (typeof rule === 'object' && 'keys' in rule)
      for (const [sub, subRule] of Object.entries(rule.keys))
        if (subRule === 'setting') settings.push([`${key}.${sub}`, asItActs(`${key}.${sub}`, config)]);
  }
  settings.push(
    ['policy', files.policySha256 === null ? undefined : `warren.policy.yaml sha256 ${files.policySha256}`],
    ['.worktreeinclude', includePatterns(files.worktreeInclude)],
  );
  return settings
    .filter(([, value]) => value !== undefined)
    .map(([id, value]) => ({ kind: 'setting', id, run: JSON.stringify(value) }));
}

/** A setting as it acts, or undefined when it acts as warren's default (no key, `[]`, `{}`, the schema's default). */
function asItActs(id: string, config: WarrenConfig): unknown {
  const special = AS_IT_ACTS[id];
  if (special) return special(config);
  const [key, sub] = id.split('.') as [keyof WarrenConfig, string | undefined];
  const value: unknown = sub === undefined ? config[key] : (config[key] as Record<string, unknown> | undefined)?.[sub];
  if (value === undefined) return undefined;
  if (sub === undefined && JSON.stringify(value) === JSON.stringify(DEFAULT_CONFIG[key])) return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  if (typeof value === 'object' && value !== null && Object.values(value).every((v) => v === undefined))
    return undefined;
  return value;
}

/** Settings whose default is not what the schema fills in. */
const AS_IT_ACTS: Record<string, (config: WarrenConfig) => unknown> = {
  // `network: false` is the default.
  network: (config) => (config.network === true ? true : undefined),
  // An empty gate is no gate, not the default. Without `land.gate`, the gate is the required
  // verify commands: counted when one is not required (all of them are every verify command,
  // which the commands count already).
  'land.gate': (config) =>
    config.land?.gate ??
    (config.verify.some((v) => v.required === false)
      ? config.verify.filter((v) => v.required !== false).map((v) => v.id)
      : undefined),
};

/** `.worktreeinclude`'s patterns as git reads them: blank lines and `#` comments select nothing. Pure. */
function includePatterns(text: string | null): string[] | undefined {
  if (text === null) return undefined;
  const patterns = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  return patterns.length > 0 ? patterns : undefined;
}

/** The whole set a user trusts: the commands, then the settings. */
export function trustedSet(config: WarrenConfig, files: TrustedFiles): RepoCommand[] {
  return [...repoCommands(config), ...securitySettings(config, files)];
}

/** sha256 of the canonical form, hex. */
export function commandsHash(commands: readonly RepoCommand[]): string {
  return createHash('sha256')
    .update(`${FORM}\n${JSON.stringify(commands.map(canonical))}`)
    .digest('hex');
}

/** Fixed key order, so equal commands serialise equally. */
function canonical(c: RepoCommand): RepoCommand {
  return {
    kind: c.kind,
    id: c.id,
    run: c.run,
    ...(c.prompt ? { prompt: c.prompt } : {}),
    ...(c.env ? { env: c.env } : {}),
  };
}

/** One line a person can read: `setup deps: npm ci`, `agent fake: ["node","agent.js"] (prompt on stdin)`. */
export function describeCommand(c: RepoCommand): string {
  if (c.kind === 'setting') return `setting ${c.id}: ${typeof c.run === 'string' ? c.run : JSON.stringify(c.run)}`;
  const run = typeof c.run === 'string' ? c.run : JSON.stringify(c.run);
  const prompt = c.prompt
    ? ` (prompt ${c.prompt === 'argv' ? 'as the last argument' : c.prompt === 'stdin' ? 'on stdin' : 'in a file'})`
    : '';
  return `${c.kind} ${c.id}: ${run}${prompt}${c.env ? ` (its URL in $${c.env})` : ''}`;
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

/** Pure: a setting's value in a set recorded before, or undefined when that set did not have it. */
export function recordedSetting(before: unknown, id: string): unknown {
  if (!Array.isArray(before)) return undefined;
  const found = (before as RepoCommand[]).find((c) => c.kind === 'setting' && c.id === id);
  if (typeof found?.run !== 'string') return undefined;
  try {
    return JSON.parse(found.run) as unknown;
  } catch {
    return undefined;
  }
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
