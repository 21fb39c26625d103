import { payload, type PayloadsOf } from '../state/events.js';

/** The merge queue's events. */
export const QUEUE_EVENTS = {
  'land.bounced': payload<{ entry: number; code: string; reason: string; log: string | null }>(),
  /** An entry that conflicts only with entries ahead of it that have not landed: it waits for them to settle. */
  'queue.waiting': payload<{ entry: number; waitsFor: string[]; paths: string[] }>(),
  'queue.joined': payload<{ entry: number; position: number }>(),
  'queue.left': payload<{ entry: number }>(),
  'queue.gate': payload<{
    tasks: string[];
    passed: boolean;
    log: string | null;
    gateTask: string;
    run: number;
    /** Where its steps ran: a sandbox kind here, or `k8s:NAME` (a claim of cluster NAME). */
    sandbox?: 'none' | 'bwrap' | 'container' | `k8s:${string}`;
    /** The cluster whose claim it ran in. */
    cluster?: string;
    /** The SSH host the gate ran on (gate-place.ts); absent when it ran here. */
    host?: string;
    /** The dependency snapshots the gate ran with, and how it got each (gate-deps.ts). */
    snapshots?: { path: string; key: string | null; lockfile: string | null; how: string }[];
    /** The log of the setup steps the gate ran (the install, `gate: true` steps). */
    setupLog?: string | null;
    /** A speculative run: the tasks not landed yet that these were integrated on top of (land.speculate). */
    onTopOf?: string[];
  }>(),
  /** Entries integrated on top of a batch still in its gate, and gated at once (land.speculate). */
  'queue.speculative': payload<{ tasks: string[]; onTopOf: string[]; onto: string }>(),
  /** A speculative integration thrown away: what it was built on did not land as it was; its entries are integrated again on the real base and gated again. */
  'queue.discarded': payload<{ tasks: string[]; onTopOf: string[]; reason: string; verdict: string }>(),
  /** The gate could not give the integrated tree its own dependencies, and says what it used instead. */
  'queue.gate_deps': payload<{ paths: string }>(),
  /** An integration workspace that could not be removed after its run (removed while the queue goes on): the next processor removes it. */
  'queue.gate_left': payload<{ path: string; reason: string }>(),
  /** A gate's claim in a cluster that could not be deleted after its run: `gc` or the next processor deletes it. */
  'queue.gate_claim_left': payload<{ gateTask: string; reason: string }>(),
  /** A batch with a cluster's task gated in a container here, not in a claim of its cluster, and why. */
  'queue.gate_here': payload<{ cluster: string; why: string }>(),
  /** A `.queue-*` folder in the workspace root that warren's ledger does not say it made: left as it is. */
  'queue.foreign': payload<{ path: string; what: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof QUEUE_EVENTS> {}
}
