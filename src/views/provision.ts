import { provisionTask, type ProvisionOutcome } from '../provision/operations.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { provisionRemote } from '../run/ssh/remote-provision.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { requireTask } from '../workspace/tasks.js';

/**
 * `warren provision ID [--refresh]`: here, or for a task on a host by the host's warren there
 * (its paths are the host's, made by its `new`): the same answer, with `host` naming where.
 */
export async function provisionView(
  ctx: ProjectContext,
  rawId: string,
  options: { refresh?: boolean },
): Promise<ProvisionOutcome & { host?: string }> {
  const id = validateTaskId(rawId);
  const task = requireTask(ctx, id);
  if (remoteHostName(task) !== null) return provisionRemote(ctx, task, options);
  return provisionTask(ctx, id, options);
}
