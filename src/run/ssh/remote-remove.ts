import { WarrenError, isWarrenError } from '../../errors.js';
import { revParse, treeOf } from '../../git/refs.js';
import { dropRef, fetchInto } from '../../git/ssh-transfer.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { HeldSnapshot } from '../../workspace/types.js';
import { gitSshCommand, gitUrl, request } from './connection.js';
import { hostNamed, type Host } from './hosts.js';
import { snapshotRef, type Snapshot } from './protocol.js';
import { forgetRecord, readRecord } from './remote-records.js';
import { fetchTurn, lastLine, quarantineRef, reportRemote, syncBack } from './remote-task.js';

/** Where `rm --discard` holds the host's workspace here until its archive does. */
const fetchedRef = (id: string): string => `refs/warren/remote-discard/${id}`;

/**
 * `rm --discard` of a task on a host, before anything changes: its commits there fetched and
 * checked (onto its branch, as before any command), then its workspace there made a commit by the
 * host's warren as a local discard reads a workspace (`snapshot`) and fetched here, in the task's
 * turn of fetches. Whatever fails refuses the removal: nothing was removed there or here.
 */
export async function snapshotRemote(ctx: ProjectContext, task: Task): Promise<HeldSnapshot | null> {
  const home = ctx.store.home;
  const record = readRecord(home, ctx.key, task.id);
  if (!record?.repo || !record.created) return null;
  const host = hostNamed(ctx, record.host);
  try {
    await syncBack(ctx, task);
  } catch (err) {
    // Refused commits keep their own words (they are kept here, under the quarantine ref).
    if (!isWarrenError(err, 'REMOTE_FAILED')) throw err;
    throw notBrought(task, host, err.message, err);
  }
  let there: Snapshot | undefined;
  try {
    there = await request<Snapshot | undefined>(home, host, {
      op: 'snapshot',
      v: 1,
      project: record.project,
      id: task.id,
    });
  } catch (err) {
    if (isWarrenError(err, 'LOCK_HELD'))
      throw new WarrenError('LOCK_HELD', `${err.message}; nothing was removed.`, {
        hint: `A run of task ${task.id} holds its workspace on host ${host.name}: let it end, then run \`warren rm ${task.id} --discard\` again.`,
        cause: err,
      });
    throw notBrought(task, host, err instanceof Error ? err.message : String(err), err);
  }
  if (typeof there?.commit !== 'string')
    throw notBrought(task, host, `the warren there does not answer \`snapshot\` (it is older than this one)`);
  const made = there;
  const turn = await fetchTurn(ctx, task.id, 'bringing its workspace here to archive it');
  const release = () => dropRef(ctx.repo.root, fetchedRef(task.id));
  try {
    const got = await fetchInto(
      ctx.repo,
      gitUrl(host, record.repo),
      gitSshCommand(home, host),
      snapshotRef(task.id),
      fetchedRef(task.id),
    ).catch((err: unknown) => {
      throw notBrought(task, host, lastLine(err), err);
    });
    if (got !== made.commit)
      throw notBrought(
        task,
        host,
        `${got === null ? 'nothing' : got.slice(0, 12)} was fetched, not ${made.commit.slice(0, 12)}`,
      );
    const index = made.indexKept ? await revParse(ctx.repo, `${got}^2`) : null;
    const snapshot = {
      tree: await treeOf(ctx.repo, got),
      indexTree: index === null ? null : await treeOf(ctx.repo, index),
    };
    return { snapshot, changes: made.changes, release };
  } catch (err) {
    await release();
    throw err;
  } finally {
    turn.release();
  }
}

function notBrought(task: Task, host: Host, why: string, cause?: unknown): WarrenError {
  return new WarrenError(
    'REMOTE_FAILED',
    `could not bring task ${task.id}'s workspace on host ${host.name} here to archive it (${why}); nothing was removed or lost: the task, its branch and its workspace there, uncommitted work included, are as they were.`,
    {
      hint: `Once the host answers, run \`warren rm ${task.id} --discard\` again; or \`warren checkpoint ${task.id}\` commits its work there and brings it here.`,
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/**
 * `rm` of a task on a host: its commits fetched back first (refused or unreachable: the removal
 * is refused, nothing removed), then the workspace and branch there removed, then the record.
 * `discarded` (`rm --discard`, its archive made here from `snapshotRemote`): its uncommitted work
 * there is in that archive, so it does not refuse the removal (the host's own `rm --discard`
 * keeps an archive there too, of whatever it holds by then).
 */
export async function removeRemote(
  ctx: ProjectContext,
  task: Task,
  discarded?: { archive: string },
): Promise<string[]> {
  const home = ctx.store.home;
  const record = readRecord(home, ctx.key, task.id);
  if (!record) return [];
  const host = hostNamed(ctx, record.host);
  if (record.repo !== null) {
    try {
      if (record.created) {
        await syncBack(ctx, task);
        const report = await reportRemote(ctx, task);
        if (report.dirty && !discarded)
          return [
            `its workspace on host ${host.name} has uncommitted changes (\`warren checkpoint ${task.id}\` brings them here)`,
          ];
        if (report.running) return [`a run of it is still going on host ${host.name}`];
      }
      // Also when `create` never answered: a task the host made before the coordinator died goes too.
      await request(home, host, { op: 'remove', v: 1, project: record.project, id: task.id });
    } catch (err) {
      return [
        `its workspace on host ${host.name} could not be brought back and removed: ${err instanceof Error ? err.message : String(err)}`,
      ];
    }
  }
  forgetRecord(home, ctx.key, task.id);
  await dropRef(ctx.repo.root, quarantineRef(task.id));
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'remote.removed',
    message: `task ${task.id}'s workspace on host ${host.name} removed${discarded ? ` (its uncommitted work is in ${discarded.archive})` : ''}`,
    data: { host: host.name },
  });
  return [];
}
