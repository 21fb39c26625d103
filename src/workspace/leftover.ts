import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import type { Task } from '../state/types.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from './context.js';
import { madeByWarren } from './ledger.js';

/**
 * git deregistered the worktree but files stayed. The worktree was proven clean before git
 * removed it, so deleting what remains loses nothing: try (by lstat, never through a link or
 * a mount, and only a directory warren's ledger says it made), and if anything still will not
 * go, name it, keep the row as remove_failed and let `scan` find it.
 */
export function clearLeftover(ctx: ProjectContext, task: Task, gitStderr: string): void {
  const owned = madeByWarren(ctx, task.path, [task]);
  const failures = owned ? removeTree(task.path) : [];
  if (!fs.existsSync(task.path)) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'task.leftover_removed',
      level: 'warn',
      message: `git left files in ${task.path} after removing the worktree; warren deleted them`,
      data: { gitStderr },
    });
    return;
  }
  if (ctx.store.getTask(ctx.key, task.id)?.state !== 'remove_failed') {
    ctx.store.transition(ctx.key, task.id, 'removing', 'remove_failed');
  }
  const first = failures[0];
  const cause = !owned
    ? 'the directory itself (warren has no record of making it, and deletes only what it made)'
    : first
      ? `${first.path} (${likelyCause(first.code)})`
      : 'unknown files';
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'task.remove_failed',
    level: 'error',
    message: `git deregistered ${task.path} but the directory is still on disk: ${cause}`,
    data: { path: task.path, failures, gitStderr },
  });
  throw new WarrenError(
    'REMOVE_INCOMPLETE',
    `git deregistered the worktree but ${task.path} is still on disk: could not delete ${cause}. The task is kept in state remove_failed; its branch ${task.branch} is untouched and no committed work was lost.`,
    {
      hint: `Fix the cause (e.g. chattr -i FILE, or delete as the owning user), then run \`warren rm ${task.id}\` again or \`warren gc\`.`,
      details: { path: task.path, failures },
    },
  );
}
