import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Task } from '../state/types.js';
import { writeFileAtomic } from '../util/atomic.js';
import type { ProjectContext } from '../workspace/context.js';
import { startDaemon, type DaemonRecord } from './daemon.js';
import { boundaryOf } from './boundary.js';
import { clusterOf } from './k8s/k8s-run.js';
import { servicesOutOfReach } from './k8s/k8s-steps.js';
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
}

/** Where the service host's program is (dist/bundle/service-host.js; src/run and dist/bundle sit two folders below the package). */
export function serviceHostScript(): string {
  return new URL('../../dist/bundle/service-host.js', import.meta.url).pathname;
}

export async function startServiceInTask(
  ctx: ProjectContext,
  task: Task,
  request: ServiceRequest,
): Promise<{ record: DaemonRecord; ingress: boolean }> {
  // A task in a cluster: its commands run in the cluster's sandbox, which reaches nothing here.
  const cluster = clusterOf(ctx, task);
  if (cluster !== null) throw servicesOutOfReach(cluster, task.id, Object.keys(ctx.config.services ?? {}));
  const boundary = await boundaryOf(ctx, task, {
    env: request.env,
    except: request.port === null ? [] : [request.port],
    writable: request.writable ?? [],
    service: true,
  });
  assertMountable(task, boundary.mounts, boundary.containment);
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
  return { record, ingress: boundary.profile.kind !== 'none' && !boundary.profile.network && request.port !== null };
}
