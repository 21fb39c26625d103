import type { WarrenConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { modeKind } from '../provision/modes/kinds.js';

/**
 * A task's risk, read from its configuration at `warren new`: what its setup, verify and
 * teardown commands do, and what the task shares. Pure; the rules are a table so a new
 * one is one line.
 */
export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export interface Risk {
  level: RiskLevel;
  reasons: string[];
  recommendedSandbox: 'none' | 'bwrap';
}

const COMMAND_RULES: readonly { level: RiskLevel; pattern: RegExp; why: string }[] = [
  {
    level: 'medium',
    pattern:
      /\b(npm|pnpm|yarn|bun)\s+(ci|install|i|add)\b|\bpip3?\s+install\b|\bpoetry\s+install\b|\buv\s+(sync|pip)\b|\bbundle\s+install\b|\bcomposer\s+install\b|\bcargo\s+(build|fetch|install)\b|\bgo\s+(get|mod\s+download)\b/,
    why: 'runs a package manager (third-party install scripts run with your permissions)',
  },
  {
    level: 'medium',
    pattern: /\$\{?(WARREN_)?PORTS?\b|--port\b|\blisten\b|\bserve\b|\bdev-server\b/,
    why: 'binds a port',
  },
  {
    level: 'medium',
    pattern: /\$\{?WARREN_DB_NAME\b|\bcreatedb\b|\bdropdb\b|\bpsql\b|\bmysql\b|\bmongosh?\b|\bredis-cli\b/,
    why: 'names or touches a database',
  },
  {
    level: 'high',
    pattern: /\b(curl|wget|ssh|scp|rsync|nc|ncat)\b|\bgit\s+(push|fetch|clone)\b|\bdocker\b/,
    why: 'reaches the network or another machine',
  },
  { level: 'high', pattern: /\bsudo\b|\bchmod\s+-R\b|\brm\s+-rf?\s+[/~]/, why: 'changes things outside the workspace' },
];

/**
 * `shared`: the paths the task shares with the main checkout (mode share). At `new`, after
 * provisioning, these are the paths actually shared — a `share` entry that was skipped (unsafe,
 * missing, not ignored) shares nothing and adds no risk. Before provisioning, the configured
 * ones.
 */
export function classifyRisk(
  config: WarrenConfig,
  shared: readonly string[] = config.provision.filter((p) => modeKind(p.mode).sharesSource).map((p) => p.path),
  options: { setup?: boolean; skippedSetup?: readonly string[] } = {},
): Risk {
  const found: { level: RiskLevel; reason: string }[] = [];
  const groups = [
    // `new --no-setup`, or an install the provisioned tree already is: what does not run adds no risk.
    ['setup', options.setup === false ? [] : config.setup.filter((s) => !options.skippedSetup?.includes(s.id))],
    ['verify', config.verify],
    ['teardown', config.teardown],
  ] as const;
  for (const [group, steps] of groups) {
    for (const step of steps) {
      const text = typeof step.run === 'string' ? step.run : step.run.join(' ');
      for (const rule of COMMAND_RULES)
        if (rule.pattern.test(text)) found.push({ level: rule.level, reason: `${group} ${step.id} ${rule.why}` });
    }
  }
  for (const p of shared)
    found.push({ level: 'medium', reason: `${p} is shared (mode share): a write there changes every workspace` });
  if (config.network === true)
    found.push({ level: 'high', reason: 'warren.yaml allows network access (network: true)' });
  const level = found.reduce<RiskLevel>((max, f) => (rank(f.level) > rank(max) ? f.level : max), 'low');
  return {
    level,
    reasons: found.map((f) => f.reason),
    recommendedSandbox: rank(level) >= rank('medium') ? 'bwrap' : 'none',
  };
}

export function rank(level: RiskLevel): number {
  return RISK_LEVELS.indexOf(level);
}

/** `--require-sandbox`: a medium-or-higher risk task may not run without a sandbox. */
export function assertSandboxRequirement(taskId: string, risk: Risk, sandbox: 'none' | 'bwrap' | 'container'): void {
  if (rank(risk.level) < rank('medium') || sandbox !== 'none') return;
  throw new WarrenError(
    'SANDBOX_REQUIRED',
    `task ${taskId} is ${risk.level} risk (${risk.reasons.join('; ')}) and would run without a sandbox; nothing was created.`,
    {
      hint: 'Create it with --sandbox bwrap (or container), or set `sandbox: bwrap` in warren.yaml.',
    },
  );
}
