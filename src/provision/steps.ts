import type { AuditSection, BeforeRunStep, CreateStep, GcStep, RemoveStep } from '../workspace/lifecycle.js';
import { formatBytes } from './budget.js';
import { collectProvisionGarbage } from './gc.js';
import { ensureMounted, forgetTask, ownsMount, releaseRecords, runMounts } from './lifecycle.js';
import { provisionPaths } from './provision.js';
import { resolveSources, type Sources } from './sources.js';
import { provisionRecords, type ProvisionRecord } from './types.js';

/** Provisioning's steps in a workspace's life: create, remove, gc, before a run, and audit. */

/** Which paths to provision is read from the main checkout while git creates the worktree. */
export const provisionCreate: CreateStep<Sources> = {
  name: 'provision',
  prepare: (ctx) => resolveSources(ctx),
  async run(ctx, task, _options, sources) {
    await provisionPaths(ctx, task, sources);
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
    return runMounts(current);
  },
};

export const provisionAudit: AuditSection = {
  name: 'provisioning',
  async collect(_ctx, task) {
    const records = provisionRecords(task.data);
    const data = records.map((r) => ({
      path: r.path,
      mode: r.mode,
      requested: r.requested,
      isolated: r.isolated,
      method: r.method,
      source: r.source,
      ...(r.fallback ? { fallback: r.fallback } : {}),
      ...(r.relocation ? { absolutePaths: { checked: r.relocation.checked, rewritten: r.relocation.rewritten.length, left: r.relocation.left } } : {}),
    }));
    const lines =
      records.length === 0
        ? ['no provisioned paths']
        : records.map((r) => `${r.path}: ${r.mode} (${r.method}), ${isolation(r, task.id)}; ${r.entries} entries, ${formatBytes(r.bytes)}${r.fallback ? `; asked for ${r.requested}, fell back because ${r.fallback}` : ''}`);
    return { data, lines };
  },
};

/** What audit says about a path's isolation: only what was checked. */
function isolation(r: ProvisionRecord, id: string): string {
  const left = r.relocation?.left ?? [];
  if (left.length > 0) return `NOT isolated: ${left.length} file(s) still name the main checkout by absolute path (${left.slice(0, 3).map((l) => `${l.path}: ${l.why}`).join('; ')})`;
  if (r.mode === 'share') return 'NOT isolated: shared with the main checkout and every workspace that shares it';
  if (!r.isolated) return 'NOT isolated: an in-place write through a hard link changes the main checkout';
  if (!r.relocation) return `isolated, but not checked for absolute paths to the main checkout (provisioned by an older warren; \`warren provision ${id} --refresh\` checks)`;
  const n = r.relocation.rewritten.length;
  return n > 0 ? `isolated (${n} file(s) that named the main checkout by absolute path rewritten to name the workspace, and read back)` : 'isolated';
}
