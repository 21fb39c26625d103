import type { z } from 'zod';
import { WarrenError } from '../errors.js';
import { isAncestor } from '../git/history.js';
import { headOf } from '../git/index-ops.js';
import { abortMerge, abortRebase, mergeHead, mergeIn, rebaseOnto, resetKeep, unmergedPaths } from '../git/integrate.js';
import { setRef } from '../git/refs.js';
import { statusOf } from '../git/status.js';
import type { Worktree } from '../git/worktree.js';
import { checkpointTask } from '../land/checkpoint.js';
import { isProvisioned, provisionedPaths } from '../land/provisioned.js';
import { loadTask } from '../land/task.js';
import type { ProjectContext } from '../workspace/context.js';
import { baseTip } from '../workspace/git-view.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { runOperation, type Operation, type Schema } from '../workspace/operation.js';
import { assertWorkspaceState, inspectWorkspace } from '../workspace/ownership.js';
import { pinned } from '../workspace/pinned.js';
import { LIVE_STATES } from './map.js';
import { abortSync } from './sync-abort.js';

export type SyncHow = 'rebase' | 'merge';

/** Where the task's branch as it was before its last sync is kept (one per task, moved by each sync). */
export const presyncRef = (id: string): string => `refs/warren/sync/${id}`;

export interface SyncOptions {
  /** Default: warren.yaml's `conflicts.sync`, else rebase. */
  how?: SyncHow;
  /** On a conflict, leave the base merged into the workspace with the conflict to resolve, instead of rolling back. */
  keep?: boolean;
  /** Checkpoint uncommitted work first, instead of refusing. */
  checkpoint?: boolean;
  /** Roll back the conflict a `--keep` left. */
  abort?: boolean;
}

export type SyncResult =
  | { state: 'up-to-date'; id: string; head: string; onto: string }
  | { state: 'synced'; id: string; how: SyncHow; from: string; to: string; onto: string; checkpoint: string | null }
  | {
      state: 'conflict';
      id: string;
      how: SyncHow;
      onto: string;
      paths: string[];
      kept: true;
      checkpoint: string | null;
    }
  | { state: 'aborted'; id: string; head: string };

/**
 * `warren sync ID`: the base's new commits brought into the task's branch, by rebase (the
 * default) or merge. Uncommitted work is never at stake: it is refused, or checkpointed first
 * (`--checkpoint`). A conflict rolls everything back, saying which paths (SYNC_CONFLICT), or with
 * `--keep` is left in the workspace as a merge for the agent to resolve (`warren run ID
 * --resolve`), concluded by `warren checkpoint ID`; `--abort` takes it back out.
 */
export async function syncTask(ctx: ProjectContext, rawId: string, options: SyncOptions = {}): Promise<SyncResult> {
  const id = validateTaskId(rawId);
  if (options.abort) return withTaskLock(ctx, id, `sync ${id} --abort`, () => abortSync(ctx, id));
  const checkpoint = options.checkpoint
    ? (await checkpointTask(ctx, id, { message: `checkpoint: ${id} before sync` })).commit
    : null;
  return withTaskLock(ctx, id, `sync ${id}`, async () => {
    // Gather and check everything before the first change.
    const task = loadTask(ctx, id);
    if (!LIVE_STATES.has(task.state))
      throw new WarrenError(
        'TASK_STATE',
        `task ${id} is ${task.state}; only a live task is synced. Nothing was changed.`,
        {
          hint: 'See `warren show ID`.',
        },
      );
    await assertWorkspaceState(ctx.repo, task);
    const wt = await pinned(ctx, task.path);
    const provisioned = provisionedPaths(ctx, task);
    const dirty = (await statusOf(wt)).filter((e) => !isProvisioned(e.path, provisioned));
    if (dirty.length > 0)
      throw new WarrenError(
        'WORKSPACE_DIRTY',
        `task ${id} has ${dirty.length} uncommitted change(s) (${dirty
          .slice(0, 10)
          .map((e) => e.path)
          .join(', ')}); sync rewrites the branch under them, so it refuses. Nothing was changed.`,
        {
          hint: `Run \`warren sync ${id} --checkpoint\` to commit them first, or \`warren checkpoint ${id}\`.`,
          details: { changes: dirty },
        },
      );
    const onto = await baseTip(ctx.repo, task.base);
    if (!onto)
      throw new WarrenError(
        'BASE_UNKNOWN',
        `the base ${task.base} of task ${id} is not a commit; nothing was changed.`,
      );
    const head = await headOf(wt);
    if (await isAncestor(ctx.repo, onto, head)) return { state: 'up-to-date', id, head, onto };
    const how = options.how ?? ctx.config.conflicts?.sync ?? 'rebase';
    const live: SyncLive = { wt, paths: [] };
    const done = await runOperation(
      ctx,
      SYNC,
      id,
      { id, path: task.path, base: task.base, head, onto, how, keep: options.keep === true },
      live,
    );
    if (done.conflict) return { state: 'conflict', id, how: done.how, onto, paths: live.paths, kept: true, checkpoint };
    return { state: 'synced', id, how: done.how, from: head, to: done.to ?? head, onto, checkpoint };
  });
}

// ─── The operation ──────────────────────────────────────────────────────────────────────────

const payload = (z: Schema) =>
  z.object({
    id: z.string(),
    path: z.string(),
    base: z.string(),
    /** The branch tip before: the rollback's target. */
    head: z.string(),
    onto: z.string(),
    how: z.enum(['rebase', 'merge']),
    keep: z.boolean(),
    /** A conflict left in the workspace (`--keep`). */
    conflict: z.boolean().optional(),
    to: z.string().optional(),
  });

type SyncData = z.infer<ReturnType<typeof payload>>;

declare module '../state/intents.js' {
  interface IntentPayloads {
    sync: SyncData;
  }
}

export interface SyncLive {
  wt: Worktree;
  paths: string[];
}

/** Puts the branch, index and files back at `head`: a rebase or merge half done is aborted, a finished one reset. */
async function rollBack(wt: Worktree, head: string): Promise<string | void> {
  const did: string[] = [];
  if ((await abortRebase(wt)).exitCode === 0) did.push('the rebase was aborted');
  if ((await mergeHead(wt)) !== null && (await abortMerge(wt)).exitCode === 0) did.push('the merge was aborted');
  if ((await headOf(wt)) !== head) {
    await resetKeep(wt, head);
    did.push(`the branch was put back at ${head.slice(0, 12)}`);
  }
  return did.length > 0 ? did.join(', ') : undefined;
}

function conflictError(data: SyncData, paths: readonly string[]): WarrenError {
  return new WarrenError(
    'SYNC_CONFLICT',
    `bringing ${data.base} (${data.onto.slice(0, 12)}) into task ${data.id} by ${data.how} conflicts in ${paths.join(', ')}; it was rolled back: the branch, the index and every file are as they were.`,
    {
      hint: `Run \`warren sync ${data.id} --keep\` to leave the conflict in the workspace, then \`warren run ${data.id} --resolve --agent NAME\` (or resolve it yourself) and \`warren checkpoint ${data.id}\`.`,
      details: { paths, onto: data.onto, how: data.how },
    },
  );
}

/**
 * `sync`: integrate, then record. Killed while integrating, the branch goes back to where it was
 * (a rebase or merge half done is aborted) unless git had finished: then it is recorded.
 */
export const SYNC: Operation<'sync', 'integrated' | 'recorded', SyncLive> = {
  op: 'sync',
  payload,
  steps: () => [
    {
      name: 'integrated',
      async run({ ctx, data, live }) {
        const message = `Merge ${data.base} into ${data.id} (warren sync)`;
        // The branch as it was stays reachable: a rebase rewrites its commits (no commit is ever lost).
        await setRef(ctx.repo, presyncRef(data.id), data.head, `warren: ${data.id} before sync`);
        const first =
          data.how === 'rebase' ? await rebaseOnto(live.wt, data.onto) : await mergeIn(live.wt, data.onto, message);
        if (first.exitCode === 0) return { to: await headOf(live.wt) };
        const paths = await unmergedPaths(live.wt);
        if (paths.length === 0)
          throw new WarrenError('GIT_FAILED', `git ${data.how} failed in ${data.path}: ${first.stderr.trim()}`);
        live.paths = paths;
        if (!data.keep) throw conflictError(data, paths);
        if (data.how === 'rebase') {
          // One conflict to resolve, concluded by a checkpoint: the base is merged instead (an event says so).
          await rollBack(live.wt, data.head);
          const merged = await mergeIn(live.wt, data.onto, message);
          if (merged.exitCode === 0) return { to: await headOf(live.wt), how: 'merge' };
          live.paths = await unmergedPaths(live.wt);
        }
        ctx.store.addEvent({
          project: ctx.key,
          taskId: data.id,
          kind: 'sync.conflict',
          level: 'warn',
          message: `${data.base} merged into ${data.id} with conflicts in ${live.paths.join(', ')}, left in the workspace to resolve${data.how === 'rebase' ? ' (the rebase stopped on them, so the base was merged instead: one conflict, concluded by `warren checkpoint`)' : ''}; \`warren sync ${data.id} --abort\` rolls it back`,
          data: { how: 'merge', paths: live.paths, onto: data.onto, kept: true },
        });
        return { conflict: true, how: 'merge' };
      },
      async undo({ ctx, data, live }) {
        return rollBack(live?.wt ?? (await pinned(ctx, data.path)), data.head);
      },
      recover: {
        // git finished (no operation half done, the branch holds the base): forward; else back.
        async decide({ ctx, data }) {
          const task = ctx.store.getTask(ctx.key, data.id);
          if (!task) return 'back';
          const problem = await inspectWorkspace(ctx.repo, task);
          if (problem) return 'back';
          const tip = await headOf(await pinned(ctx, data.path));
          return tip !== data.head && (await isAncestor(ctx.repo, data.onto, tip)) ? 'forward' : 'back';
        },
      },
    },
    {
      name: 'recorded',
      async run({ ctx, data }) {
        if (data.conflict) return;
        recordSynced(ctx, data, data.to ?? data.head);
      },
      recover: 'forward',
      async finish({ ctx, data }) {
        const tip = await headOf(await pinned(ctx, data.path));
        if ((await mergeHead(await pinned(ctx, data.path))) !== null) return;
        recordSynced(ctx, data, tip);
        return `${data.id} holds ${data.base} at ${data.onto.slice(0, 12)} (by ${data.how})`;
      },
    },
  ],
  repaired: (outcome, data, did) =>
    outcome === 'rolled-back'
      ? `${did.join('; ')}; \`warren sync ${data.id}\` can run again`
      : did.join('; ') || 'it had changed nothing',
};

function recordSynced(ctx: ProjectContext, data: SyncData, to: string): void {
  ctx.store.addEvent({
    project: ctx.key,
    taskId: data.id,
    kind: 'task.synced',
    message: `brought ${data.base} (${data.onto.slice(0, 12)}) into ${data.id} by ${data.how}: ${data.head.slice(0, 12)} → ${to.slice(0, 12)}`,
    data: { how: data.how, from: data.head, to, onto: data.onto, checkpoint: null },
  });
}
