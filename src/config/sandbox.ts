import type { WarrenConfig } from './schema.js';

/** Readers of warren.yaml's `sandbox:`, apart from schema.ts (which loads zod) because they are on every command's path. */

/** The sandbox kind warren.yaml asks for. */
export function sandboxKindOf(config: WarrenConfig): 'none' | 'bwrap' | 'container' {
  return typeof config.sandbox === 'string' ? config.sandbox : config.sandbox.kind;
}

/** The egress allowlist warren.yaml gives the bwrap sandbox, or null when it gives none (then: no network, or all with `network: true`). */
export function egressAllowOf(config: WarrenConfig): string[] | null {
  return typeof config.sandbox === 'string' ? null : (config.sandbox.allow ?? null);
}
