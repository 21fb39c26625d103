import { realpathSync } from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { git, gitError } from './exec.js';
import { isTransientGitFailure } from './errors.js';
import { parseStatusZ, parseWorktreeList, splitLines, type StatusEntry, type WorktreeEntry } from './parse.js';

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

export interface Upstream {
  remote: string;
  /** The branch's name on the remote (`refs/heads/main`). */
  remoteRef: string;
  /** The local remote-tracking ref (`refs/remotes/origin/main`). */
  trackingRef: string;
}

export interface BranchFacts {
  commit: string;
  /** Null when the branch tracks nothing, or tracks a local branch (`remote = .`). */
  upstream: Upstream | null;
}

const FACTS_FORMAT = '%(refname)%00%(objectname)%00%(objecttype)%00%(upstream:remotename)%00%(upstream:remoteref)%00%(upstream)';

/**
 * Several local branches in one `for-each-ref`: each one's commit and upstream; a branch that
 * does not exist (or points at something other than a commit) is absent from the map.
 */
export async function branchFacts(repo: Repository, branches: readonly string[]): Promise<Map<string, BranchFacts>> {
  const facts = new Map<string, BranchFacts>();
  if (branches.length === 0) return facts;
  const refs = branches.map((b) => `refs/heads/${b}`);
  // Patterns match whole path components, so `refs/heads/a` also lists `refs/heads/a/b`: only exact names count.
  const result = await git(['for-each-ref', `--format=${FACTS_FORMAT}`, '--', ...refs], { cwd: repo.root });
  for (const line of splitLines(result.stdout)) {
    const [ref, commit, type, remote, remoteRef, trackingRef] = line.split('\0');
    if (!ref || !commit || type !== 'commit' || !refs.includes(ref)) continue;
    const upstream = remote && remoteRef && trackingRef && remote !== '.' ? { remote, remoteRef, trackingRef } : null;
    facts.set(ref.slice('refs/heads/'.length), { commit, upstream });
  }
  return facts;
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
