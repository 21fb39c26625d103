import type { WarrenConfig } from '../../config/schema.js';

/** What a workspace may copy in total: 2 GiB and 50,000 entries unless warren.yaml says otherwise. */
export interface Budget {
  bytes: number;
  entries: number;
}

export const DEFAULT_BUDGET: Budget = { bytes: 2 * 1024 ** 3, entries: 50_000 };

const UNITS: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/** `2 GiB` → bytes. Pure; the schema already checked the shape. */
export function parseBytes(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)$/.exec(value.trim());
  if (!match) throw new Error(`not a size: ${value}`);
  return Math.floor(Number(match[1]) * (UNITS[match[2] ?? 'B'] ?? 1));
}

export function budgetOf(config: WarrenConfig): Budget {
  const b = config.provision_budget;
  return {
    bytes: b?.bytes === undefined ? DEFAULT_BUDGET.bytes : parseBytes(b.bytes),
    entries: b?.entries ?? DEFAULT_BUDGET.entries,
  };
}

/** Would copying this much more go over what is left? Pure. */
export function overBudget(used: Budget, limit: Budget, more: Budget): string | null {
  if (used.entries + more.entries > limit.entries) {
    return `${more.entries} entries would bring the workspace to ${used.entries + more.entries}, over the budget of ${limit.entries}`;
  }
  if (used.bytes + more.bytes > limit.bytes) {
    return `${formatBytes(more.bytes)} would bring the workspace to ${formatBytes(used.bytes + more.bytes)}, over the budget of ${formatBytes(limit.bytes)}`;
  }
  return null;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
