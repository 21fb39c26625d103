import { checkIgnored } from '../git/status.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { pinned } from './pinned.js';

/**
 * warren's own paths inside a workspace (provisioned dependencies, `.env` copies, `share`
 * symlinks): never staged, never reported as the task's work. The provisioning feature records
 * them in `task.data.provision` (absent on tasks made without it); united with warren.yaml's
 * `provision:` so a missing record never lets a `share` symlink be committed as a blob.
 */
export function provisionedPaths(ctx: ProjectContext, task: Task): string[] {
  const paths = new Set<string>();
  for (const entry of task.data.provision ?? []) paths.add(normalize(entry.path));
  for (const entry of ctx.config.provision) paths.add(normalize(entry.path));
  paths.delete('');
  return [...paths].sort();
}

function normalize(p: string): string {
  return p.replace(/^\.\/+/, '').replace(/\/+$/, '');
}

/** True when `file` is a provisioned path or inside one. */
export function isProvisioned(file: string, provisioned: readonly string[]): boolean {
  return provisioned.some((p) => file === p || file.startsWith(`${p}/`));
}

/** Pathspecs that keep provisioned paths out of `git add` (literal: a path is never a glob). */
export function excludePathspecs(provisioned: readonly string[]): string[] {
  return provisioned.map((p) => `:(exclude,literal)${p}`);
}

/**
 * The pathspecs that keep provisioned paths out of a `git add -A` in the workspace. Only paths
 * git does not ignore need one (e.g. a `share` symlink under a `dir/` pattern): naming an
 * ignored path makes `git add` fail ("paths are ignored") after it has staged the rest.
 */
export async function provisionedExcludes(ctx: ProjectContext, task: Task): Promise<string[]> {
  const provisioned = provisionedPaths(ctx, task);
  const ignored = await checkIgnored(await pinned(ctx, task.path), provisioned);
  return excludePathspecs(provisioned.filter((p) => !ignored.has(p)));
}
