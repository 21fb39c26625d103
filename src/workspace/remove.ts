import fs from 'node:fs';
import type { z } from 'zod';
import { WarrenError } from '../errors.js';
import type { WorktreeEntry } from '../git/parse.js';
import type { WorktreeSnapshot } from '../git/snapshot.js';
import { deleteBranch as deleteGitBranch, revParse } from '../git/refs.js';
import { listWorktrees, removeWorktree, SPARE_LOCK_REASON, unlockWorktree } from '../git/worktrees.js';
import { TASK_STATES, type Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import { archiveStamp, archiveTask, snapshotTask } from './archive.js';
import type { ProjectContext } from './context.js';
import { validateTaskId } from './ids.js';
import { forgetWorkspace } from './ledger.js';
import { clearLeftover } from './leftover.js';
import { forgetBranch } from './branch-records.js';
import { lockTask, withRepoLock } from './locks.js';
import { runOperation, type Direction, type Operation, type Schema, type Step } from './operation.js';
import { afterRemoveSteps, releaseSteps } from './release.js';
import { checkBranchLanded, checkRemoval, gatherRemoval, type RemoveOptions } from './removal-facts.js';
import { requireTask } from './tasks.js';
import type { HeldSnapshot } from './types.js';

export type { RemoveOptions } from './removal-facts.js';

export interface RemoveResult {
  removed: true;
  id: string;
  branch: string;
  branchDeleted: boolean;
  /** Commits on the kept branch that the base does not have. */
  unlandedCommits: number;
  /** Set when the folder was already missing: only the records were removed. */
  folderMissing?: true;
  /** `--discard`: the archive ref everything was saved under. */
  archive?: string;
}

/**
 * `warren rm ID`: gather every fact once → check every guard → the `rm` (or `rm --discard`)
 * operation → verify that git forgot the worktree and that the folder is gone from disk. The
 * folder may be whole, already missing (deleted, or on a disk not mounted: only the records
 * go), or left over from a removal that could not delete everything (`remove_failed`).
 */
export async function removeTask(
  ctx: ProjectContext,
  rawId: string,
  options: RemoveOptions = {},
): Promise<RemoveResult> {
  const id = validateTaskId(rawId);
  const lock = lockTask(ctx, id, `rm ${id}`);
  try {
    for (const step of ctx.lifecycle.remove) await step.collect?.(ctx, requireTask(ctx, id));
    const discard = options.discard === true;
    // --discard of a workspace whose files live elsewhere (a host's): read here before any guard or change.
    const held = discard ? await snapshotElsewhere(ctx, requireTask(ctx, id)) : null;
    try {
      return await removeGathered(ctx, id, options, held);
    } finally {
      await held?.release();
    }
  } finally {
    lock.release();
  }
}

async function snapshotElsewhere(ctx: ProjectContext, task: Task): Promise<HeldSnapshot | null> {
  for (const step of ctx.lifecycle.remove) {
    const held = await step.snapshot?.(ctx, task);
    if (held) return held;
  }
  return null;
}

/** `rm` once the task's lock is held (and, for `--discard`, its files elsewhere read): gather → check → act. */
async function removeGathered(
  ctx: ProjectContext,
  id: string,
  options: RemoveOptions,
  held: HeldSnapshot | null,
): Promise<RemoveResult> {
  const facts = await gatherRemoval(ctx, requireTask(ctx, id));
  checkRemoval(facts, options);
  await checkBranchLanded(ctx, facts, options);
  const { task } = facts;
  const discard = options.discard === true;
  const data: RemovalData = {
    id,
    path: task.path,
    branch: task.branch,
    base: task.base,
    folder: facts.folder,
    deleteBranch: options.deleteBranch === true || discard,
    prevState: task.state,
    tip: facts.tip,
    changes: held ? held.changes : facts.dirty.length,
    unlanded: facts.unlanded,
  };
  const live = { task, entry: facts.entry, snapshot: held?.snapshot ?? null };
  const done = await runOperation(ctx, discard ? DISCARD : RM, id, data, live);
  return {
    removed: true,
    id,
    branch: task.branch,
    branchDeleted: done.branchDeleted === true,
    unlandedCommits: facts.unlanded,
    ...(facts.folder === 'missing' ? { folderMissing: true as const } : {}),
    ...(done.archive ? { archive: done.archive } : {}),
  };
}

// ─── The operations ─────────────────────────────────────────────────────────────────────────

const payload = (z: Schema) =>
  z.object({
    id: z.string(),
    path: z.string(),
    branch: z.string(),
    base: z.string(),
    folder: z.enum(['whole', 'missing', 'leftover']),
    deleteBranch: z.boolean(),
    prevState: z.enum(TASK_STATES),
    tip: z.string().nullable(),
    /** Uncommitted changes, and commits not on the base: what `--discard`'s archive saves, and the event says. */
    changes: z.number(),
    unlanded: z.number(),
    archive: z.string().optional(),
    branchDeleted: z.boolean().optional(),
  });

export type RemovalData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    rm: RemovalData;
    discard: RemovalData;
  }
}

export interface RemovalLive {
  task: Task;
  entry: WorktreeEntry | null;
  /** `--discard`: the workspace's files as read from where they live (a host's), for the archive. */
  snapshot?: WorktreeSnapshot | null;
}

type RemovalStepName = 'removing' | 'archived' | 'released' | 'worktree-removed' | 'branch-deleted' | 'after-remove';
type RemovalStep = Step<RemovalStepName, RemovalData, RemovalLive>;

/** The row reads `removing`, so no other command starts on the task. Undone: its state as before. */
const removing: RemovalStep = {
  name: 'removing',
  async run({ ctx, data }) {
    if (data.folder !== 'leftover') ctx.store.transition(ctx.key, data.id, data.prevState, 'removing');
  },
  async undo({ ctx, data }) {
    if (ctx.store.getTask(ctx.key, data.id)?.state !== 'removing') return;
    ctx.store.transition(ctx.key, data.id, 'removing', data.prevState);
    return `the workspace ${data.path} is whole; task ${data.id} is ${data.prevState} again (its layers are mounted again on next use)`;
  },
  recover: 'back',
};

/**
 * `--discard`: everything saved under refs/warren/archive/ — after teardown, before the
 * workspace's own mount (a cow checkout) comes off: the archive is the workspace as it is
 * removed. A folder that is gone (or left over) has only its branch left to save; files that live
 * elsewhere (a host's workspace) were read before the operation began (RemoveStep.snapshot). Not undone:
 * the archive is a copy, and a refusal after it says where it is.
 */
const archived: RemovalStep = {
  name: 'archived',
  async run({ ctx, data, live }) {
    const stamp = archiveStamp(new Date());
    for (const step of ctx.lifecycle.remove) await step.save?.(ctx, live.task, stamp);
    if (data.folder === 'whole') {
      const problems = await releaseSteps(ctx, live.task, 'inside');
      if (problems.length > 0) throw notReleased(data, problems, false);
    }
    if (!data.tip) return;
    const snapshot = live.snapshot ?? (data.folder === 'whole' ? await snapshotTask(ctx, live.task) : null);
    const archive = await archiveTask(ctx, live.task, data.tip, snapshot);
    ctx.store.addEvent({
      project: ctx.key,
      taskId: data.id,
      kind: 'task.archived',
      message: `saved ${data.changes} uncommitted change(s) and ${data.unlanded} commit(s) not on ${data.base} as ${archive.ref}; \`warren restore ${data.id}\` brings them back`,
      data: {
        archive: archive.ref,
        commit: archive.commit,
        tip: archive.tip,
        changes: data.changes,
        unlandedCommits: data.unlanded,
      },
    });
    return { archive: archive.ref };
  },
  recover: 'back',
};

/**
 * Every feature's release (teardown, unmount): what would not come off refuses the removal,
 * with everything as it was. A missing folder's teardown cannot run (it is recorded as not
 * run); nothing can be mounted inside a missing folder. Not undone: a layer that came off is
 * mounted again on next use.
 */
function released(which: 'all' | 'workspace'): RemovalStep {
  return {
    name: 'released',
    async run({ ctx, data, live }) {
      if (data.folder === 'leftover') return;
      const discarded = data.archive ? { archive: data.archive } : undefined;
      if (data.folder === 'missing') {
        await releaseSteps(ctx, live.task, 'all', discarded);
        return;
      }
      // The workspace's own mount (a cow checkout) comes off only once everything inside it did.
      let problems = await releaseSteps(ctx, live.task, which === 'all' ? 'inside' : 'workspace', discarded);
      if (which === 'all' && problems.length === 0)
        problems = await releaseSteps(ctx, live.task, 'workspace', discarded);
      const mounted = mountsUnder(readMounts(), data.path).map((m) => `${m.mountPoint} is still mounted`);
      if (problems.length + mounted.length > 0) throw notReleased(data, [...problems, ...mounted], mounted.length > 0);
    },
    recover: 'back',
  };
}

/** The hint names the fix of what is there: a mount still up, or (a feature's refusal) what its own words say. */
function notReleased(data: RemovalData, problems: readonly string[], mounted: boolean): WarrenError {
  return new WarrenError(
    'WORKSPACE_MOUNTED',
    `could not release what is inside ${data.path}: ${problems.join('; ')}. Nothing was removed${data.archive ? ` (a copy of it was saved as ${data.archive})` : ''}.`,
    {
      hint: mounted
        ? 'Stop what uses it (fuser -m PATH), unmount it, and run `warren rm` again.'
        : 'Do what is said above (each names its way out), then run `warren rm` again.',
      details: { problems },
    },
  );
}

/**
 * git forgets the worktree (no --force: the worktree was proven clean, and git checks again;
 * --discard: everything in it was saved just now), and what it left on disk is deleted. Cut off
 * while git still lists it, the workspace is whole: back. Once git forgot it: forward.
 */
const worktreeRemoved: RemovalStep = {
  name: 'worktree-removed',
  async run({ ctx, data, live }) {
    let gitStderr = '';
    if (data.folder !== 'leftover' && live.entry) {
      const entry = live.entry;
      await withRepoLock(ctx, `worktree remove ${data.id}`, async () => {
        // A spare lock left by a gc that was killed mid-prune would make git refuse.
        if (entry.locked === SPARE_LOCK_REASON) await unlockWorktree(ctx.repo, data.path);
        // With the folder gone, git only deletes its own record; a user's lock (a removable disk) makes it refuse.
        if (data.folder === 'whole' || !fs.existsSync(data.path)) {
          gitStderr = (await removeWorktree(ctx.repo, data.path, data.archive !== undefined)).stderr.trim();
        }
      });
    }
    if (await listed(ctx, data.path)) {
      throw data.folder === 'missing'
        ? new WarrenError(
            'REMOVE_INCOMPLETE',
            `task ${data.id}'s folder ${data.path} is missing, and git kept its record of it: ${gitStderr || 'the folder came back meanwhile'}. The task is as it was.`,
            {
              hint: live.entry?.locked
                ? `git's record is locked ("${live.entry.locked}"): if the folder is gone for good, \`git worktree unlock ${data.path}\` and run \`warren rm ${data.id}\` again.`
                : `Run \`warren rm ${data.id}\` again.`,
            },
          )
        : new WarrenError(
            'REMOVE_INCOMPLETE',
            `git refused to remove ${data.path}: ${gitStderr || 'unknown reason'}. The workspace is as it was.`,
            {
              hint: 'Fix what git names and run `warren rm` again.',
            },
          );
    }
    if (data.folder !== 'missing' && fs.existsSync(data.path)) clearLeftover(ctx, live.task, gitStderr);
  },
  recover: {
    decide: async ({ ctx, data }): Promise<Direction> => ((await listed(ctx, data.path)) ? 'back' : 'forward'),
  },
  async finish({ data }) {
    if (mountsUnder(readMounts(), data.path).length > 0)
      throw new Error(`${data.path} has a mount inside; unmount it and run \`warren gc\``);
    if (!fs.existsSync(data.path)) return;
    const failures = removeTree(data.path);
    if (fs.existsSync(data.path)) {
      throw new Error(
        `could not delete what git left in ${data.path}: ${failures[0]?.path} (${likelyCause(failures[0]?.code ?? '')})`,
      );
    }
    return `deleted what git left in ${data.path}`;
  },
};

/** The branch, when asked (`--delete-branch`, `--discard`) and still there. */
const branchDeleted: RemovalStep = {
  name: 'branch-deleted',
  async run({ ctx, data }) {
    if (data.deleteBranch && data.tip && (await revParse(ctx.repo, `refs/heads/${data.branch}`))) {
      await deleteBranch(ctx, data.branch);
      return { branchDeleted: true };
    }
  },
  recover: 'forward',
  async finish({ ctx, data }) {
    if (!data.deleteBranch || !(await revParse(ctx.repo, `refs/heads/${data.branch}`))) return;
    await deleteBranch(ctx, data.branch);
    return `deleted branch ${data.branch}`;
  },
};

/** What the features keep beside the workspace (ports, layers, comments), the ledger's records, the row, and the event. */
const afterRemove: RemovalStep = {
  name: 'after-remove',
  async run({ ctx, data }) {
    await forget(ctx, data, '');
  },
  recover: 'forward',
  async finish({ ctx, data }) {
    if (!ctx.store.getTask(ctx.key, data.id)) return;
    await forget(ctx, data, ` (finished after an interrupted ${data.archive ? 'rm --discard' : 'rm'})`);
    return `warren finished removing task ${data.id}`;
  },
};

async function forget(ctx: ProjectContext, data: RemovalData, note: string): Promise<void> {
  const task = ctx.store.getTask(ctx.key, data.id);
  if (task) await afterRemoveSteps(ctx, task);
  forgetWorkspace(ctx, data.path);
  // Deleted, or kept: from here on the branch is the user's, never a stray of warren's.
  forgetBranch(ctx, data.branch);
  ctx.store.deleteTask(ctx.key, data.id);
  const gone =
    data.branchDeleted ??
    (data.deleteBranch && data.tip !== null && !(await revParse(ctx.repo, `refs/heads/${data.branch}`)));
  const what =
    data.folder === 'missing' ? `forgot ${data.path} (its folder was already missing)` : `removed ${data.path}`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: data.id,
    kind: 'task.removed',
    message: data.archive
      ? `discarded ${data.path} and branch ${data.branch}; everything is saved in ${data.archive}${note}`
      : gone
        ? `${what} and deleted branch ${data.branch}${note}`
        : `${what}; kept branch ${data.branch} (${data.unlanded} commit(s) not on ${data.base})${note}`,
    data: {
      branchDeleted: gone,
      unlandedCommits: data.unlanded,
      ...(data.folder === 'missing' ? { folderMissing: true as const } : {}),
    },
  });
}

function repaired(outcome: string, data: RemovalData, did: readonly string[]): string {
  return outcome === 'rolled-back'
    ? `${did.join('; ')}, and \`warren rm ${data.id}\` can run again`
    : outcome === 'rolled-forward'
      ? `git had removed the worktree; ${did.join('; ')}`
      : 'it had changed nothing';
}

/** `rm`: the row, teardown and unmounting, git's worktree, the branch when asked, the records. */
export const RM: Operation<'rm', RemovalStepName, RemovalLive> = {
  op: 'rm',
  payload,
  steps: () => [removing, released('all'), worktreeRemoved, branchDeleted, afterRemove],
  repaired,
};

/** `rm --discard`: `rm` with the archive made between teardown and the workspace's own release. */
export const DISCARD: Operation<'discard', RemovalStepName, RemovalLive> = {
  op: 'discard',
  payload,
  steps: () => [removing, archived, released('workspace'), worktreeRemoved, branchDeleted, afterRemove],
  repaired,
};

async function listed(ctx: ProjectContext, wsPath: string): Promise<boolean> {
  return (await listWorktrees(ctx.repo)).some((wt) => wt.path === wsPath);
}

async function deleteBranch(ctx: ProjectContext, branch: string): Promise<void> {
  // -D after warren's own check: -d would only ask whether HEAD contains the branch.
  await withRepoLock(ctx, `branch delete ${branch}`, () => deleteGitBranch(ctx.repo, branch));
}
