import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { assertContained } from '../workspace/paths.js';
import { requireTask } from '../workspace/tasks.js';
import { taskManifestDir } from './layout.js';
import { ensureMounted, releaseRecords } from './lifecycle.js';
import { provisionPaths, type ProvisionResult } from './provision.js';
import { taskStatus, type TaskStatus } from './status.js';
import { provisionRecords, type ProvisionRecord } from './types.js';

/** `warren provision` and `warren status` as library calls. */

export type ProvisionOutcome =
  | { refreshed: false; provision: ProvisionRecord[]; remounted: string[] }
  | ({ refreshed: true } & ProvisionResult);

/**
 * `warren provision ID`: mounts again what is not mounted; with `refresh`, drops what was
 * provisioned (unmount, delete the private copies and layers, and their changes) and provisions
 * again from the main checkout as it is now. Under the task lock.
 */
export async function provisionTask(ctx: ProjectContext, rawId: string, options: { refresh?: boolean } = {}): Promise<ProvisionOutcome> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, options.refresh ? 'provision --refresh' : 'provision', async () => {
    const task = requireTask(ctx, id);
    assertContained(ctx.root, task.path);
    if (options.refresh) return { refreshed: true, ...(await refresh(ctx, task)) };
    const remounted = await ensureMounted(ctx, task);
    return { refreshed: false, provision: provisionRecords(task.data), remounted };
  });
}

async function refresh(ctx: ProjectContext, task: Task): Promise<ProvisionResult> {
  const old = provisionRecords(task.data);
  const problems = await releaseRecords(ctx, task, old, { removeFiles: true });
  if (problems.length > 0) {
    throw new WarrenError('PROVISION_FAILED', `could not clear the provisioned paths of ${task.id}: ${problems.join('; ')}. What could not be cleared is as it was.`, {
      hint: 'Stop processes using the workspace (fuser -m PATH) and run the command again.',
    });
  }
  removeTree(taskManifestDir(ctx, task.id));
  ctx.store.mergeData(ctx.key, task.id, { provision: [], provisionSkips: [] });
  ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind: 'provision.refresh', message: `cleared ${old.length} provisioned path(s) to provision again`, data: { paths: old.map((r) => r.path) } });
  const fresh = ctx.store.getTask(ctx.key, task.id) ?? task;
  return provisionPaths(ctx, fresh);
}

/**
 * `warren status ID`: tracked changes, changes inside each provisioned path, staleness. A
 * global cow layer that is not mounted (after a reboot) is mounted again first, and said so.
 */
export async function statusTask(ctx: ProjectContext, rawId: string): Promise<TaskStatus & { remounted: string[] }> {
  const task = requireTask(ctx, rawId);
  assertContained(ctx.root, task.path);
  const remounted = await ensureMounted(ctx, task);
  for (const p of remounted) ctx.reporter.line(`warren: ${p} was not mounted; mounted its overlay again`);
  return { ...(await taskStatus(task)), remounted };
}
