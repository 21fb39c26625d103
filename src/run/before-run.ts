import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * Steps other features need before any command runs in a workspace — e.g. mounting a
 * copy-on-write layer again after a reboot. Registered from src/features.ts; run after every
 * guard passed and before anything is spawned.
 */
export type BeforeRunHook = (ctx: ProjectContext, task: Task) => Promise<void>;

const hooks: BeforeRunHook[] = [];

export function addBeforeRunHook(hook: BeforeRunHook): void {
  hooks.push(hook);
}

export async function runBeforeRunHooks(ctx: ProjectContext, task: Task): Promise<void> {
  for (const hook of hooks) await hook(ctx, task);
}
