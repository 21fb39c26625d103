import { realpathSync } from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import { git, gitError } from './exec.js';
import { isTransientGitFailure } from './errors.js';
import { parseStatusZ, parseWorktreeList, splitLines, type StatusEntry, type WorktreeEntry } from './parse.js';

/** A repository as warren sees it: the main worktree and the common git directory. */
export interface Repository {
  /** Canonical path of the main worktree (where `.git` is a directory). */
  root: string;
  /** Canonical path of the common git directory (objects, refs, config, hooks). */
  commonDir: string;
}

export async function resolveRepository(dir: string): Promise<Repository> {
  const result = await git(['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository'], {
    cwd: dir,
    allowFailure: true,
  }).catch((err: unknown) => {
    if (isWarrenError(err)) throw err;
    throw err;
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
  const root = path.dirname(commonDir);
  return { root, commonDir };
}

export async function currentBranch(worktree: string): Promise<string | null> {
  const result = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: worktree, allowFailure: true });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export async function revParse(repo: Repository, rev: string): Promise<string | null> {
  const result = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    cwd: repo.root,
    allowFailure: true,
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export async function branchExists(repo: Repository, branch: string): Promise<boolean> {
  const result = await git(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: repo.root, allowFailure: true });
  return result.exitCode === 0;
}

export async function checkBranchName(cwd: string, branch: string): Promise<boolean> {
  const result = await git(['check-ref-format', '--branch', branch], { cwd, allowFailure: true });
  return result.exitCode === 0 && result.stdout.trim() === branch;
}

export async function listWorktrees(repo: Repository): Promise<WorktreeEntry[]> {
  const result = await git(['worktree', 'list', '--porcelain', '-z'], { cwd: repo.root });
  return parseWorktreeList(result.stdout);
}

export async function statusOf(worktree: string): Promise<StatusEntry[]> {
  const result = await git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none'], {
    cwd: worktree,
    env: { GIT_OPTIONAL_LOCKS: '0' },
  });
  return parseStatusZ(result.stdout);
}

export async function isAncestor(repo: Repository, ancestor: string, descendant: string): Promise<boolean> {
  const result = await git(['merge-base', '--is-ancestor', ancestor, descendant], { cwd: repo.root, allowFailure: true });
  if (result.exitCode === 0) return true;
  if (result.exitCode === 1) return false;
  throw gitError(result);
}

/** Commits reachable from `rev` and not from `notRev`, newest first, as `sha subject`. */
export async function commitsNotOn(repo: Repository, rev: string, notRevs: readonly string[]): Promise<{ sha: string; subject: string }[]> {
  const result = await git(['log', '--format=%H %s', '--stdin', rev], {
    cwd: repo.root,
    input: notRevs.map((r) => `^${r}`).join('\n') + '\n',
  });
  return splitLines(result.stdout).map((line) => ({ sha: line.slice(0, 40), subject: line.slice(41) }));
}

/** Every ref's object id except the named ones: where else a branch's work may already be. */
export async function otherRefTips(repo: Repository, exclude: readonly string[]): Promise<string[]> {
  const result = await git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(*objectname)'], { cwd: repo.root });
  const tips = new Set<string>();
  for (const line of splitLines(result.stdout)) {
    const [name, object, peeled] = line.split('\0');
    if (!name || exclude.includes(name)) continue;
    // A tag's own object is not a commit; its peeled target is.
    tips.add(peeled || object || '');
  }
  tips.delete('');
  return [...tips];
}

/** Runs a mutating git command once more when another git process held a lock or was mid-write. */
export async function gitRetrying(args: readonly string[], cwd: string, attempts = 4): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const result = await git(args, { cwd, allowFailure: true });
    if (result.exitCode === 0) return;
    if (attempt >= attempts || !isTransientGitFailure(result.stderr)) throw gitError(result);
    await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 50));
  }
}
