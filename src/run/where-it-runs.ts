import { sandboxKindFor, type SandboxKind } from '../config/sandbox.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { containerPlace } from './container/task-container.js';
import { clusterOf } from './k8s/k8s-run.js';
import { claimPlace } from './k8s/ledger.js';
import { remoteHostName } from './ssh/hosts.js';
import { readRecord } from './ssh/remote-records.js';

/**
 * Where a task's processes run and what holds them, in one shape for every runner: `warren show`
 * (CLI, MCP, the dashboard's task view) and the "runner" section of `warren audit` read it. Read
 * from warren's own records and settings only: no host, cluster or podman is asked.
 */
export interface WhereItRuns {
  /** How its processes are placed: `none`, `bwrap` or `container` here, `ssh:NAME`, `k8s:NAME`. */
  runner: string;
  /** This machine, a host over SSH, or a Kubernetes cluster. */
  where: 'here' | 'host' | 'cluster';
  /** The sandbox its commands run in (on a host, the host's own runner's). */
  sandbox: SandboxKind | 'k8s';
  /** ssh: the host's name in config.yaml; k8s: the cluster's. */
  name: string | null;
  /** ssh: `user@host` and port as config.yaml says (null when it no longer declares the host); k8s: the namespace. */
  address: string | null;
  /** ssh: the task's workspace on the host. */
  remotePath: string | null;
  /** ssh: commits made there may not be fetched back yet (the next command fetches them). */
  pending: boolean;
  /** container: the task's container; k8s: its SandboxClaim. */
  handle: string | null;
  /** What holds the task's processes, in one line. */
  boundary: string;
}

const BOUNDARY: Record<SandboxKind, string> = {
  none: 'unsandboxed: as you, in a PID namespace of their own; they read and write whatever you can',
  bwrap: 'bwrap: no capability, a user namespace, the root file system read-only, only the workspace writable',
  container:
    "a podman container of the task's own: no capability, no new privileges, a root of its own, memory, cpu and pids limits",
};

export function whereItRuns(ctx: ProjectContext, task: Task): WhereItRuns {
  const sandbox = sandboxKindFor(ctx, task);
  const host = remoteHostName(task);
  if (host !== null) {
    const declared = ctx.user.hosts?.[host];
    const record = readRecord(ctx.store.home, ctx.key, task.id);
    return {
      runner: `ssh:${host}`,
      where: 'host',
      sandbox,
      name: host,
      address: declared ? `${declared.ssh}${declared.port === undefined ? '' : `:${declared.port}`}` : null,
      remotePath: record?.path ?? null,
      pending: record?.pending === true,
      handle: null,
      boundary: `on host ${host}, through its own warren: ${BOUNDARY[sandbox]} (there); commits come back by git, checked here before the branch moves`,
    };
  }
  const cluster = clusterOf(ctx, task);
  if (cluster !== null) {
    return {
      runner: `k8s:${cluster}`,
      where: 'cluster',
      sandbox: 'k8s',
      name: cluster,
      address: ctx.user.clusters?.[cluster]?.namespace ?? null,
      remotePath: null,
      pending: false,
      handle: claimPlace(ctx.store.home, ctx.key, task.id).name,
      boundary: `in a pod of cluster ${cluster} (warren's SandboxTemplate: no capability, no privilege escalation), nothing of this machine mounted; commits come back as a bundle, checked here`,
    };
  }
  return {
    runner: sandbox,
    where: 'here',
    sandbox,
    name: null,
    address: null,
    remotePath: null,
    pending: false,
    handle: sandbox === 'container' ? containerPlace(ctx.store.home, ctx.key, task.id).name : null,
    boundary: `on this machine, ${BOUNDARY[sandbox]}`,
  };
}

/** The audit's lines of it. */
export function whereLines(w: WhereItRuns): string[] {
  const at =
    w.where === 'host'
      ? `host ${w.name ?? ''} over SSH (${w.address ?? 'not declared in config.yaml any more'}); its workspace there: ${w.remotePath ?? 'unknown'}`
      : w.where === 'cluster'
        ? `cluster ${w.name ?? ''} (namespace ${w.address ?? 'not declared in config.yaml'}), claim ${w.handle ?? ''}`
        : `here (this machine), ${w.handle ? `container ${w.handle}` : w.sandbox}`;
  return [
    `runner: ${at} [${w.runner}]`,
    `boundary: ${w.boundary}`,
    ...(w.pending ? ['commits made there may not be fetched back yet: the next command fetches them'] : []),
  ];
}
