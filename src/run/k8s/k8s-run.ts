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
import { taskTmpPath } from '../task-tmp.js';
import { claimPlace, readLedger } from './ledger.js';
import type { FinalMarker } from '../final-watch.js';
import { bringStateBack, lastLines, podValues, sendState, type StateFolder } from './state-folders.js';
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
  const claimed = readLedger(claimPlace(ctx.store.home, ctx.key, task.id).dir);
  // The merge queue's gate (an integration workspace `queue-…`, no task of its own) runs in a cluster
  // only in a claim its gate made (src/queue/gate-k8s.ts), else here (docs/design/runners.md#where-the-gate-runs).
  if (task.id.startsWith(GATE_ID_PREFIX)) return claimed?.gate ? claimed.cluster : null;
  if (claimed) return claimed.cluster;
  // Its runner as `new` fixed it; a task made before runners were recorded follows warren.yaml.
  const runner = task.data.runner ?? ctx.config.runner;
  return runner.startsWith('k8s:') ? runner.slice(4) : null;
}

/** The task's sandbox, claimed and Ready, with the task's branch and the run's folders (state-folders.ts) in it. */
export async function k8sFor(
  ctx: ProjectContext,
  task: Task,
  cluster: string,
  mounts: readonly RunMount[],
  folders: readonly StateFolder[],
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
  // A gate's sandbox was given its commit once, when claimed; it has no branch.
  if (!claim.ledger.gate) await sendBranch(ctx, task, claim);
  if (folders.length > 0) {
    await sendState(task, claim, folders);
  }
  return claim;
}

/**
 * What the run left in the sandbox: its folders copied back here (what could not be is said,
 * and the run's work still comes back), then its work, brought back and checked (git-sync.ts).
 */
export async function k8sAfter(
  ctx: ProjectContext,
  task: Task,
  claim: TaskClaim,
  folders: readonly StateFolder[],
): Promise<void> {
  if (folders.length > 0) {
    const problems = await bringStateBack(claim, folders).catch((err: unknown) => [String(err)]);
    if (problems.length > 0) {
      const message = `task ${task.id}: not everything of the run's folders came back from its sandbox (${problems.slice(0, 3).join('; ')}); what did is here, the rest is still in pod ${claim.pod}`;
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'runner.state_left',
        level: 'warn',
        message,
        data: { cluster: claim.cluster.name, pod: claim.pod, problems: problems.slice(0, 20) },
      });
      ctx.reporter.line(`warren: warn: ${message}`);
    }
  }
  // Nothing of a gate's sandbox comes back but its steps' output and exit statuses.
  if (claim.ledger.gate) return;
  const { bringBack } = await import('./git-sync.js');
  await bringBack(ctx, task, claim);
}

/** How often a run in a cluster is asked for its agent's final-result marker, and its folders brought back while it runs. */
const MARKER_EVERY_MS = 2000;
const STATE_EVERY_MS = 5000;

/**
 * An agent's final-result marker in the task's pod (the run's TMPDIR is the pod's /tmp), asked
 * for through the API server: once it is there, the run has its leftover grace, as here.
 */
export function podMarker(
  ctx: ProjectContext,
  task: Task,
  claim: TaskClaim,
  file: string,
  onAskFailed: (error: string) => void,
): FinalMarker {
  const inPod = podValues(
    { file },
    {
      folders: [],
      tmp: taskTmpPath(ctx.store.home, ctx.key, task.id),
      workspace: task.path,
      podWorkspace: POD_WORKSPACE,
    },
  ).file;
  return {
    kind: 'asked',
    everyMs: MARKER_EVERY_MS,
    onAskFailed,
    async exists() {
      const { execCollect } = await import('./cluster.js');
      const r = await execCollect(claim.cluster, claim.pod, ['test', '-e', inPod ?? file]);
      if (r.status !== 0 && r.status !== 1) throw new Error(lastLines(r.stderr) || `exit ${String(r.status)}`);
      return r.status === 0;
    },
  };
}

/**
 * The run's folders brought back every few seconds while it runs (an agent's transcript, which
 * `warren transcript` and the dashboard read here), one copy at a time; `stop` waits for the one
 * under way. What could not come back is said once, by the copy after the run (k8sAfter).
 */
export function followState(claim: TaskClaim, folders: readonly StateFolder[]): { stop(): Promise<void> } {
  if (folders.length === 0) return { stop: () => Promise.resolve() };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let going: Promise<unknown> = Promise.resolve();
  const copy = (): void => {
    going = bringStateBack(claim, folders)
      .catch(() => [])
      .finally(() => {
        if (!stopped) timer = setTimeout(copy, STATE_EVERY_MS);
      });
  };
  timer = setTimeout(copy, STATE_EVERY_MS);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await going;
    },
  };
}

const POD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The command's environment in the pod: what a sandboxed command is given (the declared list,
 * the task's own variables, this run's), with paths of the pod's: the workspace, TMPDIR, HOME,
 * and the run's folders and files named in its own variables (an agent's state folder).
 * Nothing else of warren's environment goes there.
 */
export function podEnv(
  ctx: ProjectContext,
  task: Task,
  request: { env?: Record<string, string>; passEnv?: readonly string[] },
  folders: readonly StateFolder[],
): Record<string, string> {
  const declared = pickEnv(process.env, [...SANDBOX_ENV, ...(request.passEnv ?? []), ...(ctx.user.sandbox_env ?? [])]);
  const places = {
    folders,
    tmp: taskTmpPath(ctx.store.home, ctx.key, task.id),
    workspace: task.path,
    podWorkspace: POD_WORKSPACE,
  };
  return {
    ...declared,
    ...taskEnv(ctx, task),
    ...podValues(request.env ?? {}, places),
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
    // The init carries its run's mark itself: another run's init, ending, leaves a live run's init
    // alone (unmarked, its parent outside the pod's PID namespace, it would be taken for one that escaped).
    `WARREN_RUN_ID=${runId}`,
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
