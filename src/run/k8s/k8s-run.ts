import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import type { RunMount } from '../../system/mounts.js';
import type { Task } from '../../state/types.js';
import { isInside } from '../../util/paths.js';
import type { ProjectContext } from '../../workspace/context.js';
import { pickEnv, SANDBOX_ENV } from '../declared-env.js';
import { containerInitScript, k8sExecScript } from '../helper-scripts.js';
import { taskEnv } from '../task-env.js';
import { claimPlace, readLedger } from './ledger.js';
import type { TaskClaim } from './task-claim.js';

/**
 * The runner's Kubernetes half (src/run/execute.ts calls it for a `runner: k8s:NAME` task): the
 * task's claim Ready and its branch in the sandbox before a run, the argv the runner supervises
 * on the host — warren's exec client (src/cli/k8s-exec.ts), which execs the command in the pod
 * through the API server under bin/container-init.mjs — and the run's work brought back after.
 */

/** Where a task's sandbox keeps its clone (warren's template mounts an emptyDir at /work). */
export const POD_WORKSPACE = '/work/task';

/** src/queue/gate.ts's IDs of its integration workspaces (run/ does not import queue/). */
const GATE_ID_PREFIX = 'queue-';

/** The cluster a task runs in, or null when it runs here. A task claimed already stays where its claim is. */
export function clusterOf(ctx: ProjectContext, task: Task): string | null {
  // The merge queue's gate (an integration workspace `queue-…`, no task of its own) runs here, in the
  // repository's sandbox: a claim for it would outlive the gate (docs/design/runners.md#kubernetes).
  if (task.id.startsWith(GATE_ID_PREFIX)) return null;
  const claimed = readLedger(claimPlace(ctx.store.home, ctx.key, task.id).dir);
  if (claimed) return claimed.cluster;
  return ctx.config.runner.startsWith('k8s:') ? ctx.config.runner.slice(4) : null;
}

/** The task's sandbox, claimed and Ready, with the task's branch in it. */
export async function k8sFor(
  ctx: ProjectContext,
  task: Task,
  cluster: string,
  mounts: readonly RunMount[],
): Promise<TaskClaim> {
  if (mounts.length > 0) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `${mounts.map((m) => m.target).join(', ')} exist(s) only on this machine, and task ${task.id} runs in cluster ${cluster}; nothing was run.`,
      { hint: 'A task in a cluster provisions inside its sandbox (its setup), not with layers of this machine.' },
    );
  }
  const { ensureTaskClaim } = await import('./task-claim.js');
  const { sendBranch } = await import('./git-sync.js');
  const claim = await ensureTaskClaim(ctx, task, cluster);
  await sendBranch(ctx, task, claim);
  return claim;
}

/** What the run left in the sandbox, brought back and checked (git-sync.ts). */
export async function k8sAfter(ctx: ProjectContext, task: Task, claim: TaskClaim): Promise<void> {
  const { bringBack } = await import('./git-sync.js');
  await bringBack(ctx, task, claim);
}

const POD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The command's environment in the pod: what a sandboxed command is given (the declared list,
 * the task's own variables, this run's), with paths of the pod's: the workspace, TMPDIR, HOME.
 * Nothing else of warren's environment goes there.
 */
export function podEnv(
  ctx: ProjectContext,
  task: Task,
  request: { env?: Record<string, string>; passEnv?: readonly string[] },
): Record<string, string> {
  const declared = pickEnv(process.env, [...SANDBOX_ENV, ...(request.passEnv ?? []), ...(ctx.user.sandbox_env ?? [])]);
  return {
    ...declared,
    ...taskEnv(ctx, task),
    ...request.env,
    PATH: POD_PATH,
    HOME: '/tmp',
    TMPDIR: '/tmp',
    WARREN_WORKSPACE: POD_WORKSPACE,
  };
}

/** Where a folder of the workspace is in the pod. */
export function podPath(task: Task, cwd: string): string {
  if (!isInside(task.path, cwd)) return POD_WORKSPACE;
  const rel = path.relative(task.path, cwd);
  return rel === '' ? POD_WORKSPACE : path.posix.join(POD_WORKSPACE, rel.split(path.sep).join('/'));
}

let initSource: string | null = null;

/**
 * The host-side argv of one run in the task's pod: the exec client, and in the pod `sh` going to
 * the folder, `env -i` with the command's environment only, and warren's init (its source given
 * to the pod's node: nothing of warren's is installed there) keeping the run's process tree.
 */
export function k8sExecArgv(
  claim: TaskClaim,
  cwd: string,
  runId: string,
  argv: readonly string[],
  env: Record<string, string>,
): string[] {
  initSource ??= fs.readFileSync(containerInitScript(), 'utf8').replace(/^#!.*\n/, '');
  const { cluster } = claim;
  return [
    process.execPath,
    k8sExecScript(),
    cluster.kubeconfig,
    cluster.settings.context ?? '-',
    cluster.settings.namespace,
    claim.pod,
    '--',
    'sh',
    '-c',
    'cd "$0" && exec "$@"',
    cwd,
    'env',
    '-i',
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
    'node',
    '--input-type=module',
    '-e',
    initSource,
    'warren-init',
    runId,
    '--',
    ...argv,
  ];
}
