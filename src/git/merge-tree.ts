import { git, gitError } from './exec.js';
import type { Repository } from './repo.js';

/**
 * git's own three-way merge of two commits, written as objects only (`merge-tree --write-tree`,
 * git 2.38+, which finds the merge base itself): what `git merge` would report, with nobody's
 * index, worktree or ref touched. A conflicted file is in the written tree with its conflict
 * markers, which is where the hunks are read from (src/conflicts/hunks.ts).
 */

/** One of git's messages about the merge: the paths it names, its type (`CONFLICT (contents)`, `Auto-merging`) and its text. */
export interface MergeMessage {
  paths: string[];
  type: string;
  text: string;
}

export interface MergeTreeResult {
  clean: boolean;
  /** The merged tree; a conflicted file holds its conflict markers. */
  tree: string;
  /** Paths left unmerged (with `--name-only`: each once). */
  conflicted: string[];
  messages: MergeMessage[];
}

/**
 * Reads `merge-tree --write-tree --name-only -z` (messages on, as `-z` has them by default):
 * `TREE\0`, then when not clean one `PATH\0` per unmerged path, then `\0`, then each message as
 * `N\0PATH1\0…PATHN\0TYPE\0TEXT\0`. Pure.
 */
export function parseMergeTreeZ(stdout: string, clean: boolean): MergeTreeResult {
  const fields = stdout.split('\0');
  let i = 0;
  const tree = fields[i++] ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new Error(`merge-tree: not a tree id: ${JSON.stringify(tree)}`);
  const conflicted: string[] = [];
  if (!clean) {
    while (i < fields.length && fields[i] !== '') conflicted.push(fields[i++] as string);
  }
  i++; // the empty field between the two sections
  const messages: MergeMessage[] = [];
  while (i < fields.length) {
    const count = Number(fields[i]);
    if (fields[i] === '' || !Number.isInteger(count)) break;
    i++;
    const paths = fields.slice(i, i + count);
    i += count;
    const type = fields[i++] ?? '';
    const text = (fields[i++] ?? '').replace(/\n$/, '');
    messages.push({ paths, type, text });
  }
  return { clean, tree, conflicted: [...new Set(conflicted)], messages };
}

/** Merges `ours` and `theirs` (commits) as `git merge` would, writing only objects. */
export async function mergeTreeDetailed(repo: Repository, ours: string, theirs: string): Promise<MergeTreeResult> {
  const result = await git(
    ['merge-tree', '--write-tree', '--name-only', '-z', '--messages', '--end-of-options', ours, theirs],
    { cwd: repo.root, allowFailure: true },
  );
  if (result.exitCode !== 0 && result.exitCode !== 1) throw gitError(result, 'merging trees');
  return parseMergeTreeZ(result.stdout, result.exitCode === 0);
}
