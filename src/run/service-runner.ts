import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Task } from '../state/types.js';
import { writeFileAtomic } from '../util/atomic.js';
import type { ProjectContext } from '../workspace/context.js';
import { startDaemon, stopDaemon, type DaemonRecord } from './daemon.js';
import { boundaryOf } from './boundary.js';
import { clusterOf } from './k8s/k8s-run.js';
import {
  endServiceInPod,
  forgetPodService,
  probeInPod,
  readPodService,
  serviceInPod,
  type PodService,
} from './k8s/pod-service.js';
import { assertMountable } from './execute.js';
import type { ServiceHostSpec } from './service-host.js';
import { sandboxMapsRoot } from '../system/sandbox-uid.js';
import { assertMappable, assertSandboxAvailable } from './sandbox.js';

/**
 * The runner's other half (src/run/execute.ts runs a bounded command): a process that outlives
 * the command that starts it — a task's dev server, its redis, the gate's services — started
 * inside the task's boundary (src/run/boundary.ts) like every other process of the task. In a
 * sandbox, the daemon runs warren's service host (src/run/service-host.ts), which keeps the
 * sandbox's egress proxy for as long as the service runs and carries the host's connections to
 * the service's port in; without one, the command itself.
 */
export interface ServiceRequest {
  /** The daemon's folder (its record and status; never inside the sandbox). */
  dir: string;
  argv: readonly string[];
  log: string;
  /** Variables for the service, over the task's own (its WARREN_PORT). */
  env: Record<string, string>;
  /** The port it listens on: reached from the host, and not through its own bridge. */
  port: number | null;
  /** More it may write or read in a sandbox (a server's data folder, its configuration file). */
  writable?: readonly string[];
  /** Its name in warren.yaml (a service in a pod is marked with it there). */
  name: string;
}

/** A readiness check of the service's port where it runs (in a pod: asked there; null: here). */
export type PortProbe = (port: number, http: string | null) => Promise<boolean>;

export interface StartedService {
  record: DaemonRecord;
  /** Reached from the host through the service host, which listens once the service accepts inside. */
  ingress: boolean;
  /** Where its port is checked, when not on this machine's loopback. */
  probe: PortProbe | null;
}

/** Where the service host's program is (dist/bundle/service-host.js; src/run and dist/bundle sit two folders below the package). */
export function serviceHostScript(): string {
  return new URL('../../dist/bundle/service-host.js', import.meta.url).pathname;
}

export async function startServiceInTask(
  ctx: ProjectContext,
  task: Task,
  request: ServiceRequest,
): Promise<StartedService> {
  const boundary = await boundaryOf(ctx, task, {
    env: request.env,
    except: request.port === null ? [] : [request.port],
    writable: request.writable ?? [],
    service: true,
  });
  assertMountable(task, boundary.mounts, boundary.containment);
  // A task in a cluster: the service runs in its pod, beside its commands (k8s/pod-service.ts).
  const cluster = clusterOf(ctx, task);
  if (cluster !== null) {
    const { argv, place } = await serviceInPod(ctx, task, cluster, {
      dir: request.dir,
      name: request.name,
      argv: request.argv,
      env: request.env,
      writable: request.writable ?? [],
      mounts: boundary.mounts,
    });
    const record = startDaemon({
      dir: request.dir,
      argv,
      command: request.argv,
      cwd: task.path,
      // The exec client is warren's own, on this machine: the service gets podEnv only (in its argv).
      env: process.env,
      log: request.log,
      containment: boundary.containment,
    });
    return { record, ingress: false, probe: (port, http) => probeInPod(ctx, place, port, http) };
  }
  // A container task's services run in the bwrap sandbox beside its container, under the same
  // profile (docs/design/runners.md: a pod of the task's own is the next step).
  if (boundary.profile.kind === 'container') {
    boundary.profile = { ...boundary.profile, kind: 'bwrap' };
    await assertSandboxAvailable(boundary.profile, ctx.store.home);
    assertMappable(boundary.profile, task.id);
  }
  fs.mkdirSync(request.dir, { recursive: true, mode: 0o700 });
  let argv = [...request.argv];
  // As root in a sandbox, the layers are mounted by the service host, from clones (sandbox-uid.ts).
  const staged = boundary.profile.kind !== 'none' && sandboxMapsRoot();
  if (boundary.profile.kind !== 'none') {
    const spec: ServiceHostSpec = {
      profile: boundary.profile,
      cwd: task.path,
      argv: [...request.argv],
      port: request.port,
      node: process.execPath,
      tmp: os.tmpdir(),
      home: ctx.store.home,
      stage: staged ? { mounts: boundary.mounts } : null,
    };
    const specFile = path.join(request.dir, 'sandbox.json');
    writeFileAtomic(specFile, `${JSON.stringify(spec)}\n`);
    argv = [process.execPath, serviceHostScript(), specFile];
  }
  const record = startDaemon({
    dir: request.dir,
    argv,
    command: request.argv,
    cwd: task.path,
    env: boundary.env,
    log: request.log,
    containment: boundary.containment,
    mounts: staged ? [] : boundary.mounts,
  });
  // Reached from the host through the service host, which listens only once the service accepts inside.
  return {
    record,
    ingress: boundary.profile.kind !== 'none' && !boundary.profile.network && request.port !== null,
    probe: null,
  };
}

/** The cluster a task's services run in (in its pod), or null when they run on this machine. */
export function serviceCluster(ctx: ProjectContext, task: Task): string | null {
  return clusterOf(ctx, task);
}

/** Where a service of the task runs when not on this machine: the cluster and pod, else null. */
export function servicePlace(dir: string): PodService | null {
  return readPodService(dir);
}

/**
 * Stops a service the runner started (stopDaemon: SIGTERM, then SIGKILL after the grace); one in
 * a pod is then checked gone there too (its init ends it when the exec client goes). What is
 * left in the pod, in words.
 */
export async function stopServiceInTask(
  ctx: ProjectContext,
  dir: string,
  graceMs: number,
): Promise<Awaited<ReturnType<typeof stopDaemon>> & { leftInPod: string | null }> {
  const place = readPodService(dir);
  const stopped = await stopDaemon(dir, graceMs);
  const leftInPod = place ? await endServiceInPod(ctx, place, graceMs) : null;
  if (place && leftInPod === null) forgetPodService(dir);
  return { ...stopped, leftInPod };
}
