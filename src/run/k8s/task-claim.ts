import { removeTreeOrThrow } from '../../system/remove-tree.js';
import { WarrenError } from '../../errors.js';
import type { Task } from '../../state/types.js';
import { faultPoint } from '../../system/fault.js';
import type { ProjectContext } from '../../workspace/context.js';
import { claimPlace, readLedger, writeLedger, type GateOwner, type Ledger } from './ledger.js';
import {
  claimBody,
  connect,
  createObject,
  deleteObject,
  ensurePool,
  readyPod,
  settingsOf,
  type Cluster,
} from './cluster.js';

/**
 * One SandboxClaim per task, against warren's warm pool, recorded in the ledger (ledger.ts)
 * before the API server is asked to make it.
 */
export interface TaskClaim {
  cluster: Cluster;
  pod: string;
  dir: string;
  ledger: Ledger;
}

const READY_WAIT_MS = 120_000;

/**
 * The task's claim, Ready, with the pod it runs in: claimed when missing (recorded first). `gate`:
 * the merge queue's gate claims for its integration workspace `task` (src/queue/gate-k8s.ts).
 */
export async function ensureTaskClaim(
  ctx: ProjectContext,
  task: Task,
  clusterName: string,
  gate?: GateOwner,
): Promise<TaskClaim> {
  const { name, dir } = claimPlace(ctx.store.home, ctx.key, task.id);
  let ledger = readLedger(dir);
  const recorded = ledger !== null;
  const settings = settingsOf(ctx.user, ledger?.cluster ?? clusterName, `task ${task.id}`);
  const cluster = connect(ledger?.cluster ?? clusterName, settings);
  if (ledger === null) {
    await ensurePool(cluster);
    ledger = {
      cluster: clusterName,
      claim: name,
      project: ctx.key,
      task: task.id,
      createdAt: new Date().toISOString(),
      sentHead: null,
      broughtTree: null,
      ...(gate ? { gate } : {}),
    };
    writeLedger(dir, ledger);
    faultPoint('k8s', 'claim-recorded');
  }
  const labels = { 'app.kubernetes.io/managed-by': 'warren', 'warren.dev/task': dnsLabel(task.id) };
  let made = false;
  if ((await readyPod(cluster, ledger.claim).catch(() => 'gone')) === 'gone') {
    // A gate's claim gone while its gate runs is not claimed again: a new sandbox would not hold the integrated commit.
    if (recorded && ledger.gate)
      throw new WarrenError(
        'RUNNER_UNAVAILABLE',
        `the merge queue's claim ${ledger.claim} in cluster ${cluster.name} went away while its gate ran; the gate could not finish.`,
      );
    // Recorded, never made (a crash between the two) or deleted by someone else: claimed (again); the new sandbox has nothing of ours.
    await createObject(cluster, 'sandboxclaims', claimBody(ledger.claim, settings.template, labels));
    ledger = { ...ledger, sentHead: null, broughtTree: null };
    writeLedger(dir, ledger);
    made = true;
  }
  const started = Date.now();
  for (let wait = 10; ; wait = Math.min(wait * 2, 500)) {
    const pod = await readyPod(cluster, ledger.claim);
    if (pod !== null) {
      if (made) {
        ctx.store.addEvent({
          project: ctx.key,
          ...(gate ? {} : { taskId: task.id }),
          kind: 'runner.claimed',
          message: `${gate ? "the merge queue's gate" : `task ${task.id}`} runs in cluster ${cluster.name}: claim ${ledger.claim}, pod ${pod} (namespace ${settings.namespace}), Ready after ${Date.now() - started}ms`,
          data: { cluster: cluster.name, claim: ledger.claim, pod, namespace: settings.namespace },
        });
      }
      return { cluster, pod, dir, ledger };
    }
    if (Date.now() - started > READY_WAIT_MS) {
      throw new WarrenError(
        'RUNNER_UNAVAILABLE',
        `${gate ? "the merge queue's gate" : `task ${task.id}`}'s claim ${ledger.claim} in cluster ${cluster.name} was not Ready within ${READY_WAIT_MS / 1000} s; nothing was run.`,
        {
          hint: `See why with \`kubectl -n ${settings.namespace} describe sandboxclaim ${ledger.claim}\`; ${gate ? '`warren gc`' : `\`warren rm ${task.id}\``} deletes the claim.`,
        },
      );
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** A task ID as a label value: 63 characters of [a-z0-9A-Z._-]. */
function dnsLabel(id: string): string {
  return (
    id
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 63)
      .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'task'
  );
}

/**
 * Deletes a task's claim (agent-sandbox deletes its sandbox and pod) and then its record; a
 * problem in words, or null. The record goes only once the claim is gone.
 */
export async function removeTaskClaim(
  home: string,
  user: ProjectContext['user'],
  project: string,
  taskId: string,
): Promise<string | null> {
  const { dir } = claimPlace(home, project, taskId);
  const ledger = readLedger(dir);
  if (ledger === null) {
    removeTreeOrThrow(dir, { inside: home });
    return null;
  }
  try {
    const cluster = connect(ledger.cluster, settingsOf(user, ledger.cluster, `task ${taskId}`));
    await deleteObject(cluster, 'sandboxclaims', ledger.claim);
  } catch (err) {
    return `claim ${ledger.claim} in cluster ${ledger.cluster} could not be deleted: ${err instanceof Error ? err.message : String(err)}`;
  }
  removeTreeOrThrow(dir, { inside: home });
  return null;
}
