import type { Fingerprint } from '../land/fingerprint.js';
import type { CheckoutFacts } from '../checkout/types.js';
import type { ProvisionRecord, ProvisionSkip } from '../provision/types.js';
import type { StepResult } from '../run/commands.js';
import type { PortBlock } from '../run/ports.js';
import type { Risk } from '../run/risk.js';
import type { SandboxKind } from '../run/sandbox.js';

/**
 * The facts later stages record about a task, kept as JSON in its row. One schema for every
 * writer and reader: a key is written by exactly one feature (named beside it) and read
 * through these types, so a reader of a field nobody writes is a compile error, not a value
 * that is never there. Fields are only ever added.
 */
export interface TaskFacts {
  /** provisioning: one record per provisioned path. */
  provision?: ProvisionRecord[];
  /** provisioning: what was asked for and skipped, and why. */
  provisionSkips?: ProvisionSkip[];
  /** landing: the shared git state (hooks, config) at `new`, or as accepted later. */
  fingerprint?: Fingerprint;
  /** execution: the task's port block. */
  ports?: PortBlock;
  /** execution: the risk read from warren.yaml at `new`. */
  risk?: Risk;
  /** execution: the task's own sandbox (`new --sandbox`), overriding warren.yaml. */
  sandbox?: SandboxKind;
  /** execution: the last setup. */
  setup?: { at: string; ok: boolean; log: string; failed: string | null };
  /** execution: the last verify. */
  verify?: { at: string; passed: boolean; log: string; results: StepResult[] };
  /** landing: what `land` put on the base. */
  landed?: LandedFacts;
  /** landing: the last `land --branch-only` push. */
  reviewPush?: { remote: string; ref: string; commit: string; at: string };
  /** checkout: a copy-on-write checkout's layers (written before its mount is made). */
  checkout?: CheckoutFacts;
  /** agents: the newest conversation of each agent that ran in the task (`warren run --resume` continues it). */
  agentSessions?: AgentSession[];
}

export interface AgentSession {
  agent: string;
  id: string;
  runId: string;
  at: string;
}

export interface LandedFacts {
  commit: string;
  tree: string;
  taskCommit: string;
  forkPoint: string;
  base: string;
  baseBefore: string;
  excluded: string[];
  at: string;
}

export type FactKey = keyof TaskFacts;

/** Every key, for reading rows: unknown keys (a newer warren's) are kept out of the typed view. */
export const FACT_KEYS = [
  'provision',
  'provisionSkips',
  'fingerprint',
  'ports',
  'risk',
  'sandbox',
  'setup',
  'verify',
  'landed',
  'reviewPush',
  'agentSessions',
  'checkout',
] as const satisfies readonly FactKey[];

type IsExhaustive<T extends readonly FactKey[]> = FactKey extends T[number] ? true : never;
const exhaustive: IsExhaustive<typeof FACT_KEYS> = true;
void exhaustive;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The shape each key must have to be read at all: a row written by an older warren, or edited
 * by hand, loses a malformed key (or, in a list, a malformed entry) rather than handing a
 * reader something it did not expect.
 */
const isRecord = (r: unknown): boolean =>
  isObject(r) && typeof r.path === 'string' && typeof r.mode === 'string' && typeof r.source === 'string';
const isSkip = (s: unknown): boolean => isObject(s) && typeof s.path === 'string' && typeof s.reason === 'string';
const isSession = (s: unknown): boolean =>
  isObject(s) &&
  typeof s.agent === 'string' &&
  typeof s.id === 'string' &&
  typeof s.runId === 'string' &&
  typeof s.at === 'string';

const SHAPES: Record<FactKey, (v: unknown) => unknown> = {
  provision: (v) => (Array.isArray(v) ? v.filter(isRecord) : undefined),
  provisionSkips: (v) => (Array.isArray(v) ? v.filter(isSkip) : undefined),
  fingerprint: (v) => (isObject(v) && typeof v.hooksDir === 'string' && isObject(v.hooks) ? v : undefined),
  ports: (v) => (isObject(v) && typeof v.first === 'number' && typeof v.count === 'number' ? v : undefined),
  risk: (v) => (isObject(v) && typeof v.level === 'string' && Array.isArray(v.reasons) ? v : undefined),
  sandbox: (v) => (v === 'none' || v === 'bwrap' ? v : undefined),
  setup: (v) => (isObject(v) && typeof v.ok === 'boolean' ? v : undefined),
  verify: (v) => (isObject(v) && typeof v.passed === 'boolean' && Array.isArray(v.results) ? v : undefined),
  landed: (v) => (isObject(v) && typeof v.commit === 'string' && typeof v.taskCommit === 'string' ? v : undefined),
  reviewPush: (v) => (isObject(v) && typeof v.commit === 'string' ? v : undefined),
  agentSessions: (v) => (Array.isArray(v) ? v.filter(isSession) : undefined),
  checkout: (v) =>
    isObject(v) &&
    v.mode === 'cow' &&
    typeof v.lower === 'string' &&
    typeof v.upper === 'string' &&
    typeof v.work === 'string'
      ? v
      : undefined,
};

/** Reads a row's JSON into the typed facts, keeping only well-formed known keys. Pure. */
export function readFacts(json: string): TaskFacts {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return {};
  }
  if (!isObject(raw)) return {};
  const facts: Record<string, unknown> = {};
  for (const key of FACT_KEYS) {
    const value = key in raw ? SHAPES[key](raw[key]) : undefined;
    if (value !== undefined) facts[key] = value;
  }
  return facts as TaskFacts;
}
