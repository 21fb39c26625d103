import { runnerFor } from '../../config/runner.js';
import { WarrenError } from '../../errors.js';
import type { CreateStep, GcStep, RemoveStep } from '../../workspace/types.js';
import { isHolderAlive } from '../../util/lockfile.js';
import { claimPlace, recordedClaims, type GateOwner } from './ledger.js';

/**
 * What `runner: k8s:NAME` (warren.yaml, or `new --runner`) plugs into a task's life: `new` refuses up front when config.yaml
 * declares no cluster NAME (RUNNER_UNAVAILABLE, exit 2, nothing made); the claim itself is made
 * at the task's first command (task-claim.ts), and `rm` and `gc` delete it with its record.
 */
export const k8sCreate: CreateStep = {
  name: 'k8s',
  check(ctx, options) {
    const runner = runnerFor(ctx.config, options);
    if (!runner.startsWith('k8s:')) return Promise.resolve();
    const name = runner.slice(4);
    // Its services run in its pod (src/run/k8s/pod-service.ts); a database it cannot reach is refused by services' own check.
    if (ctx.user.clusters?.[name]) return Promise.resolve();
    return Promise.reject(
      new WarrenError(
        'RUNNER_UNAVAILABLE',
        `task ${options.id} would run in the Kubernetes cluster ${name} (${options.runner ? '--runner' : "warren.yaml's runner:"}), which $WARREN_HOME/config.yaml does not declare; nothing was created.`,
        {
          hint: `Declare it under \`clusters: { ${name}: { kubeconfig: /path/to/kubeconfig, namespace: NS } }\` in $WARREN_HOME/config.yaml, or set \`runner: local\`.`,
        },
      ),
    );
  },
  async run() {
    // claimed at first use, by the runner (task-claim.ts ensureTaskClaim)
  },
};

export const k8sRemove: RemoveStep = {
  name: 'k8s',
  // After teardown (which runs in the sandbox), before the workspace goes.
  async release(ctx, task) {
    const { dir } = claimPlace(ctx.store.home, ctx.key, task.id);
    const { readLedger } = await import('./ledger.js');
    if (readLedger(dir) === null) return [];
    const { removeTaskClaim } = await import('./task-claim.js');
    const problem = await removeTaskClaim(ctx.store.home, ctx.user, ctx.key, task.id);
    if (problem === null) return [];
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'runner.claim_left',
      level: 'warn',
      message: `${problem}; removal refused, nothing else was removed`,
      data: { problem },
    });
    return [problem];
  },
};

/**
 * Claims of this project whose task is gone (a crash between the record and the claim, or the
 * row), and the merge queue's gate claims whose warren is gone (killed while its gate ran); a
 * gate claim whose warren still runs is its gate's.
 */
export const k8sGc: GcStep = {
  name: 'claims',
  async collect(ctx) {
    const removed: { kind: string; id?: string; action: string }[] = [];
    const kept: { path: string; kind: string; reason: string }[] = [];
    const live = new Set(ctx.store.listTasks(ctx.key).map((t) => t.id));
    const orphans = recordedClaims(ctx.store.home).filter(
      (c) => c.project === ctx.key && !live.has(c.task) && !(c.gate && gateRunning(c.gate)),
    );
    if (orphans.length === 0) return { removed, kept };
    const { removeTaskClaim } = await import('./task-claim.js');
    for (const c of orphans) {
      const problem = await removeTaskClaim(ctx.store.home, ctx.user, c.project, c.task);
      if (problem === null)
        removed.push({ kind: 'claim', id: c.task, action: `deleted claim ${c.claim} in cluster ${c.cluster}` });
      else kept.push({ path: claimPlace(ctx.store.home, c.project, c.task).dir, kind: 'claim', reason: problem });
    }
    return { removed, kept };
  },
};

/** The warren that made a gate's claim still runs (on another host: cannot tell, so it is taken to). */
function gateRunning(owner: GateOwner): boolean {
  return isHolderAlive({ ...owner, startedAt: '', purpose: 'queue gate', token: '' });
}
