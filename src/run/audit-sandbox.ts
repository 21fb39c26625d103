import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { AuditSection } from '../workspace/types.js';
import { containerSettingsOf } from './container/settings.js';
import { BASE_IMAGE } from './container/podman.js';
import { containerPlace } from './container/task-container.js';
import { clusterOf, POD_WORKSPACE } from './k8s/k8s-run.js';
import { claimPlace, readLedger } from './k8s/ledger.js';
import type { SandboxProfile } from './sandbox.js';
import { sandboxProfileFor } from './sandbox.js';
import { SANDBOX_UID, sandboxMapsRoot } from '../system/sandbox-uid.js';
import { sandboxKindFor } from '../config/sandbox.js';
import { remoteHostName } from './ssh/hosts.js';

/**
 * `warren audit ID`, section "sandbox": what a command of the task can see and write when it
 * runs sandboxed — what is masked, what is bound back read-only or writable, what is pinned —
 * and its network. (An agent run adds its own state folder to what it may write.)
 */
export const sandboxAudit: AuditSection = {
  name: 'sandbox',
  async collect(ctx, task) {
    const host = remoteHostName(task);
    if (host !== null) {
      // Its commands see the host's profile, with the host's paths: not this machine's.
      const kind = sandboxKindFor(ctx, task);
      return {
        data: { kind, host },
        lines: [
          `${kind}, on host ${host}: the host's warren draws the profile from its own paths (\`warren audit ${task.id}\` there lists them)`,
        ],
      };
    }
    const cluster = clusterOf(ctx, task);
    if (cluster !== null) return clusterAudit(ctx, task, cluster);
    const profile = sandboxProfileFor(ctx, task);
    if (profile.kind === 'none') {
      return {
        data: profile,
        lines: [
          'none: commands run as you, unsandboxed; they can read and write whatever you can (`warren new --sandbox bwrap`, or `sandbox: bwrap` in warren.yaml)',
        ],
      };
    }
    const network = profile.network
      ? 'the network, unrestricted'
      : profile.allow
        ? `only ${profile.allow.join(', ')}, through warren's egress proxy`
        : 'no network: a loopback of its own';
    if (profile.kind === 'container') return containerAudit(ctx, task, profile, network);
    const lines = [
      'bwrap: no capability, a user namespace of its own, the root file system read-only',
      ...(sandboxMapsRoot()
        ? [`uid: ${SANDBOX_UID} outside (warren is root): to root's files and sockets it is "other"`]
        : []),
      `network: ${network}`,
      ...profile.masked.map((p) => `hidden:   ${p} (an empty folder inside)`),
      ...profile.readable.map((p) => `read:     ${p}`),
      ...profile.writable.map((p) => `write:    ${p}`),
      ...profile.pinned.map(
        (p) => `pinned:   ${p} (read-only: what git reads to find the repository and its configuration)`,
      ),
    ];
    return { data: profile, lines };
  },
};

/** A container task: where it runs (its container, made at its first command), its image, limits and binds. */
function containerAudit(
  ctx: ProjectContext,
  task: Task,
  profile: SandboxProfile,
  network: string,
): { data: unknown; lines: string[] } {
  const settings = containerSettingsOf(ctx.config);
  const { name } = containerPlace(ctx.store.home, ctx.key, task.id);
  const lines = [
    `container: ${name} (podman; made at the task's first command, removed by rm), image ${settings.image ?? BASE_IMAGE}`,
    `no capability, no new privileges, a read-only root of its own with the host's /usr; ${process.getuid?.() === 0 ? 'rootful: root inside, with no capability, in a root file system that holds only what is bound' : 'rootless: you outside, with no capability'}`,
    `limits: memory ${settings.memory}, cpus ${settings.cpus}, pids ${settings.pids}`,
    `network: ${network}`,
    ...profile.readable.map((p) => `read:     ${p}`),
    ...profile.writable.map((p) => `write:    ${p}`),
    ...profile.pinned.map(
      (p) => `pinned:   ${p} (read-only: what git reads to find the repository and its configuration)`,
    ),
  ];
  return { data: { ...profile, container: { name, ...settings, image: settings.image ?? BASE_IMAGE } }, lines };
}

/** A task in a cluster: where it runs (its claim, made at its first command), and what moves between here and there. */
function clusterAudit(ctx: ProjectContext, task: Task, cluster: string): { data: unknown; lines: string[] } {
  const settings = ctx.user.clusters?.[cluster];
  const { name, dir } = claimPlace(ctx.store.home, ctx.key, task.id);
  const ledger = readLedger(dir);
  const where = settings
    ? `namespace ${settings.namespace}, template and warm pool ${settings.template}`
    : 'not declared in config.yaml';
  const lines = [
    `runner: cluster ${cluster} (${where}): SandboxClaim ${name}, ${ledger ? `claimed ${ledger.createdAt}` : "claimed at the task's first command"}; deleted by rm and gc`,
    `runtime class: ${settings?.runtimeClass ?? "the cluster's default"}; image ${settings?.image ?? "warren's template's"}; no capability, no privilege escalation (warren's template)`,
    `files: a clone of the task's branch at ${POD_WORKSPACE} in the pod, given as a git bundle; nothing of this machine is mounted there`,
    "back: after every command, the pod's commits and files as a bundle, checked here (descend from what was sent, no protected path, no hook) before the branch and the workspace move",
    `sent: ${ledger?.sentHead ?? 'nothing yet'}`,
  ];
  return { data: { cluster, settings: settings ?? null, claim: name, ledger }, lines };
}
