import type { AuditSection, BeforeRunStep, CreateStep, GcStep, RemoveStep } from '../workspace/types.js';
import { formatBytes } from './modes/budget.js';
import { collectProvisionGarbage } from './snapshots/collect.js';
import { ensureMounted, forgetTask, ownsMount, releaseRecords, runMounts, warnReplaced } from './task-mounts.js';
import { hintUnprovisioned } from './hint.js';
import { provisionPaths, stageCopies } from './provision.js';
import type { Staging } from './modes/staging.js';
import { resolveSources, type Sources } from './modes/sources.js';
import { provisionRecords, verifiedIsolated, type ProvisionRecord } from './types.js';
import { modeKind } from './modes/kinds.js';
import { madeOnHost } from '../config/runner.js';

/** Provisioning's steps in a workspace's life: create, remove, gc, before a run, and audit. */

/** What provisioning reads and starts while git creates the worktree. */
export interface Prepared {
  sources: Sources;
  staging: Staging | null;
  close(): Promise<void>;
}

/**
 * Which paths to provision is read from the main checkout while git creates the worktree, and
 * the copies of the `copy` and `hardlink` paths are started then, outside it (staging.ts).
 */
export const provisionCreate: CreateStep<Prepared> = {
  name: 'provision',
  async prepare(ctx, options) {
    const sources = await resolveSources(ctx);
    // Only once the task's row is there: its undo deletes the staging folder. A task on a host is provisioned there.
    const task = ctx.store.getTask(ctx.key, options.id);
    const staging = task && !madeOnHost(task.data.runner) ? stageCopies(ctx, options.id, sources) : null;
    return { sources, staging, close: async () => staging?.close() };
  },
  async run(ctx, task, _options, { sources, staging }) {
    // A task on a host: the host's `new` provisions its workspace there (remote-task.ts says so in its event).
    if (madeOnHost(task.data.runner)) return;
    await provisionPaths(ctx, task, sources, staging ? { staging } : {});
    await hintUnprovisioned(ctx, task, sources);
  },
};

export const provisionRemove: RemoveStep = {
  name: 'provision',
  ownsMount: (_ctx, task, mount) => ownsMount(task, mount),
  // Unmount before git removes the worktree, so nothing is ever deleted through a mount. What
  // would not come off is returned: `rm` then refuses, leaving all as it was.
  release: (ctx, task) => releaseRecords(ctx, task, provisionRecords(task.data), { removeFiles: false }),
  afterRemove: (ctx, task) => forgetTask(ctx, task),
};

export const provisionGc: GcStep = { name: 'provision', collect: (ctx) => collectProvisionGarbage(ctx) };

/**
 * Before any command runs in the workspace: a global cow layer lost to a reboot is mounted
 * again, and the run is handed the namespaced ones to mount in its own namespace. Read afresh:
 * setup during `warren new` is given the task as it was before provisioning recorded its paths.
 */
export const provisionBeforeRun: BeforeRunStep = {
  name: 'provision',
  async run(ctx, task) {
    const current = ctx.store.getTask(ctx.key, task.id) ?? task;
    await ensureMounted(ctx, current);
    warnReplaced(ctx, current);
    return runMounts(current);
  },
};

export const provisionAudit: AuditSection = {
  name: 'provisioning',
  async collect(_ctx, task) {
    if (madeOnHost(task.data.runner)) {
      return {
        data: { host: task.data.runner },
        lines: [
          `provisioned on its host (${task.data.runner}), by the host's warren, and nothing here: \`warren status ${task.id}\` shows changes inside them there`,
        ],
      };
    }
    const records = provisionRecords(task.data);
    const data = records.map((r) => ({
      path: r.path,
      mode: r.mode,
      requested: r.requested,
      isolated: verifiedIsolated(r) && (r.relocation?.left.length ?? 0) === 0,
      method: r.method,
      source: r.source,
      ...(r.fallback ? { fallback: r.fallback } : {}),
      ...(r.outsideLinks ? { outsideLinks: r.outsideLinks } : {}),
      ...(r.stripped ? { stripped: r.stripped } : {}),
      ...(r.relocation
        ? {
            absolutePaths: {
              checked: r.relocation.checked,
              rewritten: r.relocation.rewritten.length,
              left: r.relocation.left,
            },
          }
        : {}),
    }));
    const lines = records.length === 0 ? ['no provisioned paths'] : records.flatMap((r) => auditLines(r, task.id));
    return { data, lines };
  },
};

/** One record as `warren audit` shows it: isolation only as far as it was checked, then what containment did. Pure. */
export function auditLines(r: ProvisionRecord, taskId: string): string[] {
  const left = r.relocation?.left ?? [];
  const isolation =
    left.length > 0
      ? `NOT isolated: ${left.length} file(s) still name the main checkout by absolute path (${left
          .slice(0, 3)
          .map((l) => `${l.path}: ${l.why}`)
          .join('; ')})`
      : r.isolated
        ? verifiedIsolated(r)
          ? `isolated (verified when provisioned: ${linkSummary(r)}; ${relocationSummary(r, taskId)})`
          : `isolation NOT verified: provisioned by an older warren, which did not check for symlinks that lead outside (\`warren provision ${taskId} --refresh\` provisions it again, checked)`
        : modeKind(r.mode).sharesSource
          ? 'NOT isolated: shared with the main checkout and every workspace that shares it'
          : `NOT isolated: an in-place write through a hard link changes the main checkout (${linkSummary(r)})`;
  const lines = [
    `${r.path}: ${r.mode} (${r.method}), ${isolation}; ${r.entries} entries, ${formatBytes(r.bytes)}${r.fallback ? `; asked for ${r.requested}, fell back because ${r.fallback}` : ''}`,
  ];
  for (const l of r.outsideLinks ?? []) lines.push(`  ${l.path} -> ${l.target}: ${l.why}`);
  for (const e of r.stripped ?? []) lines.push(`  ${e.path}: left out (${e.why})`);
  return lines;
}

/** What the check for absolute paths to the main checkout found (src/provision/relocate/relocate.ts). */
function relocationSummary(r: ProvisionRecord, taskId: string): string {
  if (!r.relocation)
    return `not checked for absolute paths to the main checkout (\`warren provision ${taskId} --refresh\` checks)`;
  const n = r.relocation.rewritten.length;
  return n > 0
    ? `${n} file(s) that named the main checkout by absolute path rewritten to name the workspace, and read back`
    : 'nothing names the main checkout by absolute path';
}

function linkSummary(r: ProvisionRecord): string {
  const links = r.outsideLinks ?? [];
  if (links.length === 0) return 'no symlink leads outside the workspace';
  const count = (action: string): number => links.filter((l) => l.action === action).length;
  const parts = [
    [count('materialised'), 'copied in'],
    [count('repointed'), 're-pointed'],
    [count('removed'), 'removed'],
  ]
    .filter(([n]) => n !== 0)
    .map(([n, what]) => `${n} ${what}`);
  return `${links.length} symlink(s) pointed outside: ${parts.join(', ')}`;
}
