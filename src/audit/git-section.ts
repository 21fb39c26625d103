import { configValue, gitPaths } from '../git/config.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { isInside } from '../workspace/paths.js';
import type { AuditSection } from '../workspace/types.js';
import { pinned } from '../workspace/pinned.js';

/** The git paths whose owner matters: a worktree has its own HEAD and index; objects, refs, config and hooks are shared. */
export const GIT_PATHS = [
  'HEAD',
  'index',
  'logs/HEAD',
  'refs',
  'packed-refs',
  'objects',
  'config',
  'config.worktree',
  'hooks',
  'info/exclude',
  'FETCH_HEAD',
  'ORIG_HEAD',
] as const;

export interface GitPathFact {
  name: string;
  path: string;
  scope: 'own' | 'shared';
  note?: string;
}

export async function gitPathFacts(
  ctx: ProjectContext,
  task: Task,
): Promise<{ gitDir: string; commonDir: string; paths: GitPathFact[] }> {
  const wt = await pinned(ctx, task.path);
  const { gitDir, commonDir, paths: resolved } = await gitPaths(wt, GIT_PATHS);
  const worktreeConfig = await configValue(wt, 'extensions.worktreeConfig', { bool: true });
  const paths = GIT_PATHS.map((name, i): GitPathFact => {
    const p = resolved[i] ?? '';
    // Own: in this worktree's private git dir, or (a relative core.hooksPath) inside the workspace itself.
    const own = isInside(gitDir, p) || isInside(task.path, p);
    const fact: GitPathFact = { name, path: p, scope: own ? 'own' : 'shared' };
    if (name === 'config.worktree' && worktreeConfig !== 'true')
      fact.note = 'not read: extensions.worktreeConfig is off, so every setting goes to the shared config';
    return fact;
  });
  return { gitDir, commonDir, paths };
}

export const gitSection: AuditSection = {
  name: 'git',
  async collect(ctx: ProjectContext, task: Task) {
    const facts = await gitPathFacts(ctx, task);
    const width = Math.max(...facts.paths.map((p) => p.name.length));
    const lines = [
      `private git dir: ${facts.gitDir}`,
      `common git dir:  ${facts.commonDir} (shared by every worktree of the repository)`,
      ...facts.paths.map(
        (p) =>
          `${p.scope === 'own' ? 'own   ' : 'shared'}  ${p.name.padEnd(width)}  ${p.path}${p.note ? ` (${p.note})` : ''}`,
      ),
    ];
    return { data: facts, lines };
  },
};
