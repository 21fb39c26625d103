import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { changedFiles, patchBetween, type FileChange } from '../git/diff.js';
import { mergeBase } from '../git/history.js';
import { headOrNull } from '../git/index-ops.js';
import { splitPatchByFile } from '../git/parse.js';
import { revParse } from '../git/refs.js';
import { snapshotWorktree } from '../git/snapshot.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { baseTip } from '../workspace/git-view.js';
import { assertContained } from '../workspace/paths.js';
import { provisionedExcludes } from '../workspace/provisioned.js';
import { requireTask } from '../workspace/tasks.js';
import { pinned } from '../workspace/pinned.js';
import { remoteHostName } from '../run/ssh/hosts.js';
import { bringBack } from '../run/ssh/remote-task.js';
import { hostWorkspace } from '../run/ssh/remote-worktree.js';

/**
 * `warren diff ID`: everything the task changed against its base — its commits, and what is not
 * committed yet, untracked files included. warren's own provisioned paths are left out (`warren
 * status` reports changes inside those). The workspace is read through a copy of its index, so
 * neither its index nor its files change.
 */

/** all: base → workspace; committed: base → branch tip; uncommitted: HEAD → workspace. */
export const DIFF_SCOPES = ['all', 'committed', 'uncommitted'] as const;
export type DiffScope = (typeof DIFF_SCOPES)[number];

export const FILE_STATUS = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
} as const;
export type FileStatus = (typeof FILE_STATUS)[keyof typeof FILE_STATUS];

export interface DiffFile {
  path: string;
  /** Where a renamed or copied file came from. */
  from: string | null;
  status: FileStatus;
  /** Lines added and deleted; null for a binary file. */
  added: number | null;
  deleted: number | null;
  binary: boolean;
  /** With `byFile`: this file's patch, or null when it was cut (see `truncated`). */
  patch?: string | null;
}

export interface TaskDiff {
  id: string;
  base: string;
  branch: string;
  scope: DiffScope;
  /** The commit the diff starts from: where the branch left the base (HEAD for `uncommitted`). */
  from: string;
  /** The branch tip (for `committed`), or the tree of the workspace as it is. */
  to: string;
  files: DiffFile[];
  added: number;
  deleted: number;
  /** The whole patch (unless `stat` or `byFile`). */
  patch?: string;
  /** Some patch text was left out to stay under `maxPatchBytes`. */
  truncated: boolean;
}

export interface DiffOptions {
  scope?: DiffScope;
  /** Files and counts only, no patch. */
  stat?: boolean;
  /** Each file's patch on the file, instead of one patch. */
  byFile?: boolean;
  /** With `byFile`: files past this many bytes of patch in total get a null patch. */
  maxPatchBytes?: number;
  /** The workspace read elsewhere (a task on another machine): its HEAD, and its files as a tree. */
  worktree?: { head: string; tree: string };
}

/** What the dashboard shows of one task: each file's patch until about 1 MiB in all. */
export const DASHBOARD_PATCH_BYTES = 1024 * 1024;

/**
 * `warren diff ID`'s answer wherever the task runs: the command line's `diff`, the dashboard's
 * task view, a review comment's hunk and MCP's `changes` all read it. Of a task on a host over
 * SSH, what it committed there is fetched and checked first (as before every command that reads
 * its branch) and, unless `committed`, its workspace there is read, uncommitted work included
 * (src/run/ssh/remote-worktree.ts); of a task here, its workspace here.
 */
export async function diffTask(
  ctx: ProjectContext,
  rawId: string,
  options: Omit<DiffOptions, 'worktree'> = {},
): Promise<TaskDiff> {
  const task = requireTask(ctx, rawId);
  if (remoteHostName(task) === null) return diffOf(ctx, task, options);
  await bringBack(ctx, task, null);
  const there = (options.scope ?? 'all') === 'committed' ? null : await hostWorkspace(ctx, task);
  try {
    return await diffOf(ctx, task, {
      ...options,
      ...(there ? { worktree: { head: there.head, tree: there.tree } } : {}),
    });
  } finally {
    await there?.release();
  }
}

export async function diffOf(ctx: ProjectContext, task: Task, options: DiffOptions = {}): Promise<TaskDiff> {
  const scope = options.scope ?? 'all';
  const { from, to } = await endpoints(ctx, task, scope, options.worktree);
  const changes = await changedFiles(ctx.repo.root, from, to);
  const files = changes.map(toFile);
  const result: TaskDiff = {
    id: task.id,
    base: task.base,
    branch: task.branch,
    scope,
    from,
    to,
    files,
    added: files.reduce((n, f) => n + (f.added ?? 0), 0),
    deleted: files.reduce((n, f) => n + (f.deleted ?? 0), 0),
    truncated: false,
  };
  if (options.stat || files.length === 0) return result;
  const text = (await patchBetween(ctx.repo.root, from, to)).toString('utf8');
  if (!options.byFile) return { ...result, patch: text };
  const parts = splitPatchByFile(text);
  let budget = options.maxPatchBytes ?? Number.POSITIVE_INFINITY;
  files.forEach((f, i) => {
    const part = parts[i] ?? '';
    f.patch = part.length <= budget ? part : null;
    if (f.patch === null) result.truncated = true;
    else budget -= part.length;
  });
  return result;
}

function toFile(c: FileChange): DiffFile {
  const status = FILE_STATUS[c.status as keyof typeof FILE_STATUS] ?? 'modified';
  return { path: c.path, from: c.from, status, added: c.added, deleted: c.deleted, binary: c.added === null };
}

/** The two sides of the diff: commits, or the workspace's state as a tree. */
async function endpoints(
  ctx: ProjectContext,
  task: Task,
  scope: DiffScope,
  elsewhere?: DiffOptions['worktree'],
): Promise<{ from: string; to: string }> {
  const branchTip = await revParse(ctx.repo, `refs/heads/${task.branch}`);
  if (scope === 'committed') {
    if (!branchTip) throw branchGone(task);
    return { from: await forkPoint(ctx, task, branchTip), to: branchTip };
  }
  if (elsewhere)
    return {
      from: scope === 'uncommitted' ? elsewhere.head : await forkPoint(ctx, task, elsewhere.head),
      to: elsewhere.tree,
    };
  assertContained(ctx.root, task.path);
  const wt = fs.existsSync(task.path) ? await pinned(ctx, task.path) : null;
  const head = wt ? await headOrNull(wt) : null;
  if (!head) {
    throw new WarrenError(
      'OWNERSHIP_MISMATCH',
      `task ${task.id}'s workspace ${task.path} is missing or has no commit; only its committed changes can be shown. Nothing was changed.`,
      {
        hint: `Run \`warren diff ${task.id} --committed\`, or \`warren scan\` to see what happened to the workspace.`,
      },
    );
  }
  const { tree } = await snapshotWorktree(wt ?? task.path, await provisionedExcludes(ctx, task), ctx.store.home);
  return { from: scope === 'uncommitted' ? head : await forkPoint(ctx, task, head), to: tree };
}

/** Where the branch left its base (the base may have moved on since); the recorded base commit if they share nothing. */
async function forkPoint(ctx: ProjectContext, task: Task, tip: string): Promise<string> {
  const base = await baseTip(ctx.repo, task.base);
  return (base ? await mergeBase(ctx.repo, base, tip) : null) ?? task.baseCommit;
}

function branchGone(task: Task): WarrenError {
  return new WarrenError(
    'TASK_STATE',
    `task ${task.id}'s branch ${task.branch} is missing; there is nothing to compare. Nothing was changed.`,
    { hint: 'See `warren scan`.' },
  );
}
