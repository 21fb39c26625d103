import type { ProjectContext } from './context.js';
import { behindAhead, commitsNotOn } from '../git/history.js';
import { branchFacts, revParse } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import { statusOf } from '../git/status.js';
import type { Task } from '../state/types.js';
import { pinned } from './pinned.js';

/** What git says about one task, for the dashboard and other readers: read-only, never takes a lock. */

/** The base as a commit: the local branch when it exists, otherwise whatever `base` names. */
export async function baseTip(repo: Repository, base: string): Promise<string | null> {
  return (await revParse(repo, `refs/heads/${base}`)) ?? (await revParse(repo, base));
}

/**
 * The commits of several bases and branches, with one `for-each-ref` for the local branches;
 * a base that is no local branch (`origin/main`, a tag) is resolved on its own. Absent: gone.
 */
export async function branchTips(
  repo: Repository,
  bases: readonly string[],
  branches: readonly string[],
): Promise<{ bases: Map<string, string>; branches: Map<string, string> }> {
  const facts = await branchFacts(repo, [...new Set([...bases, ...branches])]);
  const out = { bases: new Map<string, string>(), branches: new Map<string, string>() };
  for (const b of branches) {
    const commit = facts.get(b)?.commit;
    if (commit) out.branches.set(b, commit);
  }
  for (const b of new Set(bases)) {
    const commit = facts.get(b)?.commit ?? (await revParse(repo, b));
    if (commit) out.bases.set(b, commit);
  }
  return out;
}

/** Drift between two commits never changes: counted once per pair for as long as the process lives. */
const driftOfPair = new Map<string, { behind: number; ahead: number }>();
const DRIFT_PAIRS_KEPT = 4096;

/** Commits `branch` is behind and ahead of `base` (both commits), counted by git once per pair. */
export async function driftBetween(
  repo: Repository,
  base: string,
  branch: string,
): Promise<{ behind: number; ahead: number } | null> {
  const key = `${base}...${branch}`;
  const known = driftOfPair.get(key);
  if (known) return known;
  const counted = await behindAhead(repo, base, branch);
  // A commit that is not there yet (or no longer) is asked again next time.
  if (counted === null) return null;
  if (driftOfPair.size >= DRIFT_PAIRS_KEPT) driftOfPair.clear();
  driftOfPair.set(key, counted);
  return counted;
}

/** Tracked (and untracked, not ignored) changes in the workspace, or null when it cannot be read. */
export async function changeCount(ctx: ProjectContext, task: Task): Promise<number | null> {
  try {
    return (await statusOf(await pinned(ctx, task.path))).length;
  } catch {
    return null;
  }
}

/** Commits on the branch that the base does not have, newest first (at most `limit`). */
export async function branchCommits(
  repo: Repository,
  task: Task,
  limit = 100,
): Promise<{ sha: string; subject: string }[]> {
  const tip = await baseTip(repo, task.base);
  return (await commitsNotOn(repo, `refs/heads/${task.branch}`, tip ? [tip] : [])).slice(0, limit);
}
