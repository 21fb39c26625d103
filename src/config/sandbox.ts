import { WarrenError } from '../errors.js';
import type { WarrenConfig } from './schema.js';

/** Readers of warren.yaml's `sandbox:`, apart from schema.ts (which loads zod) because they are on every command's path. */

export const SANDBOX_KINDS = ['none', 'bwrap', 'container'] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

/** The sandbox kind warren.yaml asks for. */
export function sandboxKindOf(config: WarrenConfig): SandboxKind {
  return typeof config.sandbox === 'string' ? config.sandbox : config.sandbox.kind;
}

/** The egress allowlist warren.yaml gives the bwrap sandbox, or null when it gives none (then: no network, or all with `network: true`). */
export function egressAllowOf(config: WarrenConfig): string[] | null {
  return typeof config.sandbox === 'string' ? null : (config.sandbox.allow ?? null);
}

export function parseSandboxKind(value: string): SandboxKind {
  if ((SANDBOX_KINDS as readonly string[]).includes(value)) return value as SandboxKind;
  throw new WarrenError('USAGE', `sandbox "${value}" is not one of ${SANDBOX_KINDS.join(', ')}; nothing was changed.`);
}

/** The sandbox a task's commands run in: its own (`warren new --sandbox`), else warren.yaml's. */
export function sandboxKindFor(ctx: { config: WarrenConfig }, task: { data: { sandbox?: unknown } }): SandboxKind {
  const own = task.data.sandbox;
  return own === 'bwrap' || own === 'none' || own === 'container' ? own : sandboxKindOf(ctx.config);
}

/** Pure: the strictest of several sandboxes (a container over bwrap over none). */
export function strictestSandbox(kinds: readonly SandboxKind[]): SandboxKind {
  return kinds.includes('container') ? 'container' : kinds.includes('bwrap') ? 'bwrap' : 'none';
}
