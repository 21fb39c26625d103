import { isAncestor, mergeBase } from '../git/history.js';
import { revParse, revParseMany } from '../git/refs.js';
import { changedNames, touchedPaths } from '../git/trees.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { compilePolicy } from '../config/protected.js';

/**
 * Is the task's work on its base? A squash-landed branch is never an ancestor of the base, so
 * the answer compares trees. Landed when the task branch holds no work beyond what was landed
 * (its tree differs from the tree at landing only in protected paths, which never land) AND
 * either the squash commit is in the base's history, or every path the task touched has the
 * task's content on the base tip. Work committed after the land makes the answer false, and
 * `rm --delete-branch` then refuses as for any unlanded branch.
 */
export async function isTaskLanded(ctx: ProjectContext, task: Task): Promise<boolean> {
  const record = task.data.landed;
  if (!record) return false;
  const excluded = new Set(record.excluded);
  let isProtected: (p: string) => boolean;
  try {
    const policy = compilePolicy(ctx.config.protected, 'warren.yaml');
    isProtected = (p) => excluded.has(p) || policy.matches(p);
  } catch {
    return false; // cannot tell what was meant to stay out: do not claim it landed
  }
  const [taskTip, baseTip, landedTaskCommit] = await revParseMany(ctx.repo, [
    `refs/heads/${task.branch}`,
    `refs/heads/${task.base}`,
    record.taskCommit,
  ]);
  if (!taskTip || !baseTip || !landedTaskCommit) return false;

  const since = await touchedPaths(ctx.repo, landedTaskCommit, taskTip);
  if (since.some((t) => !isProtected(t.path))) return false;
  if ((await revParse(ctx.repo, record.commit)) && (await isAncestor(ctx.repo, record.commit, baseTip))) return true;

  // The squash left the base's history (rewritten, or landed by other means): compare content.
  const mb = await mergeBase(ctx.repo, baseTip, taskTip);
  if (mb === null) return false;
  const work = (await touchedPaths(ctx.repo, mb, taskTip)).map((t) => t.path).filter((p) => !isProtected(p));
  if (work.length === 0) return true;
  const differing = new Set(await changedNames(ctx.repo, baseTip, taskTip));
  return work.every((p) => !differing.has(p));
}
