import { git } from './exec.js';
import type { Where } from './exec.js';
import { parseNameStatusRenamesZ, parseNumstatZ } from './parse.js';

/** Diffs for people: which files changed, their line counts, and the patch text. */

/** What changed in one file between two trees (or commits), as `--name-status` and `--numstat` say. */
export interface FileChange {
  /** git's letter: A added, M modified, D deleted, R renamed, C copied, T type changed. */
  status: string;
  path: string;
  /** Where a renamed or copied file came from. */
  from: string | null;
  /** Lines; null for a binary file. */
  added: number | null;
  deleted: number | null;
}

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '--find-renames'];

/** The files that differ between `from` and `to` (trees or commits), renames found, in git's order. */
export async function changedFiles(cwd: Where, from: string, to: string): Promise<FileChange[]> {
  const [names, counts] = await Promise.all([
    git(['diff', '--name-status', '-z', ...DIFF_FLAGS, '--end-of-options', from, to, '--'], { cwd }),
    git(['diff', '--numstat', '-z', ...DIFF_FLAGS, '--end-of-options', from, to, '--'], { cwd }),
  ]);
  // Both list the same files in the same order (one diff queue), so the counts are zipped by position.
  const numbers = parseNumstatZ(counts.stdout);
  return parseNameStatusRenamesZ(names.stdout).map((n, i) => ({
    ...n,
    added: numbers[i]?.added ?? null,
    deleted: numbers[i]?.deleted ?? null,
  }));
}

/** The patch from `from` to `to` (trees or commits), as bytes, in the same file order as `changedFiles`. */
export async function patchBetween(cwd: Where, from: string, to: string): Promise<Buffer> {
  return (await git(['diff', ...DIFF_FLAGS, '--end-of-options', from, to, '--'], { cwd })).stdoutBuffer;
}
