import { listFact, objectFact, type FactReader, type FactsOf } from '../state/facts.js';
import type { StepResult } from './commands.js';
import type { PortBlock } from './ports.js';
import type { Risk } from './risk.js';
import type { SandboxKind } from '../config/sandbox.js';
import { RUNNER } from '../config/runner.js';

/** The newest conversation of an agent that ran in the task (`warren run --resume` continues it). */
export interface AgentSession {
  agent: string;
  id: string;
  runId: string;
  at: string;
}

const sandboxKind: FactReader<SandboxKind> = (v) =>
  v === 'none' || v === 'bwrap' || v === 'container' ? v : undefined;

/** What execution records on a task. */
export const EXECUTION_FACTS = {
  /** The task's port block. */
  ports: objectFact<PortBlock>((v) => typeof v.first === 'number' && typeof v.count === 'number'),
  /** The risk read from warren.yaml at `new`. */
  risk: objectFact<Risk>((v) => typeof v.level === 'string' && Array.isArray(v.reasons)),
  /** The task's own sandbox (`new --sandbox`), overriding warren.yaml. */
  sandbox: sandboxKind,
  /** Where the task's processes run, fixed at `new` (`--runner`, else warren.yaml's `runner:`): `local`, `ssh:NAME`, `k8s:NAME`; absent, warren.yaml's. */
  runner: ((v: unknown) => (typeof v === 'string' && RUNNER.test(v) ? v : undefined)) as FactReader<string>,
  /** The last setup. */
  setup: objectFact<{
    at: string;
    ok: boolean;
    log: string;
    failed: string | null;
    /** At `new`: the install steps skipped because the provisioned tree matched the lockfile, and the per-checkout scripts run instead. */
    skipped?: { id: string; why: string; ran?: { scripts: string[]; command: string; summary?: string } }[];
  }>((v) => typeof v.ok === 'boolean'),
  /** The last verify. */
  verify: objectFact<{ at: string; passed: boolean; log: string; results: StepResult[] }>(
    (v) => typeof v.passed === 'boolean' && Array.isArray(v.results),
  ),
  agentSessions: listFact<AgentSession>(
    (s) =>
      typeof s.agent === 'string' &&
      typeof s.id === 'string' &&
      typeof s.runId === 'string' &&
      typeof s.at === 'string',
  ),
};

declare module '../state/facts.js' {
  interface TaskFacts extends FactsOf<typeof EXECUTION_FACTS> {}
}
