import { WarrenError } from '../errors.js';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const satisfies Record<string, number>;

/** Parses `500ms`, `2s`, `1.5m`, `1h`, `14d` into milliseconds. */
export function parseDuration(text: string, what = 'duration'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) {
    throw new WarrenError('DURATION_INVALID', `${what} "${text}" is not a duration; nothing was run.`, {
      hint: 'Write a number with a unit: 500ms, 2s, 10m or 1h.',
    });
  }
  const value = Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
  if (!Number.isFinite(value) || value <= 0) {
    throw new WarrenError('DURATION_INVALID', `${what} "${text}" must be greater than zero; nothing was run.`);
  }
  return Math.round(value);
}
