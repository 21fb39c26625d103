import { git, gitError } from './exec.js';
import { askAboutObjects } from './object-answers.js';
import { parseNameStatusZ, splitLines, splitZ, type NameStatus } from './parse.js';
import type { Repository } from './repo.js';
import { withScratchIndex } from './scratch-index.js';

/**
 * Trees and commits built with plumbing only. Nothing here touches anyone's index, worktree or
 * ref: the only trace is objects, which git's gc prunes when nothing refers to them.
 */

const ZERO = '0000000000000000000000000000000000000000';

/** Paths that differ between two commits, with git's status letter; renames as delete + add. */
export async function touchedPaths(repo: Repository, from: string, to: string): Promise<NameStatus[]> {
  const result = await askAboutObjects(
    repo,
    ['diff', '--name-status', '-z', '--no-renames', '--end-of-options', from, to, '--'],
    { ids: [from, to] },
  );
  return parseNameStatusZ(result.stdout);
}

/** Names of the paths that differ between two commits. */
export async function changedNames(repo: Repository, from: string, to: string): Promise<string[]> {
  const result = await askAboutObjects(
    repo,
    ['diff', '--name-only', '-z', '--no-renames', '--end-of-options', from, to, '--'],
    {
      ids: [from, to],
    },
  );
  return splitZ(result.stdout);
}

/** Names of the paths `to` changed since it left `from` (`from...to`: from their merge base). */
export async function changedSinceFork(repo: Repository, from: string, to: string): Promise<string[]> {
  const result = await askAboutObjects(
    repo,
    ['diff', '--name-only', '-z', '--no-renames', '--end-of-options', `${from}...${to}`, '--'],
    { ids: [from, to] },
  );
  return splitZ(result.stdout);
}

/** One entry of a commit's tree (mode and blob), or null when the path is not in it. */
export async function treeEntry(
  repo: Repository,
  commit: string,
  file: string,
): Promise<{ mode: string; sha: string } | null> {
  const result = await askAboutObjects(repo, ['ls-tree', '-z', '--full-tree', '--end-of-options', commit, '--', file], {
    ids: [commit],
  });
  const line = result.stdout.split('\0')[0];
  if (!line) return null;
  const [meta] = line.split('\t');
  const [mode, , sha] = (meta ?? '').split(' ');
  return mode && sha ? { mode, sha } : null;
}

/** A file's content at a commit, or null when the commit has no such file. */
export async function fileAt(repo: Repository, commit: string, file: string): Promise<string | null> {
  // Kept when the file is not there either: git says so of a commit it was asked about by id (and
  // says the same of an id it lacks, which warren never asks: the ids it passes came from git).
  const result = await askAboutObjects(repo, ['cat-file', 'blob', `${commit}:${file}`], {
    ids: [commit],
    allowFailure: true,
    keep: (r) => r.exitCode === 0 || /^fatal: path '.*' does not exist in '/m.test(r.stderr),
  });
  return result.exitCode === 0 ? result.stdout : null;
}

/**
 * Which of `paths` are files (blobs) in `commit`, in the order asked: one `cat-file
 * --batch-check` for all. A path holding a line break (no question of one line can ask it) is not one.
 */
export async function filesIn(repo: Repository, commit: string, paths: readonly string[]): Promise<string[]> {
  const asked = paths.filter((p) => p !== '' && !/[\n\r\0]/.test(p));
  if (asked.length === 0) return [];
  const out = (
    await git(['cat-file', '--batch-check=%(objecttype)'], {
      cwd: repo.root,
      input: asked.map((p) => `${commit}:${p}\n`).join(''),
    })
  ).stdout.split('\n');
  return asked.filter((_, i) => out[i] === 'blob');
}

/**
 * `commit`'s tree with some paths replaced: each `{path, entry}` puts that entry (mode and blob)
 * there, or removes the path when `entry` is null. Built in a throwaway index of its own (scratch-index.ts;
 * `home` is the WARREN_HOME whose command this is).
 */
export async function treeWithEntries(
  repo: Repository,
  commit: string,
  replace: readonly { path: string; entry: { mode: string; sha: string } | null }[],
  home: string,
): Promise<string> {
  return withScratchIndex(home, async (env) => {
    await git(['read-tree', '--end-of-options', commit], { cwd: repo.root, env });
    if (replace.length > 0) {
      const lines = replace.map((r) =>
        r.entry ? `${r.entry.mode} ${r.entry.sha}\t${r.path}` : `0 ${ZERO}\t${r.path}`,
      );
      await git(['update-index', '-z', '--index-info'], { cwd: repo.root, env, input: lines.join('\0') + '\0' });
    }
    return (await git(['write-tree'], { cwd: repo.root, env })).stdout.trim();
  });
}

export async function commitTree(
  repo: Repository,
  tree: string,
  parent: string | readonly string[],
  message: string,
): Promise<string> {
  const parents = (typeof parent === 'string' ? [parent] : parent).flatMap((p) => ['-p', p]);
  return (await git(['commit-tree', tree, ...parents, '-F', '-'], { cwd: repo.root, input: message })).stdout.trim();
}

export type Merged = { ok: true; tree: string } | { ok: false; conflicts: string[] };

/**
 * A three-way merge of two commits' trees, written without touching anything (git 2.38's
 * `merge-tree --write-tree`, which finds the merge base itself).
 */
export async function mergeTrees(repo: Repository, ours: string, theirs: string): Promise<Merged> {
  // Not remembered: the tree it writes is unreachable, and a `gc --prune=now` may take it.
  const result = await git(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '--end-of-options', ours, theirs],
    { cwd: repo.root, allowFailure: true },
  );
  const lines = splitLines(result.stdout);
  if (result.exitCode === 0 && lines[0]) return { ok: true, tree: lines[0] };
  if (result.exitCode === 1) return { ok: false, conflicts: [...new Set(lines.slice(1))] };
  throw gitError(result, 'merging trees');
}
