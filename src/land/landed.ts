import { git } from '../git/exec.js';
import { splitZ } from '../git/parse.js';
import { revParse } from '../git/repo.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { compilePolicy } from './protected.js';
import { touchedPaths } from './squash.js';

/**
 * Is the task's work on its base? A squash-landed branch is never an ancestor of the base, so
 * the answer compares trees: every path the task touched (bar the protected ones, which never
 * land) must have the same content on the base tip as on the task tip. Work committed after
 * the land, or reverted on the base since, makes the answer false: `rm --delete-branch` then
 * refuses as for any unlanded branch.
 */
export async function isTaskLanded(ctx: ProjectContext, task: Task): Promise<boolean> {
  const landed = task.data['landed'];
  if (typeof landed !== 'object' || landed === null) return false;
  const recordedExcluded = (landed as { excluded?: unknown }).excluded;
  const excluded = new Set(Array.isArray(recordedExcluded) ? recordedExcluded.filter((p): p is string => typeof p === 'string') : []);
  let protectedNow: (p: string) => boolean;
  try {
    protectedNow = compilePolicy(ctx.config.protected, 'warren.yaml').matches;
  } catch {
    return false; // cannot tell what was meant to stay out: do not claim it landed
  }
  const taskTip = await revParse(ctx.repo, `refs/heads/${task.branch}`);
  const baseTip = await revParse(ctx.repo, `refs/heads/${task.base}`);
  if (!taskTip || !baseTip) return false;
  const mb = await git(['merge-base', baseTip, taskTip], { cwd: ctx.repo.root, allowFailure: true });
  if (mb.exitCode !== 0) return false;
  const work = (await touchedPaths(ctx.repo, mb.stdout.trim(), taskTip)).map((t) => t.path).filter((p) => !excluded.has(p) && !protectedNow(p));
  if (work.length === 0) return true;
  const differing = new Set(splitZ((await git(['diff', '--name-only', '-z', '--no-renames', baseTip, taskTip, '--'], { cwd: ctx.repo.root })).stdout));
  return work.every((p) => !differing.has(p));
}
