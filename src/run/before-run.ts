import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { RunMount } from './run-mounts.js';

/**
 * Steps other features need before any command runs in a workspace — e.g. mounting a
 * copy-on-write layer again after a reboot. Registered from src/features.ts; run after every
 * guard passed and before anything is spawned. A hook may return mounts that exist only in the
 * run's own namespace (a cow layer provisioned without root); the run makes them before its
 * command starts.
 */
export type BeforeRunHook = (ctx: ProjectContext, task: Task) => Promise<readonly RunMount[] | void>;

const hooks: BeforeRunHook[] = [];

export function addBeforeRunHook(hook: BeforeRunHook): void {
  hooks.push(hook);
}

/** Runs every hook in order; the mounts they ask for, in the same order. */
export async function runBeforeRunHooks(ctx: ProjectContext, task: Task): Promise<RunMount[]> {
  const mounts: RunMount[] = [];
  for (const hook of hooks) mounts.push(...((await hook(ctx, task)) ?? []));
  return mounts;
}
