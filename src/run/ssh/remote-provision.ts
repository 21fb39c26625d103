import { WarrenError } from '../../errors.js';
import type { ProvisionOutcome } from '../../provision/operations.js';
import type { Task } from '../../state/types.js';
import { assertSettingsTrusted, trustState } from '../../trust/trust.js';
import type { ProjectContext } from '../../workspace/context.js';
import { withTaskLock } from '../../workspace/locks.js';
import { request } from './connection.js';
import { hostNamed } from './hosts.js';
import type { HostProvisioned } from './protocol.js';
import { readRecord } from './remote-records.js';
import { missingRecord } from './remote-task.js';

/** `warren provision` of a task on a host: the host's answer, and the host it came from. */
export type HostProvisionOutcome = ProvisionOutcome & { host: string };

/**
 * `warren provision ID [--refresh]` of a task on a host: its paths are the host's (made by its
 * `new`, from its main checkout), so the host's warren provisions them, in its workspace, from
 * its main checkout put at the task's base as at `create`. What it said is said here, each of the
 * task's events it recorded is recorded here too (`remote.relayed`), and its answer is the one a
 * local task's `provision` gives. Under the task's lock here, as a local `provision` is.
 */
export async function provisionRemote(
  ctx: ProjectContext,
  task: Task,
  options: { refresh?: boolean },
): Promise<HostProvisionOutcome> {
  const record = readRecord(ctx.store.home, ctx.key, task.id);
  if (!record?.repo || !record.created) throw missingRecord(task);
  const host = hostNamed(ctx, record.host);
  return withTaskLock(
    ctx,
    task.id,
    options.refresh ? 'provision --refresh (on its host)' : 'provision (on its host)',
    async () => {
      // As for a task here: provisioned again only as the user trusted warren.yaml.
      if (options.refresh) assertSettingsTrusted(ctx, `Nothing was provisioned again; task ${task.id} is as it was.`);
      const trust = trustState(ctx);
      const answer = await request<HostProvisioned | undefined>(ctx.store.home, host, {
        op: 'provision',
        v: 1,
        project: record.project,
        id: task.id,
        base: task.baseCommit,
        ...(options.refresh ? { refresh: true } : {}),
        ...(trust.trusted ? { trusted: trust.hash } : {}),
      });
      const outcome = answer?.outcome as ProvisionOutcome | undefined;
      if (typeof outcome?.refreshed !== 'boolean')
        throw new WarrenError(
          'REMOTE_FAILED',
          `host ${host.name}'s warren does not answer \`provision\` (it is older than this one); nothing was provisioned.`,
          { hint: `Update warren on host ${host.name}, then run \`warren provision ${task.id}\` again.` },
        );
      for (const line of answer?.lines ?? []) ctx.reporter.line(`on host ${host.name}: ${line}`);
      for (const e of answer?.events ?? []) {
        ctx.store.addEvent({
          project: ctx.key,
          taskId: task.id,
          kind: 'remote.relayed',
          level: e.level === 'warn' || e.level === 'error' ? e.level : 'info',
          message: `on host ${host.name}: ${e.message}`,
          data: { host: host.name, kind: e.kind },
        });
      }
      return { ...outcome, host: host.name };
    },
  );
}
