import { WarrenError } from '../errors.js';
import { commitsTouching, mergeBase } from '../git/history.js';
import { headOf } from '../git/index-ops.js';
import { mergeHead } from '../git/integrate.js';
import { mergeTreeDetailed } from '../git/merge-tree.js';
import { newestOf } from '../state/events.js';
import type { ProjectContext } from '../workspace/context.js';
import { pinned } from '../workspace/pinned.js';
import { requireTask } from '../workspace/tasks.js';
import { conflictFiles } from './compute.js';
import { taskConflicts } from './operations.js';
import { BASE_SIDE, type ConflictFile } from './types.js';

/**
 * What the agent is told: the conflict a `sync --keep` left (`warren run ID --resolve`), and a
 * short note of the conflicts that are new since it was last told (`--tell-conflicts`). Both are
 * read from git's objects (a merge of HEAD and MERGE_HEAD), never from the workspace's files,
 * which the agent may have replaced with links.
 */

function hunkText(files: readonly ConflictFile[], ours: string, theirs: string): string[] {
  return files.flatMap((f) => [
    `### ${f.path} (${f.type})`,
    ...(f.hunks.length === 0 ? [f.message] : []),
    ...f.hunks.flatMap((h) => [
      `At line ${h.line} of the file with markers:`,
      `${ours}:`,
      '```',
      ...h.ours,
      '```',
      `${theirs}:`,
      '```',
      ...h.theirs,
      '```',
    ]),
  ]);
}

/** The prompt of `warren run ID --resolve`: the merge left in the workspace, each conflict with both sides and the base's commits there. */
export async function resolvePrompt(ctx: ProjectContext, rawId: string): Promise<string> {
  const task = requireTask(ctx, rawId);
  const wt = await pinned(ctx, task.path);
  const merging = await mergeHead(wt);
  const left = newestOf(ctx.store.taskEvents(ctx.key, task.id, 200), 'sync.conflict');
  if (merging === null)
    throw new WarrenError(
      'NOTHING_TO_SYNC',
      `task ${task.id} has no conflict to resolve (no merge in progress in its workspace); nothing was run.`,
      { hint: `Run \`warren sync ${task.id} --keep\` first: it leaves the base's conflict in the workspace.` },
    );
  const head = await headOf(wt);
  const merged = await mergeTreeDetailed(ctx.repo, head, merging);
  const files = await conflictFiles(ctx.repo, merged);
  const fork = (await mergeBase(ctx.repo, head, merging)) ?? merging;
  const commits = await commitsTouching(
    ctx.repo,
    fork,
    merging,
    files.map((f) => f.path),
  );
  return [
    `The base (${task.base}, at ${merging.slice(0, 12)}) has been merged into this workspace and conflicts with your work in ${files.map((f) => f.path).join(', ')}.`,
    'Resolve every conflict: edit each file so that it keeps what both sides meant, and remove the conflict markers (<<<<<<<, =======, >>>>>>>). Do not commit, rebase or abort the merge: warren concludes it with `warren checkpoint` once you are done.',
    ...(left ? [] : ['(warren did not record this merge itself: it is one made in the workspace by hand.)']),
    '',
    ...(commits.length > 0
      ? [
          'The base commits that changed these files since your work left it:',
          ...commits.map((c) => `- ${c.sha.slice(0, 12)} ${c.subject}${c.task ? ` (task ${c.task})` : ''}`),
          '',
        ]
      : []),
    ...hunkText(files, 'Your side (this task)', `The base's side (${task.base})`),
  ].join('\n');
}

/**
 * The note `--tell-conflicts` adds to a prompt: the task's conflicts it was not told of yet (by
 * the other side and paths), or null when there are none new. Recorded as `conflict.told`.
 */
export async function conflictNote(ctx: ProjectContext, rawId: string): Promise<string | null> {
  const mine = await taskConflicts(ctx, rawId);
  const told = newestOf(ctx.store.taskEvents(ctx.key, mine.id, 200), 'conflict.told')?.data.others ?? [];
  const key = (w: { other: string; paths: string[] }): string => `${w.other}:${w.paths.join(',')}`;
  const fresh = mine.with.filter((w) => !told.includes(key(w)));
  if (fresh.length === 0) return null;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: mine.id,
    kind: 'conflict.told',
    message: `told the agent of ${mine.id} about ${fresh.length} new conflict(s)`,
    data: { others: mine.with.map(key) },
  });
  const lines = fresh.map((w) =>
    w.other === BASE_SIDE
      ? `- with the base, which changed ${w.paths.join(', ')} since this task began: \`warren sync ${mine.id}\` brings it in`
      : `- with task ${w.other}, which is also changing ${w.paths.join(', ')}`,
  );
  return [
    'Note from warren: your work (uncommitted included) no longer merges cleanly with:',
    ...lines,
    "Keep your changes to those files small and focused; the `conflicts` tool shows both sides' hunks.",
  ].join('\n');
}
