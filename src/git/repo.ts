import { realpathSync } from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { git } from './exec.js';
import { splitLines } from './parse.js';

/** A repository as warren sees it: the main worktree and the common git directory. */
export interface Repository {
  /** Canonical path of the main worktree (where `.git` is a directory). */
  root: string;
  /** Canonical path of the common git directory (objects, refs, config, hooks). */
  commonDir: string;
  /**
   * The main worktree's HEAD and hooks directory, read by the same git call that found the
   * repository — present only when that call ran in the main worktree and HEAD has a commit.
   * A snapshot from opening: callers that need them later in a long command read them again.
   */
  main?: MainWorktreeFacts;
}

export interface MainWorktreeFacts {
  /** The checked-out branch's full ref (`refs/heads/main`), or null when HEAD is detached. */
  head: string | null;
  /** `git rev-parse --git-path hooks`: core.hooksPath when set, else `<commonDir>/hooks`. */
  hooksDir: string;
}

const OPEN_ARGS = [
  'rev-parse',
  '--path-format=absolute',
  '--git-common-dir',
  '--is-bare-repository',
  '--show-toplevel',
  '--git-path',
  'hooks',
  '--symbolic-full-name',
  'HEAD',
];

/**
 * Finds the repository from any folder inside it, in one git call: every command pays for it.
 * Where that call cannot answer everything (a bare repository, an unborn HEAD, a folder inside
 * `.git`), a minimal call gives the exact answer or error.
 */
export async function resolveRepository(dir: string): Promise<Repository> {
  const full = await git(OPEN_ARGS, { cwd: dir, allowFailure: true });
  const lines = splitLines(full.stdout);
  if (full.exitCode === 0 && lines.length === 5 && lines[1] === 'false') {
    const [commonDirRaw, , toplevel, hooksDir, head] = lines as [string, string, string, string, string];
    const commonDir = realpathSync(commonDirRaw);
    const root = path.dirname(commonDir);
    const inMain = realpathSync(toplevel) === root;
    return { root, commonDir, ...(inMain ? { main: { head: head === 'HEAD' ? null : head, hooksDir } } : {}) };
  }
  const result = await git(['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository'], {
    cwd: dir,
    allowFailure: true,
  });
  if (result.exitCode !== 0) {
    throw new WarrenError('NOT_A_REPO', `${dir} is not inside a git repository; nothing was changed.`, {
      hint: 'Run warren inside a repository, or pass --repo DIR.',
    });
  }
  const [commonDirRaw, bare] = splitLines(result.stdout);
  if (!commonDirRaw || bare === 'true') {
    throw new WarrenError('NOT_A_REPO', `${dir} is a bare repository; warren needs a main worktree.`, {
      hint: 'Run warren in a normal clone.',
    });
  }
  const commonDir = realpathSync(commonDirRaw);
  // The main worktree is the parent of the common .git directory.
  return { root: path.dirname(commonDir), commonDir };
}
