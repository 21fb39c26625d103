import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { git, gitError } from '../git/exec.js';
import { splitLines } from '../git/parse.js';
import type { Repository } from '../git/repo.js';
import { parseNameStatusZ, type Exclusion, type TouchedPath } from './protected.js';

/**
 * The squash is built with plumbing only: a temporary index of its own (GIT_INDEX_FILE), then
 * write-tree and commit-tree. No one's index, worktree or ref is touched; the only trace of a
 * refused land is unreferenced objects, which git's gc prunes.
 */

const ZERO = '0000000000000000000000000000000000000000';

export async function touchedPaths(repo: Repository, from: string, to: string): Promise<TouchedPath[]> {
  const result = await git(['diff', '--name-status', '-z', '--no-renames', from, to, '--'], { cwd: repo.root });
  return parseNameStatusZ(result.stdout);
}

/** The task's tree with every excluded path put back to its fork-point version (or left out when it had none). */
export async function squashTree(repo: Repository, taskTip: string, forkPoint: string, exclusions: readonly Exclusion[]): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-land-'));
  const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
  try {
    await git(['read-tree', taskTip], { cwd: repo.root, env });
    if (exclusions.length > 0) {
      const lines: string[] = [];
      for (const ex of exclusions) {
        const entry = await treeEntry(repo, forkPoint, ex.path);
        lines.push(entry ? `${entry.mode} ${entry.sha}\t${ex.path}` : `0 ${ZERO}\t${ex.path}`);
      }
      await git(['update-index', '-z', '--index-info'], { cwd: repo.root, env, input: lines.join('\0') + '\0' });
    }
    return (await git(['write-tree'], { cwd: repo.root, env })).stdout.trim();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function treeEntry(repo: Repository, commit: string, file: string): Promise<{ mode: string; sha: string } | null> {
  const result = await git(['ls-tree', '-z', '--full-tree', commit, '--', file], { cwd: repo.root });
  const line = result.stdout.split('\0')[0];
  if (!line) return null;
  const [meta] = line.split('\t');
  const [mode, , sha] = (meta ?? '').split(' ');
  return mode && sha ? { mode, sha } : null;
}

export async function treeOf(repo: Repository, commit: string): Promise<string> {
  return (await git(['rev-parse', `${commit}^{tree}`], { cwd: repo.root })).stdout.trim();
}

export async function commitTree(repo: Repository, tree: string, parent: string, message: string): Promise<string> {
  return (await git(['commit-tree', tree, '-p', parent, '-F', '-'], { cwd: repo.root, input: message })).stdout.trim();
}

export type Rebased = { ok: true; tree: string } | { ok: false; conflicts: string[] };

/**
 * The base moved since the task branched: a three-way merge of trees (fork point → squash,
 * fork point → base tip). git 2.39's merge-tree takes commits and finds the merge base itself,
 * so the squash tree is wrapped in a throwaway commit whose parent is the fork point.
 */
export async function rebaseSquash(repo: Repository, forkPoint: string, tree: string, baseTip: string): Promise<Rebased> {
  const temp = await commitTree(repo, tree, forkPoint, 'warren: squash being rebased (temporary, unreferenced)');
  const result = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', baseTip, temp], { cwd: repo.root, allowFailure: true });
  const lines = splitLines(result.stdout);
  if (result.exitCode === 0 && lines[0]) return { ok: true, tree: lines[0] };
  if (result.exitCode === 1) return { ok: false, conflicts: [...new Set(lines.slice(1))] };
  throw gitError(result, 'merging the squash onto the moved base');
}

export function conflictError(id: string, base: string, conflicts: readonly string[]): WarrenError {
  return new WarrenError(
    'LAND_CONFLICT',
    `task ${id} conflicts with what landed on ${base} since it branched, in ${conflicts.length} path(s): ${conflicts.join(', ')}. Nothing was landed: ${base}, the task branch and every checkout are as they were.`,
    {
      hint: `Bring ${base} into the task (e.g. \`git merge ${base}\` in the workspace), resolve the conflicts, \`warren checkpoint\`, then land again.`,
      details: { conflicts },
    },
  );
}
