import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from './exec.js';
import { gitPaths } from './config.js';

/**
 * A worktree's whole state as trees, built in a copy of its index: the worktree's own index,
 * files and refs are never touched (objects are the only trace). `diff` compares against it,
 * `rm --discard` archives it.
 */

export interface WorktreeSnapshot {
  /** Tracked files as they are on disk, plus untracked files git does not ignore (less the excluded paths). */
  tree: string;
  /** The index as it is (what is staged), or null when it cannot be written as a tree (unmerged paths). */
  indexTree: string | null;
}

/**
 * `git add -A` into a copy of the worktree's index (its stat data makes this as fast as `git
 * status`), then `write-tree`. `excludePathspecs` keeps paths out (`:(exclude,literal)…`): name
 * only paths git does not ignore, or `git add` fails on them.
 */
export async function snapshotWorktree(worktree: string, excludePathspecs: readonly string[]): Promise<WorktreeSnapshot> {
  const { paths } = await gitPaths(worktree, ['index']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-snapshot-'));
  const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
  try {
    const real = paths[0];
    if (real && fs.existsSync(real)) fs.copyFileSync(real, env.GIT_INDEX_FILE);
    const staged = await git(['write-tree'], { cwd: worktree, env, allowFailure: true });
    await git(['add', '-A', '--', '.', ...excludePathspecs], { cwd: worktree, env });
    const tree = (await git(['write-tree'], { cwd: worktree, env })).stdout.trim();
    return { tree, indexTree: staged.exitCode === 0 ? staged.stdout.trim() : null };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Puts a worktree's index at `tree` without touching its files (`read-tree`), then refreshes the
 * stat data so that files equal to their index entry do not show as changed.
 */
export async function setIndexTree(worktree: string, tree: string): Promise<void> {
  await git(['read-tree', '--end-of-options', tree], { cwd: worktree });
  await git(['update-index', '-q', '--refresh'], { cwd: worktree, allowFailure: true });
}
