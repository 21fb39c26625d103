import path from 'node:path';
import { loadUserConfig } from '../config/load.js';
import { WarrenError } from '../errors.js';
import { launchDetached } from '../system/spawn.js';
import type { ProjectContext } from './context.js';
import { requireTask } from './tasks.js';

/**
 * "Open in editor": the command of `editor:` in `$WARREN_HOME/config.yaml` (the user's own
 * settings, never the repository's), run on this machine with the workspace's path as its last
 * argument. The page also offers vscode:// and cursor:// links, which need no setting.
 */

/** The configured editor command, or null; an invalid config.yaml is the caller's to show. */
export async function editorCommand(home: string): Promise<string[] | null> {
  return (await loadUserConfig(home, path.join(home, 'cache', 'config'))).editor ?? null;
}

export async function openInEditor(
  ctx: ProjectContext,
  id: string,
): Promise<{ id: string; path: string; editor: string[]; pid: number }> {
  const task = requireTask(ctx, id);
  const editor = await editorCommand(ctx.store.home);
  if (!editor)
    throw new WarrenError(
      'USAGE',
      `no editor is set for the dashboard to open ${task.path} with; nothing was opened.`,
      {
        hint: `Add \`editor: [code]\` (a command; the workspace's path is added) to ${path.join(ctx.store.home, 'config.yaml')}, or use the VS Code and Cursor links.`,
      },
    );
  const argv = [...editor, task.path];
  try {
    return { id: task.id, path: task.path, editor, pid: await launchDetached(argv, { cwd: task.path }) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new WarrenError(
      'USAGE',
      `could not start the editor ${JSON.stringify(editor[0])} (${code}); nothing was opened.`,
      {
        hint: `Check \`editor:\` in ${path.join(ctx.store.home, 'config.yaml')}: its first word must be a program on the server's PATH, or an absolute path.`,
      },
    );
  }
}
