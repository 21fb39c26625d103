import type { WarrenConfig } from '../config/schema.js';
import type { SandboxKind } from '../config/sandbox.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { gateSandbox, runGate, type GateOutcome } from './gate.js';

/**
 * Where a batch's gate runs: where the strictest task of the batch runs
 * (docs/design/runners.md#where-the-gate-runs). One variant per place; `runGateAt` is the only
 * switch over them, so a new place is one variant, one case and one description.
 */
export type GatePlace = { where: 'here'; sandbox: SandboxKind };

type VerifyStep = WarrenConfig['verify'][number];

/** Pure over the records: the place of the gate of a batch of these tasks. */
export function gatePlace(ctx: ProjectContext, tasks: readonly Task[]): GatePlace {
  return { where: 'here', sandbox: gateSandbox(ctx, tasks) };
}

/** For the queue's lines and events: "sandbox bwrap". */
export function describeGatePlace(place: GatePlace): string {
  switch (place.where) {
    case 'here':
      return `sandbox ${place.sandbox}`;
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
  }
}
