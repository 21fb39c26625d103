import { WarrenError } from '../errors.js';
import { madeOnHost } from '../config/runner.js';
import { assertSettingsTrusted } from '../trust/trust.js';
import type { Task } from '../state/types.js';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { assertContained } from '../workspace/paths.js';
import { pinned } from '../workspace/pinned.js';
import { requireTask } from '../workspace/tasks.js';
import type { z } from 'zod';
import { runOperation, type Operation, type Schema } from '../workspace/operation.js';
import { taskManifestDir } from './layout.js';
import { ensureMounted, releaseRecords } from './task-mounts.js';
import { provisionPaths, type ProvisionResult } from './provision.js';
import { describeReplacement, replacedRecords } from './modes/replaced.js';
import { taskStatus, type TaskStatus } from './status/status.js';
import { provisionRecords, type ProvisionRecord } from './types.js';

/** `warren provision` and `warren status` as library calls. */

export type ProvisionOutcome =
  | {
      refreshed: false;
      provision: ProvisionRecord[];
      remounted: string[];
      /** cow paths something else replaced, not mounted over (src/provision/modes/replaced.ts). */ replaced: string[];
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
    if (madeOnHost(task.data.runner)) {
      throw new WarrenError(
        'USAGE',
        `task ${id} runs on host ${task.data.runner?.slice('ssh:'.length)}, where its paths are provisioned, by the host's warren; nothing was provisioned here.`,
        {
          hint: `\`warren provision ${id}\` asks the host's warren to (src/views/provision.ts); \`warren status ${id}\` shows them.`,
        },
      );
    }
    if (options.refresh) {
      // Provisioned again as warren.yaml and .worktreeinclude say now: only as the user trusted them.
      assertSettingsTrusted(ctx, `Nothing was provisioned again; task ${id} is as it was.`);
      return { refreshed: true, ...(await refresh(ctx, task)) };
    }
    const remounted = await ensureMounted(ctx, task);
    const replaced = replacedRecords(task).map(({ record, replacement }) =>
      describeReplacement(record.path, replacement),
    );
    return { refreshed: false, provision: provisionRecords(task.data), remounted, replaced };
  });
}

async function refresh(ctx: ProjectContext, task: Task): Promise<ProvisionResult> {
  const old = provisionRecords(task.data);
  const live: RefreshLive = { task, old, result: null };
  await runOperation(ctx, PROVISION, task.id, { id: task.id, paths: old.map((r) => r.path) }, live);
  if (!live.result) throw new Error(`provisioning ${task.id} again gave no result`);
  return live.result;
}

function clearRecords(ctx: ProjectContext, id: string): void {
  removeTree(taskManifestDir(ctx, id));
  ctx.store.mergeData(ctx.key, id, { provision: [], provisionSkips: [] });
}

const payload = (z: Schema) => z.object({ id: z.string(), paths: z.array(z.string()) });

declare module '../state/intents.js' {
  interface IntentPayloads {
    provision: z.infer<ReturnType<typeof payload>>;
  }
}

export interface RefreshLive {
  task: Task;
  old: ProvisionRecord[];
  result: ProvisionResult | null;
}

/**
 * `provision --refresh`: drop what was provisioned (unmount, delete the private copies and
 * layers, and their changes), forget it, provision again from the main checkout as it is now.
 * Killed before the old paths were released, nothing is repaired (a layer that came off is
 * mounted again on next use). After, the task records only what exists — nothing, or the paths
 * provisioned again so far, each recorded as it was made — and `provision --refresh` provisions
 * the rest.
 */
export const PROVISION: Operation<'provision', 'released' | 'cleared' | 'provisioned', RefreshLive> = {
  op: 'provision',
  payload,
  steps: () => [
    {
      name: 'released',
      async run({ ctx, live }) {
        const problems = await releaseRecords(ctx, live.task, live.old, { removeFiles: true });
        if (problems.length > 0) {
          throw new WarrenError(
            'PROVISION_FAILED',
            `could not clear the provisioned paths of ${live.task.id}: ${problems.join('; ')}. What could not be cleared is as it was.`,
            { hint: 'Stop processes using the workspace (fuser -m PATH) and run the command again.' },
          );
        }
      },
      recover: 'back',
    },
    {
      name: 'cleared',
      async run({ ctx, data }) {
        clearRecords(ctx, data.id);
        ctx.store.addEvent({
          project: ctx.key,
          taskId: data.id,
          kind: 'provision.refresh',
          message: `cleared ${data.paths.length} provisioned path(s) to provision again`,
          data: { paths: data.paths },
        });
      },
      recover: 'forward',
      async finish({ ctx, data }) {
        clearRecords(ctx, data.id);
        return `the old provisioned paths of ${data.id} are gone`;
      },
    },
    {
      name: 'provisioned',
      async run({ ctx, data, live }) {
        live.result = await provisionPaths(ctx, ctx.store.getTask(ctx.key, data.id) ?? live.task);
      },
      recover: 'forward',
      async finish({ data }) {
        return `run \`warren provision ${data.id} --refresh\` to provision them again`;
      },
    },
  ],
  repaired: (outcome, _data, did) => (outcome === 'nothing-to-do' ? 'it had changed nothing' : did.join('; ')),
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
  return { ...(await taskStatus(task, await pinned(ctx, task.path))), remounted };
}
