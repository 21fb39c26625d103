import { git, type Where } from './exec.js';
import { splitLines } from './parse.js';

/** git's configuration and the paths it resolves, as seen from one worktree. */

/** A config value, or null when unset. `bool` normalises yes/on/1 to `true`. */
export async function configValue(cwd: Where, key: string, options: { bool?: boolean } = {}): Promise<string | null> {
  const result = await git(['config', ...(options.bool ? ['--bool'] : []), '--get', '--', key], {
    cwd,
    allowFailure: true,
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * Absolute paths of `names` inside the git directory as this worktree sees them
 * (`--git-path`), plus its own git dir and the common one.
 */
export async function gitPaths(
  worktree: Where,
  names: readonly string[],
): Promise<{ gitDir: string; commonDir: string; paths: string[] }> {
  const args = [
    'rev-parse',
    '--path-format=absolute',
    '--absolute-git-dir',
    '--git-common-dir',
    ...names.flatMap((name) => ['--git-path', name]),
  ];
  const [gitDir = '', commonDir = '', ...paths] = splitLines((await git(args, { cwd: worktree })).stdout);
  return { gitDir, commonDir, paths };
}
