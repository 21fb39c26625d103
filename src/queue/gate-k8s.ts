import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WarrenConfig } from '../config/schema.js';
import { runSteps, type StepsOutcome } from '../run/commands.js';
import { recordedClaims } from '../run/k8s/ledger.js';
import { allocatePorts, DEFAULT_PORT_COUNT } from '../run/ports.js';
import type { Task } from '../state/types.js';
import { WarrenError } from '../errors.js';
import { startGateServices, stopGateServices } from '../services/gate.js';
import { servicesOf } from '../services/task-services.js';
import { faultPoint } from '../system/fault.js';
import { procStartTime } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';
import { recordMade } from '../workspace/ledger.js';
import { reportStep } from '../workspace/reporter.js';
import { gateSetupSteps } from './gate-deps.js';
import { dropAfterRun, GATE_PREFIX, gateTaskRecord, newGateId, type GateOutcome } from './gate.js';

/**
 * The gate in a claim of a cluster (docs/design/runners.md#where-the-gate-runs): a batch holding
 * a task that runs in a cluster is gated where that task ran. A claim of the gate's own, from the
 * cluster's warm pool, recorded in the ledger before it is asked for (with the warren process
 * that made it: `gc` leaves it while that process lives, and deletes it once it is gone); the
 * integrated commit given to its sandbox as a bundle; the install and the `gate: true` steps of
 * warren.yaml's setup, then the gate's steps, run there through the k8s runner (the coordinator's
 * trusted configuration; their output logged here, as a local gate's); the claim deleted after
 * the verdict. warren.yaml's redis and `run:` services are the gate's own, started in its pod
 * (src/run/k8s/pod-service.ts) and stopped before the claim goes; a batch whose warren.yaml has a
 * postgres service is gated here (gate-place.ts). Nothing of this machine goes with it: no
 * dependency snapshot (the pod installs), no provisioned path (said).
 */

type VerifyStep = WarrenConfig['verify'][number];

export async function runGateInClaim(
  ctx: ProjectContext,
  cluster: string,
  commit: string,
  steps: readonly VerifyStep[],
  onStart: (gateTask: string) => void,
): Promise<GateOutcome> {
  const gateTask = newGateId();
  // The exec client's folder here, and the gate's record: an empty folder, removed like an integration workspace.
  const wsPath = path.join(ctx.root, `${GATE_PREFIX}${gateTask}`);
  recordMade(ctx, wsPath, 'integration', gateTask);
  fs.mkdirSync(wsPath, { recursive: true });
  // Nothing of the gate runs here but warren's exec client: the claim is its boundary, as for a cluster's task.
  const task = gateTaskRecord(ctx, gateTask, wsPath, commit, { sandbox: 'none', runner: `k8s:${cluster}` });
  const { ensureTaskClaim } = await import('../run/k8s/task-claim.js'); // loads client-node: only for a gate in a cluster
  const { sendCommit } = await import('../run/k8s/git-sync.js');
  let outcome: GateOutcome;
  let problems: string[] = [];
  try {
    await allocatePorts(ctx.store, ctx.key, gateTask, ctx.config.ports?.count ?? DEFAULT_PORT_COUNT);
    onStart(gateTask);
    saySkippedPaths(ctx, cluster);
    const owner = { pid: process.pid, host: os.hostname(), procStart: procStartTime(process.pid) };
    await reportStep(
      ctx.reporter,
      `merge queue: claiming a sandbox of cluster ${cluster} and giving it ${commit.slice(0, 12)}`,
      async () => sendCommit(ctx, await ensureTaskClaim(ctx, task, cluster, owner), commit),
    );
    faultPoint('queue', 'gate-claimed');
    // Fresh services of the gate's own, in its pod, before its setup (which sees them, as at `new`).
    const withServices: Task =
      servicesOf(ctx).length > 0
        ? { ...task, data: { ...task.data, services: await startGateServices(ctx, task) } }
        : task;
    outcome = await stepsInClaim(ctx, withServices, steps);
  } finally {
    // Stopped (and checked gone in the pod) before the claim goes with its pod.
    problems = await stopGateServices(ctx, gateTask);
    await deleteGateClaim(ctx, gateTask);
    dropAfterRun(ctx, task);
  }
  if (problems.length > 0)
    throw new WarrenError('SERVICE_FAILED', `the gate's services could not all be stopped: ${problems.join('; ')}.`, {
      hint: '`warren gc` stops what is left once the gate is gone.',
    });
  return outcome;
}

/** The gate's setup (the install, `gate: true` steps), then its steps, in the claim. */
async function stepsInClaim(ctx: ProjectContext, task: Task, steps: readonly VerifyStep[]): Promise<GateOutcome> {
  const output = { stdout: null, stderr: null };
  const setupSteps = gateSetupSteps(ctx.config.setup, true);
  const setup: StepsOutcome | null =
    setupSteps.length > 0 ? await runSteps(ctx, task, 'setup', setupSteps, { stopOnFailure: true, output }) : null;
  const base = { gateTask: task.id, snapshots: [], setupLog: setup?.log ?? null };
  // The integrated tree cannot be set up (its lockfile does not install): a gate failure.
  if (setup && !setup.ok) return { ...base, passed: false, log: setup.log, results: setup.results, setupFailed: true };
  const ran = await runSteps(ctx, task, 'verify', steps, { stopOnFailure: false, output });
  return { ...base, passed: ran.ok, log: ran.log, results: ran.results, setupFailed: false };
}

/** warren.yaml's provisioned paths are this machine's: the gate's sandbox has what its setup makes, and that is said. */
function saySkippedPaths(ctx: ProjectContext, cluster: string): void {
  const paths = ctx.config.provision.map((p) => p.path);
  if (paths.length === 0) return;
  const message = `the merge queue's gate in cluster ${cluster}: provisioned path(s) ${paths.join(', ')} are this machine's and are not given to its sandbox; it has what its setup (the install, \`gate: true\` steps) makes there`;
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'queue.gate_deps',
    level: 'warn',
    message,
    data: { paths: paths.join(', ') },
  });
  ctx.reporter.line(`warren: warn: ${message}`);
}

/** The gate's claim deleted with its record; one that could not be is said, and its record kept for `gc`. */
async function deleteGateClaim(ctx: ProjectContext, gateTask: string): Promise<void> {
  const { removeTaskClaim } = await import('../run/k8s/task-claim.js');
  const problem = await removeTaskClaim(ctx.store.home, ctx.user, ctx.key, gateTask);
  if (problem === null) return;
  const message = `the merge queue's ${problem}; \`warren gc\` or the next run of the queue deletes it`;
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'queue.gate_claim_left',
    level: 'warn',
    message,
    data: { gateTask, reason: problem },
  });
  ctx.reporter.line(`warren: warn: ${message}`);
}

/**
 * Gate claims of this project a warren left (killed while its gate ran, or the cluster did not
 * answer the delete): deleted when a processor starts, which holds the queue's lease, so none is
 * in use. Loads the cluster's client only when there is one.
 */
export async function removeStaleGateClaims(ctx: ProjectContext): Promise<void> {
  const left = recordedClaims(ctx.store.home).filter((c) => c.project === ctx.key && c.gate);
  for (const c of left) await deleteGateClaim(ctx, c.task);
}
