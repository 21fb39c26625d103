import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { assertContained } from '../workspace/paths.js';
import { requireTask } from '../workspace/tasks.js';
import { beginIntent, type RecoverFn } from '../workspace/intents.js';
import { taskManifestDir } from './layout.js';
import { ensureMounted, releaseRecords } from './lifecycle.js';
import { provisionPaths, type ProvisionResult } from './provision.js';
import { describeReplacement, replacedRecords } from './replaced.js';
import { taskStatus, type TaskStatus } from './status.js';
import { provisionRecords, type ProvisionRecord } from './types.js';

/** `warren provision` and `warren status` as library calls. */

export type ProvisionOutcome =
  | {
      refreshed: false;
      provision: ProvisionRecord[];
      remounted: string[];
      /** cow paths something else replaced, not mounted over (src/provision/replaced.ts). */ replaced: string[];
    }
  | ({ refreshed: true } & ProvisionResult);

/**
 * `warren provision ID`: mounts again what is not mounted; with `refresh`, drops what was
 * provisioned (unmount, delete the private copies and layers, and their changes) and provisions
 * again from the main checkout as it is now. Under the task lock.
 */
export async function provisionTask(
  ctx: ProjectContext,
  rawId: string,
  options: { refresh?: boolean } = {},
): Promise<ProvisionOutcome> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, options.refresh ? 'provision --refresh' : 'provision', async () => {
    const task = requireTask(ctx, id);
    assertContained(ctx.root, task.path);
    if (options.refresh) return { refreshed: true, ...(await refresh(ctx, task)) };
    const remounted = await ensureMounted(ctx, task);
    const replaced = replacedRecords(task).map(({ record, replacement }) =>
      describeReplacement(record.path, replacement),
    );
    return { refreshed: false, provision: provisionRecords(task.data), remounted, replaced };
  });
}

async function refresh(ctx: ProjectContext, task: Task): Promise<ProvisionResult> {
  const old = provisionRecords(task.data);
  // Layers and copies go from here: a warren killed half way is repaired by the next command.
  const intent = beginIntent(ctx, 'provision', task.id, { id: task.id, paths: old.map((r) => r.path) });
  const problems = await releaseRecords(ctx, task, old, { removeFiles: true });
  intent.step('released');
  if (problems.length > 0) {
    intent.done(); // what could not be cleared is as it was, and recorded as it was
    throw new WarrenError(
      'PROVISION_FAILED',
      `could not clear the provisioned paths of ${task.id}: ${problems.join('; ')}. What could not be cleared is as it was.`,
      {
        hint: 'Stop processes using the workspace (fuser -m PATH) and run the command again.',
      },
    );
  }
  clearRecords(ctx, task.id);
  intent.step('cleared');
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'provision.refresh',
    message: `cleared ${old.length} provisioned path(s) to provision again`,
    data: { paths: old.map((r) => r.path) },
  });
  const fresh = ctx.store.getTask(ctx.key, task.id) ?? task;
  const result = await provisionPaths(ctx, fresh);
  intent.step('provisioned');
  intent.done();
  return result;
}

function clearRecords(ctx: ProjectContext, id: string): void {
  removeTree(taskManifestDir(ctx, id));
  ctx.store.mergeData(ctx.key, id, { provision: [], provisionSkips: [] });
}

/**
 * A `provision --refresh` whose warren died. Once the old paths were released, the task records
 * only what exists (nothing, or the paths provisioned again so far, each recorded as it was
 * made); `provision --refresh` then provisions the rest.
 */
export const recoverProvision: RecoverFn = async (ctx, intent) => {
  const { id } = intent.data as { id: string };
  if (intent.step === 'begun') return { outcome: 'nothing-to-do', message: 'it had changed nothing' };
  if (intent.step === 'provisioned') return { outcome: 'nothing-to-do', message: 'it had provisioned everything' };
  if (intent.step === 'released') clearRecords(ctx, id);
  return {
    outcome: 'rolled-forward',
    message: `the old provisioned paths of ${id} are gone; run \`warren provision ${id} --refresh\` to provision them again`,
  };
};

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
