import { configValue, gitPaths } from '../git/config.js';
import { pinWorktree, type Worktree } from '../git/worktree.js';
import type { ProjectContext } from './context.js';

/**
 * A task's workspace as warren made it, for the git calls warren makes there on the user's
 * behalf (src/git/worktree.ts): refused (WORKSPACE_TAMPERED) when what git would follow from it
 * is not what warren made. Commits there run the main checkout's hooks.
 */
export async function pinned(ctx: ProjectContext, wsPath: string): Promise<Worktree> {
  return pinWorktree(ctx.repo.commonDir, await mainHooksDir(ctx), wsPath);
}

/** The main checkout's hooks directory, as git resolves it there (read when the repository was opened, when it could be). */
export async function mainHooksDir(ctx: ProjectContext): Promise<string> {
  if (ctx.repo.main) return ctx.repo.main.hooksDir;
  const { paths } = await gitPaths(ctx.repo.root, ['hooks']);
  return paths[0] ?? `${ctx.repo.commonDir}/hooks`;
}

/** core.hooksPath as the repository configures it (read in the main checkout; null when unset). */
export function configuredHooksPath(ctx: ProjectContext): Promise<string | null> {
  return configValue(ctx.repo.root, 'core.hooksPath');
}
