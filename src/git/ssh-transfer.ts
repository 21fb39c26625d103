import fs from 'node:fs';
import { git, gitError, type Worktree } from './exec.js';
import type { Repository } from './repo.js';

/**
 * Git between the coordinator and a task's host (src/run/ssh/): the commits sent there, the
 * ones fetched back into a quarantine ref, and the host's own repository made. No hook runs in
 * any of them (`core.hooksPath=/dev/null`); what is fetched is objects and one ref, never the
 * remote's configuration, and nothing is checked out until the coordinator has checked it.
 */

const NO_HOOKS = { noHooks: true } as const;

/** Pushes each commit to its ref on `url` (forced: warren's own refs there). */
export async function pushCommits(
  repo: Repository,
  url: string,
  sshCommand: string,
  refs: readonly { commit: string; ref: string }[],
): Promise<void> {
  await git(['push', '--quiet', '--no-verify', '--force', '--', url, ...refs.map((r) => `${r.commit}:${r.ref}`)], {
    cwd: repo.root,
    env: { GIT_SSH_COMMAND: sshCommand },
    timeoutMs: 600_000,
    ...NO_HOOKS,
  });
}

/** Deletes `refs` of `url` (those it does not have are no error to git). */
export async function deleteRemoteRefs(
  repo: Repository,
  url: string,
  sshCommand: string,
  refs: readonly string[],
): Promise<void> {
  await git(['push', '--quiet', '--no-verify', '--', url, ...refs.map((r) => `:${r}`)], {
    cwd: repo.root,
    env: { GIT_SSH_COMMAND: sshCommand },
    timeoutMs: 60_000,
    ...NO_HOOKS,
  });
}

/** Fetches `remoteRef` of `url` into `localRef` (forced); its commit, or null when the remote has no such ref. */
export async function fetchInto(
  repo: Repository,
  url: string,
  sshCommand: string,
  remoteRef: string,
  localRef: string,
): Promise<string | null> {
  const result = await git(
    [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--',
      url,
      `+${remoteRef}:${localRef}`,
    ],
    { cwd: repo.root, env: { GIT_SSH_COMMAND: sshCommand }, timeoutMs: 600_000, allowFailure: true, ...NO_HOOKS },
  );
  if (result.exitCode !== 0) {
    if (/couldn't find remote ref/i.test(result.stderr)) return null;
    throw gitError(result, `fetching ${remoteRef} from ${url}`);
  }
  const sha = await git(['rev-parse', '--verify', '--quiet', `${localRef}^{commit}`], {
    cwd: repo.root,
    allowFailure: true,
  });
  return sha.exitCode === 0 ? sha.stdout.trim() : null;
}

/** The paths that differ between two commits (`--no-renames`: a rename is its two paths). */
export async function pathsBetween(repo: Repository, from: string, to: string): Promise<string[]> {
  const out = await git(
    ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--end-of-options', from, to, '--'],
    {
      cwd: repo.root,
    },
  );
  return out.stdout.split('\0').filter((p) => p !== '');
}

/** Brings a pinned workspace, on its branch, forward to `commit` (a descendant of its HEAD, checked by the caller). */
export async function fastForwardWorkspace(wt: Worktree, commit: string): Promise<void> {
  await git(['merge', '--ff-only', '--quiet', '--no-edit', commit], { cwd: wt });
}

/** The host's side: a repository for the coordinator's commits (made once), its main checkout detached. */
export async function initHostRepository(dir: string): Promise<void> {
  if (fs.existsSync(`${dir}/.git`)) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await git(['init', '--quiet', dir], { cwd: dir, ...NO_HOOKS });
  // Pushes land in refs nobody has checked out; the main checkout is moved only by warren (detachMain).
  await git(['config', 'receive.denyCurrentBranch', 'refuse'], { cwd: dir, ...NO_HOOKS });
}

/** The host's main checkout at `commit` (detached): the warren.yaml the task was made from is the one read there. */
export async function detachMain(dir: string, commit: string): Promise<void> {
  await git(['checkout', '--quiet', '--detach', '--force', commit], { cwd: dir, ...NO_HOOKS });
}

/** A commit's presence in the repository, as a commit. */
export async function hasCommit(dir: string, rev: string): Promise<string | null> {
  const sha = await git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: dir, allowFailure: true });
  return sha.exitCode === 0 ? sha.stdout.trim() : null;
}

/** Deletes a ref if it is there. */
export async function dropRef(dir: string, ref: string): Promise<void> {
  await git(['update-ref', '-d', '--', ref], { cwd: dir, allowFailure: true });
}
