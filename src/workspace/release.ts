import type { Task } from '../state/types.js';
import type { MountEntry } from '../system/mounts.js';
import type { ProjectContext } from './context.js';

/**
 * The features' removal steps (src/workspace/types.ts), run in order: by `rm`, by the
 * undoing of a half-made `new`, and by `gc` of a task that died while being made.
 */

/** True when a feature (e.g. cow provisioning) owns this mount inside the task's workspace. */
export function isOwnedMount(ctx: ProjectContext, task: Task, mount: MountEntry): boolean {
  return ctx.lifecycle.remove.some((s) => s.ownsMount?.(ctx, task, mount) === true);
}

/**
 * Runs every feature's `release` in order (teardown, unmount) and returns every problem they
 * met. A step that throws is a problem too: the next steps still run, so one broken teardown
 * cannot keep a layer mounted. `inside`: all but the step that holds the workspace's files (a
 * cow checkout); `workspace`: only that one; `all`: both, that one last. `discarded`: `rm
 * --discard`'s archive, made.
 */
export async function releaseSteps(
  ctx: ProjectContext,
  task: Task,
  which: 'inside' | 'workspace' | 'all' = 'all',
  discarded?: { archive: string },
): Promise<string[]> {
  const problems: string[] = [];
  const steps = ctx.lifecycle.remove;
  const ordered =
    which === 'all'
      ? [...steps.filter((s) => !s.holdsWorkspace), ...steps.filter((s) => s.holdsWorkspace)]
      : steps.filter((s) => (which === 'workspace') === (s.holdsWorkspace === true));
  for (const step of ordered) {
    if (!step.release) continue;
    try {
      problems.push(...(await step.release(ctx, task, discarded)));
    } catch (err) {
      problems.push(`${step.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/** What the features keep beside a workspace (ports, layers, manifests, comments) goes with it. */
export async function afterRemoveSteps(ctx: ProjectContext, task: Task): Promise<void> {
  for (const step of ctx.lifecycle.remove) await step.afterRemove?.(ctx, task);
}

/** True when a feature says the task's work is on its base although not by ancestry (squash-landed). */
export async function isWorkLanded(ctx: ProjectContext, task: Task): Promise<boolean> {
  for (const step of ctx.lifecycle.remove) if (step.isLanded && (await step.isLanded(ctx, task))) return true;
  return false;
}
