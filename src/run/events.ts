import { payload, type PayloadsOf } from '../state/events.js';
import type { StepResult } from './commands.js';
import type { PortBlock } from './ports.js';
import type { RunKind } from './records.js';
import type { Risk } from './risk.js';
import type { SandboxKind } from '../config/sandbox.js';

/** Execution's events: supervised runs, agents, the sandbox's egress, setup, verify and teardown, ports, risk, trust. */
export const EXECUTION_EVENTS = {
  'trust.recorded': payload<{ hash: string; commands: string[] }>(),
  'run.started': payload<{ runId: string; kind: RunKind; log: string; command: string[] }>(),
  'run.containment_fallback': payload<{ runId: string; reason: string }>(),
  'run.ended': payload<{
    runId: string;
    kind: RunKind;
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    durationMs: number;
    log: string;
    survivors: number[];
  }>(),
  'run.interrupted': payload<{ runId: string }>(),
  /** The task's TMPDIR could not be removed whole with the task. */
  'run.tmp_left': payload<{ paths: string[] }>(),
  /** An agent gave its final result, but processes it left keep it running: said at once, ended after the grace. */
  'agent.leftover': payload<{ runId: string; agent: string; processes: string[]; graceMs: number }>(),
  /** A cluster task's agent's final-result marker could not be asked for in its pod: the run has no leftover grace. */
  'agent.final_unasked': payload<{ runId: string; agent: string; error: string }>(),
  'agent.session': payload<{ agent: string; session: string; runId: string; resumed: boolean }>(),
  'agent.seeded': payload<{ agent: string; home: string; files: string[] }>(),
  'agent.link_replaced': payload<{ agent: string; path: string; target: string }>(),
  'sandbox.egress_refused': payload<{
    runId: string;
    host: string;
    port: number;
    via: 'connect' | 'http';
    reason?: string;
  }>(),
  'sandbox.egress_allowed': payload<{ runId: string; allow: string[]; proxy: string }>(),
  // src/run/container/: a task's container made (at its first command), or one that would not go.
  'sandbox.container_made': payload<{ name: string; image: string; binds: number }>(),
  'sandbox.container_left': payload<{ problem: string }>(),
  /** What podman warned of while making it (rootless podman on cgroups v1 ignores a memory limit, and says so). */
  'sandbox.container_warning': payload<{ name: string; warning: string }>(),
  // src/run/container/container-git.ts: what the agent committed inside, taken onto the branch, kept aside, or refused.
  'sandbox.container_commits': payload<{ from: string | null; to: string }>(),
  'sandbox.container_commits_kept': payload<{ ref: string; tip: string; why: string }>(),
  'sandbox.container_commits_refused': payload<{ why: string }>(),
  // src/run/k8s/: a task's sandbox claimed in a cluster, its work brought back, a claim that would not go.
  'runner.claimed': payload<{ cluster: string; claim: string; pod: string; namespace: string }>(),
  'runner.brought_back': payload<{ cluster: string; claim: string; head: string; tree: string; moved: boolean }>(),
  'runner.claim_left': payload<{ problem: string }>(),
  /** A run's folders (an agent's state) that did not all come back from the task's sandbox. */
  'runner.state_left': payload<{ cluster: string; pod: string; problems: string[] }>(),
  // src/run/ssh/: a task on another machine — made there, its commits fetched back and checked, refused, removed there.
  'remote.created': payload<{
    host: string;
    path: string;
    base: string;
    ports?: { first: number; count: number } | null;
  }>(),
  'remote.fetched': payload<{ host: string; from: string; to: string }>(),
  'remote.refused': payload<{ host: string; tip: string; sent: string; reason: string; paths: string[] }>(),
  'remote.lost': payload<{ host: string; runId: string }>(),
  'remote.removed': payload<{ host: string }>(),
  /** One of the task's events the host's warren recorded while it did what the coordinator asked (`provision`). */
  'remote.relayed': payload<{ host: string; kind: string }>(),
  /** How an agent's run on a host ended and its transcript could not be read back (the run itself is recorded). */
  'remote.agent_unfetched': payload<{ host: string; runId: string; agent: string; reason: string }>(),
  'setup.passed': payload<StepsPayload>(),
  'setup.failed': payload<StepsPayload>(),
  'setup.skipped': payload<Record<string, never>>(),
  /** `scripts`/`command`: the root package's per-checkout lifecycle scripts run in the install's place. */
  'setup.install_skipped': payload<{
    id: string;
    why: string;
    scripts?: string[];
    command?: string;
    summary?: string;
  }>(),
  'setup.reinstalls': payload<{ id: string; why: string; fastPath?: string }>(),
  'verify.passed': payload<StepsPayload>(),
  'verify.failed': payload<StepsPayload>(),
  'verify.empty': payload<Record<string, never>>(),
  'teardown.passed': payload<StepsPayload>(),
  'teardown.failed': payload<StepsPayload>(),
  'teardown.refused': payload<{ error: string }>(),
  'ports.allocated': payload<PortBlock & { busySkipped: number[]; reclaimed: number }>(),
  'ports.released': payload<{ count: number }>(),
  'risk.classified': payload<Risk & { sandbox: SandboxKind }>(),
};

/** What setup, verify and teardown record: their log and each command's result. */
export interface StepsPayload {
  log: string;
  results: StepResult[];
}

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof EXECUTION_EVENTS> {}
}
