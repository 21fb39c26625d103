import { git } from './exec.js';
import type { Repository } from './repo.js';

/** Remotes: which exist, fetching one branch, pushing one ref. */

export async function remoteNames(repo: Repository): Promise<string[]> {
  return (await git(['remote'], { cwd: repo.root })).stdout.split('\n').filter((r) => r !== '');
}

/** Fetches one branch into its remote-tracking ref (forced: the tracking ref mirrors the remote). */
export async function fetchBranch(
  repo: Repository,
  remote: string,
  remoteRef: string,
  trackingRef: string,
): Promise<void> {
  await git(['fetch', '--no-tags', '--quiet', '--', remote, `+${remoteRef}:${trackingRef}`], { cwd: repo.root });
}

export interface PushResult {
  ok: boolean;
  /** git's words, when it failed. */
  error: string | null;
}

/**
 * Pushes `commit` to `ref` on `remote`. `expected`, when given, is a lease: the value the remote
 * ref must still have ('' for "must not exist"), so a push never clobbers what someone else put there.
 */
export async function pushCommit(
  repo: Repository,
  remote: string,
  commit: string,
  ref: string,
  expected?: string,
): Promise<PushResult> {
  const args = [
    'push',
    '--porcelain',
    ...(expected === undefined ? [] : [`--force-with-lease=${ref}:${expected}`]),
    '--',
    remote,
    `${commit}:${ref}`,
  ];
  const result = await git(args, { cwd: repo.root, allowFailure: true, timeoutMs: 300_000 });
  if (result.exitCode === 0) return { ok: true, error: null };
  return { ok: false, error: (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-3).join(' | ') };
}
