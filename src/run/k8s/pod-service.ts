import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RunMount } from '../../system/mounts.js';
import type { Task } from '../../state/types.js';
import { writeFileAtomic } from '../../util/atomic.js';
import type { ProjectContext } from '../../workspace/context.js';
import { taskTmpPath } from '../task-tmp.js';
import { k8sExecArgv, k8sFor, podEnv, POD_WORKSPACE } from './k8s-run.js';
import { lastLines, podValues, stateFolders } from './state-folders.js';

/**
 * A service of a task in a cluster (its dev server, its redis), run in the task's own pod beside
 * its commands, through the same seam as every command there: warren's exec client on this
 * machine, a daemon of warren's like a local service's (src/run/daemon.ts: its record, its log,
 * stopped with its namespace), execs the service in the pod under warren's init
 * (bin/container-init.mjs) and holds the connection for as long as it runs. Its output comes
 * back on that connection into the service's log here; its port is the pod's loopback, which
 * only the pod's own processes reach (each claim is a pod of its own). When the exec client
 * ends — stopped, killed, cut off — the init ends everything of the service in the pod;
 * `endServiceInPod` checks that it did before a stop is said done.
 */

/** Where a service runs in a pod, kept in its daemon's folder: what a stop and `show` ask. */
export interface PodService {
  cluster: string;
  claim: string;
  pod: string;
  /** The run mark (WARREN_RUN_ID) the init gives everything of the service in the pod. */
  runId: string;
}

const RECORD = 'pod.json';

/** Forgotten once nothing of it is left in the pod. */
export function forgetPodService(dir: string): void {
  fs.rmSync(path.join(dir, RECORD), { force: true });
}

export function readPodService(dir: string): PodService | null {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(dir, RECORD), 'utf8')) as PodService;
    return typeof v.runId === 'string' && typeof v.cluster === 'string' ? v : null;
  } catch {
    return null;
  }
}

export interface PodServiceRequest {
  dir: string;
  name: string;
  argv: readonly string[];
  env: Record<string, string>;
  /** Folders of this machine the service needs (redis's configuration): carried into the pod, named there in its argv. */
  writable: readonly string[];
  /** The task's layers of this machine: none can be given to a pod (refused, as for any command). */
  mounts: readonly RunMount[];
}

/**
 * The service's exec client argv, for the runner to start as the service's daemon
 * (src/run/service-runner.ts): the task's claim Ready with its branch and the service's folders
 * in it (as before any command), and where it runs recorded in the daemon's folder first.
 */
export async function serviceInPod(
  ctx: ProjectContext,
  task: Task,
  cluster: string,
  request: PodServiceRequest,
): Promise<{ argv: string[]; place: PodService }> {
  const folders = stateFolders(task, request.writable);
  const claim = await k8sFor(ctx, task, cluster, request.mounts, folders);
  const places = {
    folders,
    tmp: taskTmpPath(ctx.store.home, ctx.key, task.id),
    workspace: task.path,
    podWorkspace: POD_WORKSPACE,
  };
  // Paths of this machine in its command line (redis's configuration file and folder) are the pod's.
  const named = podValues(Object.fromEntries(request.argv.map((a, i) => [String(i), a])), places);
  const argv = request.argv.map((a, i) => named[String(i)] ?? a);
  const runId = `service-${request.name.replace(/[^A-Za-z0-9_-]/g, '_')}-${randomBytes(6).toString('hex')}`;
  const place: PodService = { cluster: claim.cluster.name, claim: claim.ledger.claim, pod: claim.pod, runId };
  fs.mkdirSync(request.dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(path.join(request.dir, RECORD), `${JSON.stringify(place)}\n`);
  return {
    argv: k8sExecArgv(claim, POD_WORKSPACE, runId, argv, podEnv(ctx, task, { env: request.env }, folders)),
    place,
  };
}

/** In the pod: does the service's port accept a connection (argv[2] empty), or answer GET argv[2] below 500? */
const PROBE = `const [port, get] = process.argv.slice(1);
const done = (ok) => process.exit(ok ? 0 : 1);
setTimeout(() => done(false), 3000).unref();
if (get) fetch('http://127.0.0.1:' + port + get, { redirect: 'manual' }).then((r) => done(r.status < 500), () => done(false));
else require('net').connect({ port: Number(port), host: '127.0.0.1' }).on('connect', () => done(true)).on('error', () => done(false));`;

/** A readiness check of the service's port, asked in the pod (its loopback is not this machine's). */
export async function probeInPod(
  ctx: ProjectContext,
  place: PodService,
  port: number,
  http: string | null,
): Promise<boolean> {
  const { connect, execCollect, settingsOf } = await import('./cluster.js');
  const cluster = connect(place.cluster, settingsOf(ctx.user, place.cluster, `pod ${place.pod}`));
  const r = await execCollect(cluster, place.pod, ['node', '-e', PROBE, String(port), http ?? '']).catch(() => null);
  return r?.status === 0;
}

/**
 * In the pod: every process carrying the mark argv[1], waited for (the init ends them once its
 * connection goes), killed after argv[2] ms, and what is left printed (exit 1).
 */
const END = `const fs = require('fs');
const mark = 'WARREN_RUN_ID=' + process.argv[1];
const graceMs = Number(process.argv[2]);
const marked = () => fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p) && Number(p) !== process.pid).filter((p) => {
  try { return fs.readFileSync('/proc/' + p + '/environ', 'latin1').split('\\0').includes(mark); } catch { return false; }
}).map(Number);
const started = Date.now();
const pause = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  const left = marked();
  if (left.length === 0) process.exit(0);
  const waited = Date.now() - started;
  if (waited > graceMs + 5000) { fs.writeSync(1, left.join(' ')); process.exit(1); }
  if (waited > graceMs) for (const p of left) { try { process.kill(p, 'SIGKILL'); } catch {} }
  Atomics.wait(pause, 0, 0, 50);
}`;

/**
 * After the exec client is stopped: nothing of the service left in the pod (its marked processes
 * waited for, killed after the grace). A problem in words, or null; a pod that is gone (its claim
 * deleted) has nothing left.
 */
export async function endServiceInPod(ctx: ProjectContext, place: PodService, graceMs: number): Promise<string | null> {
  const { connect, execCollect, getObject, readyPod, settingsOf } = await import('./cluster.js');
  try {
    const cluster = connect(place.cluster, settingsOf(ctx.user, place.cluster, `pod ${place.pod}`));
    // Its claim deleted, or its sandbox replaced: that pod is gone, and the service with it.
    if ((await getObject(cluster, 'sandboxclaims', place.claim)) === null) return null;
    if ((await readyPod(cluster, place.claim)) !== place.pod) return null;
    const r = await execCollect(cluster, place.pod, ['node', '-e', END, place.runId, String(graceMs)]);
    if (r.status === 0) return null;
    const left = r.stdout.toString('utf8').trim();
    return left
      ? `pid(s) ${left} of pod ${place.pod} still running after SIGKILL`
      : `pod ${place.pod} could not be asked: ${lastLines(r.stderr) || `exit ${r.status}`}`;
  } catch (err) {
    return `pod ${place.pod} in cluster ${place.cluster} could not be asked: ${err instanceof Error ? err.message : String(err)}`;
  }
}
