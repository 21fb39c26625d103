import fs from 'node:fs';
import { revParse } from '../git/refs.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';
import type { Task } from '../state/types.js';
import { forgetWorkspace } from './ledger.js';
import { intentSteps, type RecoverFn } from './intents.js';
import { deleteBranch } from './remove.js';

/**
 * An `rm` (or `rm --discard`) whose warren died. Before git removed the worktree the workspace is whole: the task
 * goes back to the state it was in (its layers are mounted again on next use), and `rm` can run
 * again. After, the removal is finished: what is left on disk, the branch when asked, the
 * features' leftovers, the record.
 */
export const recoverRm: RecoverFn = async (ctx, intent) => {
  const d = intent.data as {
    id: string;
    path: string;
    branch: string;
    deleteBranch: boolean;
    prevState: Task['state'];
    unlanded: number;
    archive?: string;
  };
  const steps = intentSteps(intent.op, ctx.lifecycle);
  const reached = steps.indexOf(intent.step);
  const task = ctx.store.getTask(ctx.key, d.id);
  if (intent.step === 'begun' || !task)
    return { outcome: 'nothing-to-do', message: task ? 'it had changed nothing' : `task ${d.id} is gone already` };
  if (reached < steps.indexOf('worktree-removed')) {
    if (task.state === 'removing') ctx.store.transition(ctx.key, d.id, 'removing', d.prevState);
    return {
      outcome: 'rolled-back',
      message: `the workspace ${d.path} was still whole; task ${d.id} is ${d.prevState} again, and \`warren rm ${d.id}\` can run again`,
    };
  }
  if (mountsUnder(readMounts(), d.path).length > 0)
    return { outcome: 'failed', message: `${d.path} has a mount inside; unmount it and run \`warren gc\`` };
  if (fs.existsSync(d.path)) {
    const failures = removeTree(d.path);
    if (fs.existsSync(d.path))
      return {
        outcome: 'failed',
        message: `could not delete what git left in ${d.path}: ${failures[0]?.path} (${likelyCause(failures[0]?.code ?? '')})`,
      };
  }
  let branchDeleted = false;
  if (
    d.deleteBranch &&
    reached < steps.indexOf('branch-deleted') &&
    (await revParse(ctx.repo, `refs/heads/${d.branch}`))
  ) {
    await deleteBranch(ctx, task);
    branchDeleted = true;
  }
  if (reached < steps.indexOf('after-remove'))
    for (const step of ctx.lifecycle.remove) await step.afterRemove?.(ctx, task);
  forgetWorkspace(ctx, d.path);
  ctx.store.deleteTask(ctx.key, d.id);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: d.id,
    kind: 'task.removed',
    message: `removed ${d.path} (finished after an interrupted ${intent.op === 'discard' ? 'rm --discard' : 'rm'})${branchDeleted || d.deleteBranch ? `; deleted branch ${d.branch}` : `; kept branch ${d.branch}`}${d.archive ? `; everything is saved in ${d.archive}` : ''}`,
    data: { branchDeleted: branchDeleted || d.deleteBranch, unlandedCommits: d.unlanded },
  });
  return { outcome: 'rolled-forward', message: `git had removed the worktree; warren finished removing task ${d.id}` };
};
