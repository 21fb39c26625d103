import { lstatSync, readFileSync, realpathSync } from 'node:fs';
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

const OPEN_ARGS = ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository', '--show-toplevel', '--git-path', 'hooks', '--symbolic-full-name', 'HEAD'];

const prefetched = new Map<string, Promise<Repository>>();

/**
 * Starts finding the repository of `dir` before anything asks for it: the command line does so
 * first thing, so git runs while the rest of warren's code loads (src/cli/prefetch.ts). The
 * first `resolveRepository` of the same `dir` takes the answer; any later one asks git again.
 * Nothing is changed by the call, so an answer nobody takes costs nothing. Resolves with the
 * repository, or null where finding it failed (that refusal surfaces when it is taken).
 */
export function prefetchRepository(dir: string): Promise<Repository | null> {
  const opened = openRepository(dir);
  prefetched.set(dir, opened);
  return opened.catch(() => null);
}

/**
 * The branch checked out in the main worktree, guessed from the files before git is asked: the
 * nearest `.git` above `dir`, when it is a folder (the main worktree's), and its `HEAD` naming a
 * branch. A guess, never an answer: the command line uses it only to start a read early
 * (src/cli/prefetch.ts), and that read is used only when git's own answer names the same
 * branch. Anything else (a linked worktree, a detached HEAD, files it cannot read) gives none.
 */
export function guessMainBranch(dir: string): string | null {
  try {
    for (let at = path.resolve(dir); ; at = path.dirname(at)) {
      const dotGit = path.join(at, '.git');
      const stat = lstatSync(dotGit, { throwIfNoEntry: false });
      if (stat !== undefined) {
        if (!stat.isDirectory()) return null;
        return /^ref: refs\/heads\/(\S+)\n?$/.exec(readFileSync(path.join(dotGit, 'HEAD'), 'utf8'))?.[1] ?? null;
      }
      if (path.dirname(at) === at) return null;
    }
  } catch {
    return null;
  }
}

/**
 * Finds the repository from any folder inside it, in one git call: every command pays for it.
 * Where that call cannot answer everything (a bare repository, an unborn HEAD, a folder inside
 * `.git`), a minimal call gives the exact answer or error.
 */
export function resolveRepository(dir: string): Promise<Repository> {
  const started = prefetched.get(dir);
  prefetched.delete(dir);
  return started ?? openRepository(dir);
}

async function openRepository(dir: string): Promise<Repository> {
  const full = await git(OPEN_ARGS, { cwd: dir, allowFailure: true });
  const lines = splitLines(full.stdout);
  if (full.exitCode === 0 && lines.length === 5 && lines[1] === 'false') {
    const [commonDirRaw, , toplevel, hooksDir, head] = lines as [string, string, string, string, string];
    const commonDir = realpathSync(commonDirRaw);
    const root = path.dirname(commonDir);
    const inMain = realpathSync(toplevel) === root;
    return { root, commonDir, ...(inMain ? { main: { head: head === 'HEAD' ? null : head, hooksDir } } : {}) };
  }
  const result = await git(['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository'], { cwd: dir, allowFailure: true });
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

