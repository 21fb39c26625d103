import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { lexists } from '../util/lexists.js';
import { isInside, isStrictlyInside } from '../util/paths.js';

/**
 * Where a repository's workspaces go. Threat: a committed warren.yaml is the word of whoever
 * wrote the repository, not of the user running warren. A `worktree_root: /etc` (or `..`, or
 * `.git`, or a symlink inside the repository that points out) made warren create workspaces
 * there, and `gc` then took the folder's entries for strays. So a root outside the repository
 * comes only from the user — the environment or `$WARREN_HOME/config.yaml` — and a
 * repository's own choice must resolve, through every symlink, inside the repository (not
 * its root, not `.git`) or under WARREN_HOME.
 */

export const WORKTREE_ROOT_ENV = 'WARREN_WORKTREE_ROOT';

export interface RootSources {
  repoRoot: string;
  commonDir: string;
  /** WARREN_HOME, as the store opened it. */
  home: string;
  /** The project key: a user-chosen root holds every repository, one folder each. */
  key: string;
  /** `worktree_root` from the repository's warren.yaml. */
  fromRepository: string | undefined;
  /** The user's choice and where it came from (the environment or the user config). */
  fromUser: { value: string; source: string } | null;
}

/** The root to use: the user's over the repository's over the default. Creates nothing. */
export function resolveWorktreeRoot(s: RootSources): string {
  if (s.fromUser) {
    if (!path.isAbsolute(s.fromUser.value)) {
      throw new WarrenError(
        'CONFIG_INVALID',
        `${s.fromUser.source}: worktree_root ${JSON.stringify(s.fromUser.value)} is not an absolute path. Nothing was changed.`,
        {
          hint: 'Give an absolute folder, e.g. /data/worktrees; each repository gets its own folder inside it.',
        },
      );
    }
    return canonicalRoot(path.join(s.fromUser.value, s.key));
  }
  if (s.fromRepository === undefined) return canonicalRoot(path.join(s.home, 'worktrees', s.key));
  const configured = path.resolve(s.repoRoot, s.fromRepository);
  const real = resolveExisting(configured);
  const realHome = resolveExisting(s.home) ?? s.home;
  if (real === null || !repositoryMayUse(real, s.repoRoot, s.commonDir, realHome)) {
    throw new WarrenError(
      'CONFIG_INVALID',
      `warren.yaml: worktree_root ${JSON.stringify(s.fromRepository)} ${real === null ? 'cannot be resolved (a dangling or looping symlink, or a file on the way)' : `resolves to ${real}`}, which is not a folder inside the repository (its root and .git excluded) or under WARREN_HOME (${realHome}). A repository may not place files anywhere else. Nothing was changed.`,
      {
        hint: `To keep workspaces elsewhere, choose it yourself: set ${WORKTREE_ROOT_ENV} or worktree_root in ${path.join(s.home, 'config.yaml')} (\`warren help configuration\`).`,
        details: { key: 'worktree_root', value: s.fromRepository, resolved: real ?? configured },
      },
    );
  }
  return canonicalRoot(configured);
}

/** Pure: may a repository's warren.yaml put its workspaces at `real` (fully resolved)? */
export function repositoryMayUse(real: string, repoRoot: string, commonDir: string, realHome: string): boolean {
  const inRepository =
    isStrictlyInside(repoRoot, real) && !isInside(commonDir, real) && !isInside(path.join(repoRoot, '.git'), real);
  return inRepository || isStrictlyInside(realHome, real);
}

/**
 * The real path of the longest existing prefix (the last component too), with the rest
 * appended; null when a component is a link that does not resolve (dangling, or a loop).
 */
function resolveExisting(p: string): string | null {
  const rest: string[] = [];
  let existing = p;
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest);
    } catch {
      if (lexists(existing)) return null;
      const parent = path.dirname(existing);
      if (parent === existing) return p;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * Resolves the parent chain (a symlinked $HOME is fine) but not the root's own last component,
 * which `ensureRoot` and `assertContained` insist is a real directory. Creates nothing.
 */
function canonicalRoot(configured: string): string {
  let existing = path.dirname(configured);
  const rest: string[] = [path.basename(configured)];
  while (!fs.existsSync(existing)) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  return path.join(fs.realpathSync(existing), ...rest);
}
