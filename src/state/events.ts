import type { Drift } from '../land/fingerprint.js';
import type { Exclusion } from '../land/protected.js';
import type { PushOutcome } from '../land/push.js';
import type { OutsideLink, ProvisionRecord, ProvisionSkip, StrippedEntry } from '../provision/types.js';
import type { StepResult } from '../run/commands.js';
import type { PortBlock } from '../run/ports.js';
import type { RunKind } from '../run/records.js';
import type { Risk } from '../run/risk.js';
import type { SandboxKind } from '../run/sandbox.js';
import type { RemoveFailure } from '../system/remove-tree.js';
import type { LockHolder } from '../util/lockfile.js';
import type { SyncOutcome } from '../workspace/sync.js';

/**
 * Every kind of event warren records, with its payload. `addEvent` takes only these, so a
 * reader matching a kind nobody records (or a field a kind does not carry) does not compile.
 * Kinds are only ever added; an old database may hold kinds no longer recorded.
 */
export interface EventPayloads {
  // the workspace core
  'task.created': {
    branch: string;
    path: string;
    base: string;
    baseCommit: string;
    sync: SyncOutcome;
    repoLock?: { waitedMs: number; heldMs: number };
    restored?: { archive: string; tip: string };
  };
  'task.create_failed': { undone: string[] };
  'task.removed': { branchDeleted: boolean; unlandedCommits: number; folderMissing?: true };
  'task.archived': { archive: string; commit: string; tip: string; changes: number; unlandedCommits: number };
  'task.leftover_removed': { gitStderr: string };
  'task.remove_failed': { path: string; failures: RemoveFailure[]; gitStderr: string };
  'base.fast_forwarded': {
    base: string;
    upstream: string;
    from: string;
    to: string;
    how: 'merge --ff-only' | 'update-ref';
    checkout: string | null;
  };
  'lock.takeover': { holder: LockHolder };
  gc: {
    removed: { kind: string; path?: string; id?: string; branch?: string; action: string }[];
    kept: { path: string; kind: string; reason: string }[];
  };
  refused: { code: string; command: string };
  'serve.remote': { host: string; port: number };
  'intent.recovered': { op: string; step: string; outcome: string; startedAt: string };
  'intent.recovery_failed': { op: string; step: string; outcome: string; startedAt: string };
  'trust.recorded': { hash: string; commands: string[] };
  // landing
  'task.landed': {
    commit: string;
    tree: string;
    baseBefore: string;
    excluded: string[];
    rebased: boolean;
    checkout: string | null;
  };
  'land.excluded': { excluded: Exclusion[]; commit: string };
  /** A landed change touched a lockfile: what is installed in the checkout of the base is stale. */
  'land.deps_stale': { lockfiles: string[]; checkout: string; commit: string };
  'land.bounced': { entry: number; code: string; reason: string; log: string | null };
  'queue.joined': { entry: number; position: number };
  'queue.left': { entry: number };
  'queue.gate': { tasks: string[]; passed: boolean; log: string | null; gateTask: string; run: number };
  'land.pushed': PushOutcome;
  'land.push_failed': PushOutcome;
  'fingerprint.recorded': { hooksDir: string; hooksPath: string | null; hooks: string[] };
  'fingerprint.config_changed': { drift: Drift };
  'fingerprint.accepted': { drift: Drift };
  'hooks.missing': { hooksPath: string; hooksDir: string };
  checkpoint: { commit: string };
  'checkpoint.nothing': { head: string };
  'checkpoint.unstaged_provisioned': { paths: string[] };
  // execution
  'run.started': { runId: string; kind: RunKind; log: string; command: string[] };
  'run.containment_fallback': { runId: string; reason: string };
  'run.ended': {
    runId: string;
    kind: RunKind;
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    durationMs: number;
    log: string;
    survivors: number[];
  };
  'run.interrupted': { runId: string };
  'agent.session': { agent: string; session: string; runId: string; resumed: boolean };
  'agent.seeded': { agent: string; home: string; files: string[] };
  'sandbox.egress_refused': { runId: string; host: string; port: number; via: 'connect' | 'http' };
  'sandbox.egress_allowed': { runId: string; allow: string[]; proxy: string };
  'setup.passed': StepsPayload;
  'setup.failed': StepsPayload;
  'setup.skipped': Record<string, never>;
  'verify.passed': StepsPayload;
  'verify.failed': StepsPayload;
  'verify.empty': Record<string, never>;
  'teardown.passed': StepsPayload;
  'teardown.failed': StepsPayload;
  'teardown.refused': { error: string };
  'ports.allocated': PortBlock & { busySkipped: number[]; reclaimed: number };
  'ports.released': { count: number };
  'risk.classified': Risk & { sandbox: SandboxKind };
  // provisioning
  'provision.path': ProvisionRecord;
  'provision.skip': ProvisionSkip;
  'provision.excluded': { paths: string[] };
  'provision.namespaced': { paths: string[] };
  'provision.snapshot': { path: string; snapshot: string; entries: number; bytes: number; ms: number };
  'provision.fill': { path: string; linked: number; filled: number; failed: { path: string; error: string }[] };
  'provision.fallback': { path: string; requested: 'cow'; used: string; reason: string };
  'provision.refresh': { paths: string[] };
  'provision.unmounted': { path: string };
  'provision.unmount_failed': { path: string };
  'provision.remount': { path: string };
  /** A cow path's mount point holds something else (a plain folder, a file, a link): the layer is not mounted over it. */
  'provision.replaced': { path: string; by: 'folder' | 'file' | 'link'; entries: number };
  'provision.relocated': { path: string; from: string; to: string; files: string[] };
  'provision.not_isolated': { path: string; left: { path: string; why: string }[] };
  'provision.outside_links': { path: string; links: OutsideLink[] };
  'provision.stripped': { path: string; entries: StrippedEntry[] };
  /** The main checkout's install did not match its lockfile: no snapshot under that key; what the workspace got instead. */
  'provision.install_stale': { path: string; lockfile: string | null; why: string; used: string };
  // copy-on-write checkouts
  'checkout.snapshot': { commit: string; from: string | null; changed: number | null; files: number; ms: number };
  'checkout.cow': { commit: string; method: string; ms: number };
  'checkout.fallback': { requested: 'cow' | 'auto'; reason: string };
  'checkout.remount': { path: string };
  'checkout.unmounted': { path: string };
}

export interface StepsPayload {
  log: string;
  results: StepResult[];
}

export type EventKind = keyof EventPayloads;
export type EventLevel = 'info' | 'warn' | 'error';

/** Every kind, at run time (a test holds the dashboard's readers to it). */
export const EVENT_KINDS = Object.keys({
  'task.created': 1,
  'task.create_failed': 1,
  'task.removed': 1,
  'task.archived': 1,
  'task.leftover_removed': 1,
  'task.remove_failed': 1,
  'base.fast_forwarded': 1,
  'lock.takeover': 1,
  gc: 1,
  refused: 1,
  'trust.recorded': 1,
  'serve.remote': 1,
  'intent.recovered': 1,
  'intent.recovery_failed': 1,
  'task.landed': 1,
  'land.excluded': 1,
  'land.deps_stale': 1,
  'land.bounced': 1,
  'queue.joined': 1,
  'queue.left': 1,
  'queue.gate': 1,
  'land.pushed': 1,
  'land.push_failed': 1,
  'fingerprint.recorded': 1,
  'fingerprint.config_changed': 1,
  'fingerprint.accepted': 1,
  'hooks.missing': 1,
  checkpoint: 1,
  'checkpoint.nothing': 1,
  'checkpoint.unstaged_provisioned': 1,
  'run.started': 1,
  'run.containment_fallback': 1,
  'run.ended': 1,
  'run.interrupted': 1,
  'agent.session': 1,
  'agent.seeded': 1,
  'sandbox.egress_refused': 1,
  'sandbox.egress_allowed': 1,
  'setup.passed': 1,
  'setup.failed': 1,
  'setup.skipped': 1,
  'verify.passed': 1,
  'verify.failed': 1,
  'verify.empty': 1,
  'teardown.passed': 1,
  'teardown.failed': 1,
  'teardown.refused': 1,
  'ports.allocated': 1,
  'ports.released': 1,
  'risk.classified': 1,
  'provision.path': 1,
  'provision.skip': 1,
  'provision.excluded': 1,
  'provision.namespaced': 1,
  'provision.snapshot': 1,
  'provision.fill': 1,
  'provision.fallback': 1,
  'provision.refresh': 1,
  'provision.unmounted': 1,
  'provision.unmount_failed': 1,
  'provision.remount': 1,
  'provision.replaced': 1,
  'provision.relocated': 1,
  'provision.not_isolated': 1,
  'provision.outside_links': 1,
  'provision.stripped': 1,
  'provision.install_stale': 1,
  'checkout.snapshot': 1,
  'checkout.cow': 1,
  'checkout.fallback': 1,
  'checkout.remount': 1,
  'checkout.unmounted': 1,
} satisfies Record<EventKind, 1>) as EventKind[];

interface EventBase {
  project: string | null;
  taskId?: string | null;
  level?: EventLevel;
  message: string;
}

/** What `addEvent` takes: a kind and exactly its payload. */
export type NewEvent = {
  [K in EventKind]: EventBase & { kind: K } & (Record<string, never> extends EventPayloads[K]
      ? { data?: EventPayloads[K] }
      : { data: EventPayloads[K] });
}[EventKind];

interface RecordedBase {
  seq: number;
  at: string;
  project: string | null;
  taskId: string | null;
  level: EventLevel;
  message: string;
}

/** A recorded event: narrowing on `kind` gives its payload. */
export type WarrenEvent = { [K in EventKind]: RecordedBase & { kind: K; data: EventPayloads[K] } }[EventKind];

/** The newest event of `kind` among `events` (oldest first), typed. Pure. */
export function newestOf<K extends EventKind>(
  events: readonly WarrenEvent[],
  kind: K,
): Extract<WarrenEvent, { kind: K }> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e && e.kind === kind) return e as Extract<WarrenEvent, { kind: K }>;
  }
  return null;
}
