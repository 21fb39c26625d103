import fs from 'node:fs';
import path from 'node:path';
import { isAncestor } from '../../git/history.js';
import { fetchUntrusted, untrustedBranchTip } from '../../git/quarantine.js';
import { commitAt, compareAndSwapRef, deleteRefAt, revParse } from '../../git/refs.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import { gitOverlayOf } from './task-container.js';

/**
 * Commits an agent makes inside its container. The repository's common git directory is an
 * overlay there (task-container.ts): git writes objects and refs into the task's own upper
 * folder, `$WARREN_HOME/containers/<id>/git/upper`, and the host repository is untouched. After
 * each run warren takes the branch's new tip from that folder — its objects through a
 * quarantine, every one checked (src/git/quarantine.ts) — and moves the task's branch to it when
 * it descends from where the branch is; otherwise it keeps it at `refs/warren/container/<id>`
 * and says so. Nothing the agent committed is lost either way; land's own checks (protected
 * paths, the gate) then apply to these commits as to any.
 */

/** Where the agent's commits are kept when they cannot move the branch. */
export const keptRef = (taskId: string): string => `refs/warren/container/${taskId}`;

export type Taken =
  | { kind: 'none' }
  | { kind: 'moved'; from: string | null; to: string }
  | { kind: 'kept'; ref: string; tip: string; why: string }
  | { kind: 'refused'; why: string };

/** Brings what the agent committed in the task's container onto its branch (see above). */
export async function takeContainerCommits(ctx: ProjectContext, task: Task): Promise<Taken> {
  // Only a task's own branch, as recorded: a gate's integration workspace (detached, no row) has none to move.
  if (ctx.store.getTask(ctx.key, task.id)?.branch !== task.branch) return { kind: 'none' };
  const { upper } = gitOverlayOf(ctx.store.home, ctx.key, task.id);
  if (!fs.existsSync(upper)) return { kind: 'none' };
  const tip = untrustedBranchTip(upper, task.branch);
  if (tip === null) return { kind: 'none' };
  const branchRef = `refs/heads/${task.branch}`;
  const host = await revParse(ctx.repo, branchRef);
  if (tip === host) return { kind: 'none' };
  if ((await commitAt(ctx.repo.root, tip)) === null) {
    const scratch = path.join(path.dirname(upper), 'import');
    fs.mkdirSync(scratch, { recursive: true, mode: 0o700 });
    const fetched = await fetchUntrusted(ctx.repo, path.join(upper, 'objects'), tip, keptRef(task.id), scratch);
    if (!fetched.ok) return said(ctx, task, { kind: 'refused', why: fetched.why });
  }
  // The container's view is behind the branch (warren committed on the host since): nothing new.
  if (host !== null && (await isAncestor(ctx.repo, tip, host))) return { kind: 'none' };
  if (host === null || (await isAncestor(ctx.repo, host, tip))) {
    if (
      await compareAndSwapRef(
        ctx.repo,
        branchRef,
        tip,
        host ?? '0'.repeat(40),
        `warren: the agent's commits in its container`,
      )
    ) {
      const kept = await revParse(ctx.repo, keptRef(task.id));
      if (kept !== null) await deleteRefAt(ctx.repo, keptRef(task.id), kept);
      return said(ctx, task, { kind: 'moved', from: host, to: tip });
    }
    return said(ctx, task, await keep(ctx, task, tip, `${task.branch} moved while they were brought in`));
  }
  return said(
    ctx,
    task,
    await keep(
      ctx,
      task,
      tip,
      `they do not descend from ${task.branch}'s tip ${host.slice(0, 12)} (it moved on the host meanwhile)`,
    ),
  );
}

async function keep(ctx: ProjectContext, task: Task, tip: string, why: string): Promise<Taken> {
  const ref = keptRef(task.id);
  const at = await revParse(ctx.repo, ref);
  if (at !== tip) await compareAndSwapRef(ctx.repo, ref, tip, at ?? '0'.repeat(40), 'warren: kept from its container');
  return { kind: 'kept', ref, tip, why };
}

function said(ctx: ProjectContext, task: Task, taken: Taken): Taken {
  if (taken.kind === 'moved') {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'sandbox.container_commits',
      message: `took the commit(s) the agent made in task ${task.id}'s container: ${task.branch} ${taken.from?.slice(0, 12) ?? '(new)'} → ${taken.to.slice(0, 12)}`,
      data: { from: taken.from, to: taken.to },
    });
  } else if (taken.kind === 'kept') {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'sandbox.container_commits_kept',
      level: 'warn',
      message: `the agent's commits in task ${task.id}'s container were not put on ${task.branch}: ${taken.why}. They are kept at ${taken.ref} (${taken.tip.slice(0, 12)}); nothing was lost — \`git cherry-pick ${task.branch}..${taken.ref}\` in the workspace takes them.`,
      data: { ref: taken.ref, tip: taken.tip, why: taken.why },
    });
  } else if (taken.kind === 'refused') {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'sandbox.container_commits_refused',
      level: 'warn',
      message: `the agent's commits in task ${task.id}'s container were not taken: ${taken.why}. The branch is unchanged; its files are in the workspace as the agent left them.`,
      data: { why: taken.why },
    });
  }
  return taken;
}

/** Before a run in the task's container: what is left to take, taken; then the branch and its commit on the host. */
export async function containerBranch(ctx: ProjectContext, task: Task): Promise<ContainerBranch | null> {
  await takeContainerCommits(ctx, task);
  const ref = `refs/heads/${task.branch}`;
  const commit = await revParse(ctx.repo, ref);
  return commit === null ? null : { ref, commit, commonDir: ctx.repo.commonDir };
}

/** The task's branch, its commit on the host, and the common git directory (the overlay's place in the container). */
export interface ContainerBranch {
  ref: string;
  commit: string;
  commonDir: string;
}

/** Taking them failed outright (git itself): said, and the run's own result stands; the commits stay in the upper folder for the next try. */
export function containerCommitsFailed(ctx: ProjectContext, task: Task, err: unknown): void {
  said(ctx, task, {
    kind: 'refused',
    why: `${err instanceof Error ? err.message : String(err)} (they stay in the container and are tried again after its next command)`,
  });
}
