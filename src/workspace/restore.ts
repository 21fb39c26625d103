import { runnerFor } from '../config/runner.js';
import { WarrenError } from '../errors.js';
import { branchFacts, revParse } from '../git/refs.js';
import type { Task } from '../state/types.js';
import { archiveStamp, populateFromArchive, scanArchives, type Archive, type IgnoredArchive } from './archive.js';
import type { ProjectContext } from './context.js';
import { assertNoTask, checkedBranch, checkSlot } from './new-guards.js';
import { NEW, newTaskSteps, type NewStepName } from './create.js';
import { endPrepared, startLive, type NewTaskLive } from './new-live.js';
import { newTaskFailed } from './create-failed.js';
import { validateTaskId, validateTaskType } from './ids.js';
import { lockTask } from './locks.js';
import { runOperation, type Operation } from './operation.js';

export interface RestoreOptions {
  /** Run the setup commands (default true), as `new` does. */
  setup?: boolean;
}

/**
 * `warren restore ID`: the newest archive warren made of task ID back as a workspace (a ref
 * under refs/warren/archive/ that warren did not make, that moved, or that is dated in the
 * future is passed over, each said in a warning and an event: archive.ts). It has `new`'s guards,
 * provisioning, ports and setup, but its branch is made at the archived branch tip (never synced
 * from an upstream) and its files are the archived ones, put in place before anything runs:
 * tracked changes staged or not as they were, untracked files untracked. The archive stays
 * until `gc` expires it.
 */
export async function restoreTask(
  ctx: ProjectContext,
  rawId: string,
  options: RestoreOptions = {},
): Promise<{ task: Task; archive: Archive; ignored: IgnoredArchive[] }> {
  const id = validateTaskId(rawId);
  const { archives, ignored } = await scanArchives(ctx, id);
  // Warn-level events of the task: the command line shows them with the result (createdSummary).
  for (const i of ignored) {
    const message = `passed over ${i.ref}: ${i.reason}`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'archive.ignored',
      level: 'warn',
      message,
      data: { ref: i.ref, commit: i.commit, why: i.why },
    });
  }
  const archive = archives.at(-1);
  if (!archive) {
    throw new WarrenError(
      'TASK_NOT_FOUND',
      `no archive of task ${id} that warren made in this repository${ignored.length > 0 ? ` (${ignored.length} ref(s) under refs/warren/archive/${id}/ it did not make, or that moved, were passed over)` : ''}; nothing was changed.`,
      {
        hint: 'See `warren list --archived`: `warren rm ID --discard` makes them, and `gc` deletes them after `archive: { keep }`.',
      },
    );
  }
  // A restored task keeps the type it was archived with, even one warren.yaml no longer lists.
  const type = validateTaskType(archive.type, [archive.type]);
  const branch = checkedBranch(type, id);
  // The archive and its files are here: the task is restored here, whatever runner warren.yaml
  // names (made on a host or in a cluster, it would start from its base without them). Said.
  const elsewhere = runnerFor(ctx.config, {});
  const createOptions = {
    type,
    id,
    base: archive.base,
    sync: false,
    setup: options.setup !== false,
    ...(archive.sandbox ? { sandbox: archive.sandbox } : {}),
    ...(elsewhere !== 'local' ? { runner: 'local' } : {}),
    restoredFrom: archiveStamp(new Date(archive.at)),
  };
  for (const step of ctx.lifecycle.create) await step.check?.(ctx, createOptions);

  const lock = lockTask(ctx, id, `restore ${branch}`);
  try {
    assertNoTask(ctx, id);
    // The task's record names its base (land and rm read it): the archived base must still exist.
    const facts = await branchFacts(ctx.repo, [archive.base, branch]);
    if (!facts.has(archive.base) && !(await revParse(ctx.repo, archive.base))) {
      throw new WarrenError(
        'BASE_UNKNOWN',
        `base ${JSON.stringify(archive.base)} is not a branch or commit of this repository; nothing was created.`,
        { hint: 'Pass --base with an existing branch, tag or commit.' },
      );
    }
    const wsPath = await checkSlot(ctx, id, branch, facts.has(branch));
    const live = startLive(ctx, createOptions, {
      type,
      base: archive.base,
      sync: { kind: 'no-upstream' },
      tip: archive.tip,
      restore: { from: archive.ref, populate: (path) => populateFromArchive(ctx, path, archive) },
    });
    await runOperation(
      ctx,
      RESTORE,
      id,
      { id, branch, path: wsPath, baseCommit: archive.baseCommit, archive: archive.ref },
      live,
    ).finally(() => endPrepared(live));
    const task = ctx.store.getTask(ctx.key, id);
    if (!task) throw new Error(`task ${id} vanished after it was restored`);
    if (elsewhere !== 'local')
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'archive.restored_here',
        level: 'warn',
        message: `restored on this machine, not by warren.yaml's runner ${elsewhere}: the archive's files are here, and a task made there would start from its base without them`,
        data: { runner: elsewhere },
      });
    return { task, archive, ignored };
  } finally {
    lock.release();
  }
}

/**
 * `restore`: `new`'s steps with the archived files put in right after the worktree. Killed
 * half way it is undone as `new` is (the archive is untouched), and `restore` can run again.
 */
export const RESTORE: Operation<'restore', NewStepName, NewTaskLive> = {
  op: 'restore',
  payload: NEW.payload,
  steps: (lifecycle) => newTaskSteps(lifecycle, true),
  failed: newTaskFailed,
  repaired: (outcome, data, did) =>
    outcome === 'rolled-back'
      ? `undone (${did.join(', ')}); \`warren restore ${data.id}\` can restore it again (its archive ${data.archive ?? ''} is untouched)`
      : outcome === 'nothing-to-do'
        ? `task ${data.id} had been restored, or nothing had been made`
        : did.join('; '),
};
