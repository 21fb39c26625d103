import path from 'node:path';
import { LOCKFILES } from '../provision/snapshots/snapshot.js';
import type { ProjectContext } from '../workspace/context.js';

/** The lockfiles among the paths a landed change touched. Pure. */
export function lockfilesAmong(changed: readonly string[]): string[] {
  const names = new Set<string>(LOCKFILES);
  return changed.filter((p) => names.has(path.posix.basename(p)));
}

/**
 * A landed change that touched a lockfile leaves what is installed in the checkout of the base
 * (the main checkout) stale: said as an event and a warning `land` prints. Until it is
 * reinstalled there, new workspaces get the last good snapshot and are marked stale (issue 13 §2).
 */
export function recordDepsStale(
  ctx: ProjectContext,
  taskId: string,
  commit: string,
  checkout: string | null,
  changed: readonly string[],
): string[] {
  const lockfiles = lockfilesAmong(changed);
  if (checkout === null || lockfiles.length === 0) return [];
  const message = `the landed change touched ${lockfiles.join(', ')}: the dependencies installed in ${checkout} are now stale. Reinstall there (e.g. \`npm ci\`, \`pnpm install --frozen-lockfile\`); until then new workspaces get the last good snapshot and are marked stale`;
  ctx.store.addEvent({
    project: ctx.key,
    taskId,
    kind: 'land.deps_stale',
    level: 'warn',
    message,
    data: { lockfiles, checkout, commit },
  });
  return [message];
}
