import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { removeTree } from '../system/remove-tree.js';
import { taskManifestDir } from './layout.js';
import { releaseRecords } from './lifecycle.js';
import { provisionTask, type Progress, type ProvisionResult } from './provision.js';
import { provisionRecords } from './types.js';

/**
 * `warren provision ID --refresh`: drops what was provisioned (unmount, delete the private
 * copies and layers) and provisions again from the main checkout as it is now. The caller
 * holds the task lock.
 */
export async function refreshTask(ctx: ProjectContext, task: Task, progress: Progress): Promise<ProvisionResult> {
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
  return provisionTask(ctx, fresh, progress);
}
