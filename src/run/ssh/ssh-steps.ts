import type { Stray } from '../../workspace/scan.js';
import { taskLockPath } from '../../workspace/locks.js';
import type { CreateStep, GcStep, RemoveStep } from '../../workspace/types.js';
import { isHolderAlive, readHolder } from '../../util/lockfile.js';
import type { ProjectContext } from '../../workspace/context.js';
import { connect, openRequest, type OpenRequest } from './connection.js';
import { runnerFor } from '../../config/runner.js';
import { hostNamed, sshHostOf, taskHost } from './hosts.js';
import { projectRecords, readRecord } from './remote-records.js';
import { createRemote } from './remote-task.js';
import { removeRemote, snapshotRemote } from './remote-remove.js';

/**
 * What `runner: ssh:NAME` (warren.yaml, or `new --runner`) plugs into a task's life. `new`
 * refuses up front, nothing made, when the host is not declared (HOST_UNKNOWN), ssh is missing
 * or the host does not answer (RUNNER_UNAVAILABLE); after the worktree here (the coordinator's copy of the branch, which only
 * checked commits move), the task is made on the host, before setup (which runs there).
 */
export const sshCreate: CreateStep<OpenRequest | null> = {
  name: 'ssh',
  async check(ctx, options) {
    const name = sshHostOf(runnerFor(ctx.config, options));
    if (name === null) return;
    await connect(ctx.store.home, hostNamed(ctx, name), `task ${options.id}`);
  },
  // The host's warren started while git makes the worktree here: it waits for its request (closed unused if `new` fails first).
  async prepare(ctx, options) {
    const name = sshHostOf(runnerFor(ctx.config, options));
    return name === null ? null : openRequest(ctx.store.home, hostNamed(ctx, name), `task ${options.id}`);
  },
  async run(ctx, task, _options, opened) {
    const host = taskHost(ctx, task);
    if (host) await createRemote(ctx, task, host, opened);
    else opened?.close();
  },
};

/**
 * `rm`: after teardown (which runs on the host), the host's commits fetched back and checked,
 * then its workspace and branch removed there. Refused (nothing removed) while the host holds
 * uncommitted work, a run, or commits that just arrived (the guards here saw the branch before them).
 * `rm --discard`: the host's workspace read here first (`snapshot`), for the archive made here
 * before the host removes it; so, like a cow checkout, it holds the workspace: released last.
 */
export const sshRemove: RemoveStep = {
  name: 'ssh',
  holdsWorkspace: true,
  snapshot: (ctx, task) => snapshotRemote(ctx, task),
  async release(ctx, task, discarded) {
    const before = readRecord(ctx.store.home, ctx.key, task.id)?.sent ?? null;
    const problems = await removeRemote(ctx, task, discarded);
    if (problems.length > 0) return problems;
    const after = readRecord(ctx.store.home, ctx.key, task.id)?.sent ?? null;
    return before !== null && after !== null && after !== before
      ? [`new commits of it were fetched from its host; run \`warren rm ${task.id}\` again once you have seen them`]
      : [];
  },
};

/** `gc`: what tasks gone here left on their hosts, removed there when nothing would be lost (remote-gc.ts); with `--hosts`, what no record here knows too. */
export const sshGc: GcStep = {
  name: 'hosts',
  async collect(ctx, ask) {
    const { collectRemoteOrphans, collectUnknownOnHosts } = await import('./remote-gc.js');
    const orphans = await collectRemoteOrphans(ctx);
    if (!ask.hosts) return orphans;
    const unknown = await collectUnknownOnHosts(ctx);
    return { removed: [...orphans.removed, ...unknown.removed], kept: [...orphans.kept, ...unknown.kept] };
  },
};

/**
 * `scan`'s strays of tasks on other machines: a task whose host may hold commits not fetched back
 * (a lost connection, a killed warren: the next command of the task fetches them), and a record
 * whose task is gone here (its workspace there may remain).
 */
export function remoteStrays(ctx: ProjectContext): Stray[] {
  const strays: Stray[] = [];
  for (const { id, record } of projectRecords(ctx.store.home, ctx.key)) {
    const task = ctx.store.getTask(ctx.key, id);
    if (!task) {
      strays.push({
        kind: 'remote-orphan',
        id,
        reason: `no task ${id} here, but host ${record.host} may still have its workspace (${record.path ?? 'never made'}); \`warren gc\` removes it there when it holds nothing that is not here`,
      });
      continue;
    }
    const holder = readHolder(taskLockPath(ctx, id));
    if (record.pending && !(holder && isHolderAlive(holder))) {
      strays.push({
        kind: 'remote-unfetched',
        id,
        path: record.path ?? task.path,
        reason: `host ${record.host} may hold commits of it not fetched back (a run or commit there ended without warren here seeing it through); its next command, or \`warren checkpoint ${id}\`, fetches and checks them`,
      });
    }
  }
  return strays;
}
