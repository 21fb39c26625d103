import type { WarrenConfig } from '../config/schema.js';
import { sandboxKindFor, type SandboxKind } from '../config/sandbox.js';
import { clusterOf } from '../run/k8s/k8s-run.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { gateSandbox, runGate, type GateOutcome } from './gate.js';
import { runGateOnHost } from './gate-host.js';

/**
 * Where a batch's gate runs: where the strictest task of the batch runs
 * (docs/design/runners.md#where-the-gate-runs). One variant per place; `runGateAt` is the only
 * switch over them, so a new place is one variant, one case and one description.
 */
export type GatePlace =
  | { where: 'here'; sandbox: SandboxKind }
  /** On the SSH host of `task`, a task of the batch whose own sandbox kind is the gate's. */
  | { where: 'ssh'; sandbox: SandboxKind; host: string; task: string };

type VerifyStep = WarrenConfig['verify'][number];

/**
 * Pure over the records: the place of the gate of a batch of these tasks. Its sandbox kind is
 * the strictest of the batch's (`gateSandbox`); the first task, in the batch's order, whose own
 * kind is that one and that runs on an SSH host puts the gate on that host — a tie between a
 * task here and one there goes to the host, where its code was written and its services and
 * dependencies are. Otherwise here (a cluster's task counts as a container here).
 */
export function gatePlace(ctx: ProjectContext, tasks: readonly Task[]): GatePlace {
  const sandbox = gateSandbox(ctx, tasks);
  for (const t of tasks) {
    const host = remoteHostName(t);
    if (host !== null && clusterOf(ctx, t) === null && sandboxKindFor(ctx, t) === sandbox)
      return { where: 'ssh', sandbox, host, task: t.id };
  }
  return { where: 'here', sandbox };
}

/** For the queue's lines and events: "sandbox bwrap", "on host box, sandbox bwrap". */
export function describeGatePlace(place: GatePlace): string {
  switch (place.where) {
    case 'here':
      return `sandbox ${place.sandbox}`;
    case 'ssh':
      return `on host ${place.host}, sandbox ${place.sandbox}`;
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
      return runGate(ctx, commit, steps, place.sandbox, onStart);
    case 'ssh':
      return runGateOnHost(ctx, place, commit, steps, onStart);
  }
}
