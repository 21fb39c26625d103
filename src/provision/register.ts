import { addAuditSection } from '../audit/sections.js';
import { addBeforeRunHook } from '../run/before-run.js';
import { CREATE_PHASE, addCreateHook } from '../workspace/create.js';
import { addGcHook } from '../workspace/gc.js';
import { addRemoveHooks } from '../workspace/remove.js';
import { formatBytes } from './budget.js';
import { collectProvisionGarbage } from './gc.js';
import { ensureMounted, forgetTask, ownsMount, releaseRecords, runMounts } from './lifecycle.js';
import { provisionTask, stderrProgress } from './provision.js';
import { resolveSources, type Sources } from './sources.js';
import { provisionRecords } from './types.js';

/** Provisioning's place in the workspace lifecycle: create, remove, gc and audit. */

// Which paths to provision is read from the main checkout while git creates the worktree.
addCreateHook<Sources>(
  CREATE_PHASE.provision,
  async (ctx, task, _options, sources) => {
    await provisionTask(ctx, task, stderrProgress, sources);
  },
  (ctx) => resolveSources(ctx),
);

addRemoveHooks({
  ownsMount: (_ctx, task, mount) => ownsMount(task, mount),
  // Unmount before git removes the worktree, so nothing is ever deleted through a mount. A
  // failure is recorded as an event; `rm` then sees the mount and refuses, leaving all as it was.
  async release(ctx, task) {
    await releaseRecords(ctx, task, provisionRecords(task.data), { removeFiles: false });
  },
  afterRemove: (ctx, task) => forgetTask(ctx, task),
});

addGcHook({ collect: (ctx) => collectProvisionGarbage(ctx) });

addAuditSection({
  name: 'provisioning',
  order: 20,
  collect: async (_ctx, task) => {
    const records = provisionRecords(task.data);
    const data = records.map((r) => ({ path: r.path, mode: r.mode, requested: r.requested, isolated: r.isolated, method: r.method, source: r.source, ...(r.fallback ? { fallback: r.fallback } : {}) }));
    const lines =
      records.length === 0
        ? ['no provisioned paths']
        : records.map(
            (r) =>
              `${r.path}: ${r.mode} (${r.method}), ${r.isolated ? 'isolated' : r.mode === 'share' ? 'NOT isolated: shared with the main checkout and every workspace that shares it' : 'NOT isolated: an in-place write through a hard link changes the main checkout'}; ${r.entries} entries, ${formatBytes(r.bytes)}${r.fallback ? `; asked for ${r.requested}, fell back because ${r.fallback}` : ''}`,
          );
    return { data, lines };
  },
});

// Before any command runs in the workspace: a global cow layer lost to a reboot is mounted
// again, and the run is handed the namespaced ones to mount in its own namespace. Read afresh:
// setup during `warren new` is given the task as it was before provisioning recorded its paths.
addBeforeRunHook(async (ctx, task) => {
  const current = ctx.store.getTask(ctx.key, task.id) ?? task;
  await ensureMounted(ctx, current);
  return runMounts(current);
});
