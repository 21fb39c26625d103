import { git, gitError } from './exec.js';
import type { Where } from './exec.js';
import { parseStatusZ, splitZ, type StatusEntry } from './parse.js';

/** What a worktree holds besides its commits: changes, untracked and ignored files. */

export async function statusOf(worktree: Where): Promise<StatusEntry[]> {
  const result = await git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none'], {
    cwd: worktree,
    env: { GIT_OPTIONAL_LOCKS: '0' },
  });
  return parseStatusZ(result.stdout);
}

/** `git check-ignore` for many paths at once: the subset git ignores in `cwd` (tracked paths never are). */
export async function checkIgnored(cwd: Where, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const result = await git(['check-ignore', '-z', '--stdin'], {
    cwd,
    input: paths.map((p) => `${p}\0`).join(''),
    allowFailure: true,
  });
  // Exit 1 means none is ignored; anything above 1 is an error.
  if (result.exitCode > 1) throw gitError(result);
  return new Set(splitZ(result.stdout));
}

/**
 * Untracked files of a checkout, one entry per file (git never lists `.git`; a nested
 * repository or linked worktree is one entry ending in `/`, never entered):
 * - `ignored`: those `.gitignore`, info/exclude and core.excludesFile ignore;
 * - `matching`: those the patterns in `patternFile` match (gitignore syntax, from the top);
 * - `unignored`: those git does not ignore (it does not enter ignored folders).
 */
export async function listUntracked(
  cwd: Where,
  which: { ignored: true } | { matching: string } | { unignored: true },
): Promise<string[]> {
  const select =
    'ignored' in which
      ? ['--ignored', '--exclude-standard']
      : 'matching' in which
        ? ['--ignored', `--exclude-from=${which.matching}`]
        : ['--exclude-standard'];
  const result = await git(['ls-files', '-z', '--others', ...select], { cwd });
  return splitZ(result.stdout);
}

/** Every tracked path (from the index, no walk of the files). */
export async function listTracked(cwd: Where): Promise<string[]> {
  const result = await git(['ls-files', '-z', '--cached'], { cwd });
  return [...new Set(splitZ(result.stdout))];
}

/** Which of `paths` git tracks, or tracks files inside (literal paths, never globs). */
export async function trackedAmong(cwd: Where, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const result = await git(['ls-files', '-z', '--cached', '--', ...paths], {
    cwd,
    env: { GIT_LITERAL_PATHSPECS: '1' },
  });
  const found = new Set<string>();
  for (const file of splitZ(result.stdout)) {
    for (const p of paths) if (file === p || file.startsWith(`${p}/`)) found.add(p);
  }
  return found;
}

/** Tracked files and untracked ones git does not ignore. */
export async function listFiles(cwd: Where): Promise<string[]> {
  const result = await git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd });
  return [...new Set(splitZ(result.stdout))];
}

/** Does git track anything at or below `rel` (relative to `cwd`)? `rel` is taken literally, never as pathspec magic. */
export async function tracksAnything(cwd: Where, rel: string): Promise<boolean> {
  const result = await git(['ls-files', '-z', '--cached', '--', rel], { cwd, env: { GIT_LITERAL_PATHSPECS: '1' } });
  return result.stdout.length > 0;
}
