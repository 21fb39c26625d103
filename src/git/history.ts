import { git, gitError } from './exec.js';
import { askAboutObjects } from './object-answers.js';
import { splitLines } from './parse.js';
import type { Repository } from './repo.js';

/** Questions about commit history: ancestry, merge bases, what one side has that others lack. */

/** `merge-base` answers yes (0) or no (1) about the commits; anything else is an error, asked again. */
const ANSWERED = (r: { exitCode: number }): boolean => r.exitCode === 0 || r.exitCode === 1;

export async function isAncestor(repo: Repository, ancestor: string, descendant: string): Promise<boolean> {
  const result = await askAboutObjects(
    repo,
    ['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant],
    {
      ids: [ancestor, descendant],
      allowFailure: true,
      keep: ANSWERED,
    },
  );
  if (result.exitCode === 0) return true;
  if (result.exitCode === 1) return false;
  throw gitError(result);
}

/** The best common ancestor of two commits, or null when they share no history. */
export async function mergeBase(repo: Repository, a: string, b: string): Promise<string | null> {
  const result = await askAboutObjects(repo, ['merge-base', '--end-of-options', a, b], {
    ids: [a, b],
    allowFailure: true,
    keep: ANSWERED,
  });
  const sha = result.stdout.trim();
  if (result.exitCode === 0 && sha !== '') return sha;
  if (result.exitCode === 1) return null;
  throw gitError(result);
}

/** Commits reachable from `rev` and not from `notRevs`, newest first, as `sha subject`. */
export async function commitsNotOn(
  repo: Repository,
  rev: string,
  notRevs: readonly string[],
): Promise<{ sha: string; subject: string }[]> {
  const result = await askAboutObjects(repo, ['log', '--format=%H %s', '--stdin', '--end-of-options', rev, '--'], {
    ids: [rev, ...notRevs],
    input: notRevs.map((r) => `^${r}`).join('\n') + '\n',
  });
  return splitLines(result.stdout).map((line) => ({ sha: line.slice(0, 40), subject: line.slice(41) }));
}

/** How many commits `branch` is behind and ahead of `base`, or null when either side is gone. */
export async function behindAhead(
  repo: Repository,
  base: string,
  branch: string,
): Promise<{ behind: number; ahead: number } | null> {
  const result = await git(['rev-list', '--left-right', '--count', '--end-of-options', `${base}...${branch}`, '--'], {
    cwd: repo.root,
    allowFailure: true,
  });
  if (result.exitCode !== 0) return null;
  const [behind, ahead] = result.stdout.trim().split(/\s+/).map(Number);
  return { behind: behind ?? 0, ahead: ahead ?? 0 };
}

/**
 * The commits in `from..to` that touch any of `paths`, newest first, with the task each landed
 * (its `Warren-Task:` trailer; null for a commit made by hand): who a conflict is with.
 */
export async function commitsTouching(
  repo: Repository,
  from: string,
  to: string,
  paths: readonly string[],
): Promise<{ sha: string; subject: string; task: string | null }[]> {
  if (paths.length === 0) return [];
  const result = await git(
    [
      'log',
      '--format=%H%x1f%s%x1f%(trailers:key=Warren-Task,valueonly,separator=%x2C)%x1e',
      '--end-of-options',
      `${from}..${to}`,
      '--',
      ...paths.map((p) => `:(literal)${p}`),
    ],
    { cwd: repo.root, allowFailure: true },
  );
  if (result.exitCode !== 0) return [];
  return result.stdout
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((record) => {
      const [sha = '', subject = '', task = ''] = record.split('\x1f');
      return { sha, subject, task: task.trim().split(',')[0]?.trim() || null };
    });
}
