import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { assertContained } from '../workspace/paths.js';
import { requireTask } from '../workspace/tasks.js';
import { diffTask } from './diff.js';
import { contextAround, hunkAround, type Side } from './hunks.js';
import { checkInsideWorkspace, readWorkspaceFile } from './workspace-file.js';

/**
 * Review comments (migration 005-comments): a line of a task's diff, what the reviewer says
 * about it, and the part of the diff it was made on, kept as it was then. Open until resolved.
 * Only this file reads or writes the table.
 */

export interface Comment {
  id: number;
  taskId: string;
  path: string;
  line: number;
  side: Side;
  body: string;
  /** The lines of the diff around it when it was made (or the file's, for an unchanged line). */
  hunk: string;
  state: 'open' | 'resolved';
  createdAt: string;
  resolvedAt: string | null;
  /** The agent run that last received it (`run --review`, the dashboard's Send). */
  sentRun: string | null;
}

interface Row {
  id: number;
  task_id: string;
  path: string;
  line: number;
  side: string;
  body: string;
  hunk: string;
  state: string;
  created_at: string;
  resolved_at: string | null;
  sent_run: string | null;
}

function toComment(r: Row): Comment {
  return {
    id: r.id,
    taskId: r.task_id,
    path: r.path,
    line: r.line,
    side: r.side === 'old' ? 'old' : 'new',
    body: r.body,
    hunk: r.hunk,
    state: r.state === 'resolved' ? 'resolved' : 'open',
    createdAt: r.created_at,
    resolvedAt: r.resolved_at,
    sentRun: r.sent_run,
  };
}

export interface NewComment {
  path: string;
  line: number;
  /** Default `new`: the line as the workspace has it. */
  side?: Side;
  body: string;
}

/** Pure: `FILE:LINE` (the last colon splits, so a file name may hold colons). */
export function parseFileLine(text: string): { path: string; line: number } {
  const at = text.lastIndexOf(':');
  const line = Number(text.slice(at + 1));
  const file = text.slice(0, at);
  if (at <= 0 || !Number.isInteger(line) || line < 1 || !/^\d+$/.test(text.slice(at + 1))) {
    throw new WarrenError(
      'USAGE',
      `${JSON.stringify(text)} is not FILE:LINE (a path in the workspace, a colon, a line number from 1); nothing was recorded.`,
      { hint: 'e.g. `warren comment T-1 src/app.js:12 "use a constant here"`.' },
    );
  }
  return { path: file, line };
}

/** Pure: a workspace-relative path a comment may name (no absolute path, no `..`, no NUL). */
export function checkCommentPath(file: string): string {
  const clean = file.replace(/^\.\//, '');
  if (clean === '' || clean.includes('\0') || path.isAbsolute(clean) || clean.split('/').includes('..')) {
    throw new WarrenError(
      'USAGE',
      `${JSON.stringify(file)} is not a path inside the workspace; nothing was recorded.`,
      { hint: 'Name the file as the diff does, relative to the workspace root.' },
    );
  }
  return clean;
}

/**
 * `warren comment ID FILE:LINE TEXT`: records a comment with the part of the task's diff
 * (base to workspace, uncommitted work included) around that line. A line the diff does not
 * show is commented with the file's own lines around it; a file in neither is refused, and so
 * is a path that leaves the workspace through a symlink (workspace-file.ts).
 */
export async function addComment(ctx: ProjectContext, rawId: string, input: NewComment): Promise<Comment> {
  const task = requireTask(ctx, rawId);
  const file = checkCommentPath(input.path);
  const side: Side = input.side ?? 'new';
  const body = input.body.trim();
  if (body === '') throw new WarrenError('USAGE', 'the comment is empty; nothing was recorded.');
  if (!Number.isInteger(input.line) || input.line < 1)
    throw new WarrenError('USAGE', `line ${input.line} is not a line number; nothing was recorded.`);
  assertContained(ctx.root, task.path);
  checkInsideWorkspace(task.path, file);
  const hunk = await hunkFor(ctx, task, file, input.line, side);
  const now = new Date().toISOString();
  const result = ctx.store.db
    .prepare(
      `INSERT INTO comments (project, task_id, task_created_at, path, line, side, body, hunk, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
    )
    .run(ctx.key, task.id, task.createdAt, file, input.line, side, body, hunk, now);
  return getComment(ctx, task, Number(result.lastInsertRowid));
}

async function hunkFor(ctx: ProjectContext, task: Task, file: string, line: number, side: Side): Promise<string> {
  // The diff the dashboard showed (of a task on a host, its workspace there).
  const diff = await diffTask(ctx, task.id, { byFile: true });
  const changed = diff.files.find((f) => f.path === file || (side === 'old' && f.from === file));
  const around = changed?.patch ? hunkAround(changed.patch, line, side) : null;
  if (around) return around;
  if (side === 'new') {
    const content = readWorkspaceFile(task.path, file);
    const context = content === null ? null : contextAround(content, line);
    if (context) return context;
  }
  throw new WarrenError(
    'USAGE',
    `${file}:${line}${side === 'old' ? ' (a removed line)' : ''} is not a line of task ${task.id}'s diff or of a file in its workspace; nothing was recorded.`,
    {
      hint: `See \`warren diff ${task.id}\` for the files and lines it changed.`,
    },
  );
}

function getComment(ctx: ProjectContext, task: Task, id: number): Comment {
  const row = ctx.store.db
    .prepare('SELECT * FROM comments WHERE project = ? AND task_id = ? AND task_created_at = ? AND id = ?')
    .get(ctx.key, task.id, task.createdAt, id) as Row | undefined;
  if (!row)
    throw new WarrenError('USAGE', `task ${task.id} has no comment ${id}; nothing was changed.`, {
      hint: `See \`warren comments ${task.id}\`.`,
    });
  return toComment(row);
}

/** The task's comments, oldest first (only the open ones with `open`). */
export function taskComments(
  ctx: ProjectContext,
  task: Pick<Task, 'id' | 'createdAt'>,
  options: { open?: boolean } = {},
): Comment[] {
  const rows = ctx.store.db
    .prepare(
      `SELECT * FROM comments WHERE project = ? AND task_id = ? AND task_created_at = ? ${options.open ? "AND state = 'open'" : ''} ORDER BY id`,
    )
    .all(ctx.key, task.id, task.createdAt) as Row[];
  return rows.map(toComment);
}

/** `warren comments ID`. */
export function listComments(ctx: ProjectContext, rawId: string, options: { open?: boolean } = {}): Comment[] {
  return taskComments(ctx, requireTask(ctx, rawId), options);
}

/** Marks comments resolved (or open again); every id must be the task's, or nothing changes. */
export function setCommentState(
  ctx: ProjectContext,
  rawId: string,
  ids: readonly number[],
  state: Comment['state'],
): Comment[] {
  const task = requireTask(ctx, rawId);
  const comments = ids.map((id) => getComment(ctx, task, id));
  const update = ctx.store.db.prepare('UPDATE comments SET state = ?, resolved_at = ? WHERE id = ?');
  const at = state === 'resolved' ? new Date().toISOString() : null;
  ctx.store.db.transaction(() => {
    for (const c of comments) update.run(state, at, c.id);
  })();
  return ids.map((id) => getComment(ctx, task, id));
}

/** After an agent received them: which run, and, when it finished well, resolved. */
export function markSent(ctx: ProjectContext, ids: readonly number[], runId: string, resolved: boolean): void {
  const update = ctx.store.db.prepare(
    `UPDATE comments SET sent_run = ?${resolved ? ", state = 'resolved', resolved_at = ?" : ''} WHERE id = ?`,
  );
  const at = new Date().toISOString();
  ctx.store.db.transaction(() => {
    for (const id of ids) {
      if (resolved) update.run(runId, at, id);
      else update.run(runId, id);
    }
  })();
}

/** A removed task's comments go with it. */
export function deleteComments(ctx: ProjectContext, task: Pick<Task, 'id'>): void {
  ctx.store.db.prepare('DELETE FROM comments WHERE project = ? AND task_id = ?').run(ctx.key, task.id);
}
