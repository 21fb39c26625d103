import type { WarrenConfig } from '../config/schema.js';
import { sandboxKindFor, type SandboxKind } from '../config/sandbox.js';
import { clusterOf } from '../run/k8s/k8s-run.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { takesPort } from '../services/kinds.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { gateSandbox, runGate, type GateOutcome } from './gate.js';
import { runGateOnHost } from './gate-host.js';
import { runGateInClaim } from './gate-k8s.js';

/**
 * Where a batch's gate runs: where the strictest task of the batch runs
 * (docs/design/runners.md#where-the-gate-runs). One variant per place; `runGateAt` is the only
 * switch over them, so a new place is one variant, one case and one description.
 */
export type GatePlace =
  | {
      where: 'here';
      sandbox: SandboxKind;
      /** A batch with a cluster's task gated here instead: the cluster and why (said as an event). */
      instead?: { cluster: string; why: string };
    }
  /** On the SSH host of `task`, a task of the batch whose own sandbox kind is the gate's. */
  | { where: 'ssh'; sandbox: SandboxKind; host: string; task: string }
  | { where: 'k8s'; sandbox: `k8s:${string}`; cluster: string };

type VerifyStep = WarrenConfig['verify'][number];

/**
 * Pure over the records: the place of the gate of a batch of these tasks. A batch with a task in
 * a cluster is gated in a claim of that cluster (here in a container when warren.yaml has a
 * postgres service, said). Else its sandbox kind is the strictest of the batch's (`gateSandbox`); the
 * first task, in the batch's order, whose own kind is that one and that runs on an SSH host puts
 * the gate on that host — a tie between a task here and one there goes to the host, where its
 * code was written and its services and dependencies are. Otherwise here.
 */
export function gatePlace(ctx: ProjectContext, tasks: readonly Task[]): GatePlace {
  // A claim of the cluster of the batch's first task there (two clusters are as strict as one; a
  // cluster's task counts as a container, the strictest kind).
  const cluster = tasks.map((t) => clusterOf(ctx, t)).find((c) => c !== null);
  const sandbox = gateSandbox(ctx, tasks);
  if (cluster !== undefined) {
    const why = notInCluster(ctx);
    if (why !== null) return { where: 'here', sandbox, instead: { cluster, why } };
    return { where: 'k8s', sandbox: `k8s:${cluster}`, cluster };
  }
  for (const t of tasks) {
    const host = remoteHostName(t);
    if (host !== null && sandboxKindFor(ctx, t) === sandbox) return { where: 'ssh', sandbox, host, task: t.id };
  }
  return { where: 'here', sandbox };
}

/**
 * Why a gate cannot run in a claim of a cluster, or null: its redis and `run:` services run in its
 * pod, and so does a server of its own for a database (postgres); a service that is neither
 * (none today) would be on a server of this machine, which the pod cannot reach.
 */
function notInCluster(ctx: ProjectContext): string | null {
  const shared = Object.entries(ctx.config.services ?? {})
    .filter(([, s]) => !takesPort(s, true))
    .map(([name]) => name);
  return shared.length > 0
    ? `the gate's database service(s) (${shared.join(', ')}) are on a server of this machine, where a sandbox of the cluster cannot reach them`
    : null;
}

/** For the queue's lines and events: "sandbox bwrap", "on host box, sandbox bwrap", "a claim of cluster NAME". */
export function describeGatePlace(place: GatePlace): string {
  switch (place.where) {
    case 'here':
      return `sandbox ${place.sandbox}${place.instead ? `, not in cluster ${place.instead.cluster}: ${place.instead.why}` : ''}`;
    case 'ssh':
      return `on host ${place.host}, sandbox ${place.sandbox}`;
    case 'k8s':
      return `a claim of cluster ${place.cluster}`;
  }
}

/** Runs the gate's steps on `commit` at `place`; `onStart` gets the integration workspace's id. */
export async function runGateAt(
  ctx: ProjectContext,
  place: GatePlace,
  commit: string,
  steps: readonly VerifyStep[],
  onStart: (gateTask: string) => void,
): Promise<GateOutcome> {
  switch (place.where) {
    case 'here':
      if (place.instead) saidHere(ctx, place.instead);
      return runGate(ctx, commit, steps, place.sandbox, onStart);
    case 'ssh':
      return runGateOnHost(ctx, place, commit, steps, onStart);
    case 'k8s':
      return runGateInClaim(ctx, place.cluster, commit, steps, onStart);
  }
}

/** A batch with a cluster's task gated here, in a container: an event, never silent. */
function saidHere(ctx: ProjectContext, instead: { cluster: string; why: string }): void {
  const message = `the merge queue's gate runs in a container here, not in a claim of cluster ${instead.cluster}: ${instead.why}`;
  ctx.store.addEvent({ project: ctx.key, kind: 'queue.gate_here', level: 'warn', message, data: instead });
  ctx.reporter.line(`warren: warn: ${message}`);
}
