import { mergeBase } from '../git/history.js';
import { mergeTreeDetailed, type MergeTreeResult } from '../git/merge-tree.js';
import type { Repository } from '../git/repo.js';
import { changedNames, fileAt } from '../git/trees.js';
import { parseConflictHunks } from './hunks.js';
import type { ConflictFile, PairResult } from './types.js';

/** At most this many hunks per file, and lines per side of a hunk, are kept: the map is a pointer, not a copy. */
export const MAX_HUNKS = 20;
export const MAX_LINES = 200;

export interface Side {
  id: string;
  commit: string;
  /** Paths this side changed since it left the base. */
  touched: readonly string[];
}

/** What changed between where `commit` left `baseTip` and `commit` itself. */
export async function touchedSince(repo: Repository, baseTip: string, commit: string): Promise<string[]> {
  const fork = (await mergeBase(repo, baseTip, commit)) ?? baseTip;
  return fork === commit ? [] : changedNames(repo, fork, commit);
}

/** The files of a merge that did not merge, each with git's words and, for a content conflict, its hunks. */
export async function conflictFiles(repo: Repository, merged: MergeTreeResult): Promise<ConflictFile[]> {
  const files: ConflictFile[] = [];
  for (const path of merged.conflicted) {
    const said = merged.messages.filter((m) => m.paths.includes(path) && m.type.startsWith('CONFLICT'));
    const type = said[0]?.type ?? 'CONFLICT';
    const text = (await fileAt(repo, merged.tree, path)) ?? '';
    const hunks = parseConflictHunks(text)
      .slice(0, MAX_HUNKS)
      .map((h) => ({
        line: h.line,
        ours: h.ours.slice(0, MAX_LINES),
        base: h.base ? h.base.slice(0, MAX_LINES) : null,
        theirs: h.theirs.slice(0, MAX_LINES),
      }));
    files.push({ path, type, message: said.map((m) => m.text).join('\n'), hunks });
  }
  return files;
}

/** Merges side `a` with side `b` as `git merge` would: the conflicting files, and the paths both changed that merged. */
export async function mergePair(repo: Repository, a: Side, b: Side): Promise<PairResult> {
  const merged = await mergeTreeDetailed(repo, a.commit, b.commit);
  const files = merged.clean ? [] : await conflictFiles(repo, merged);
  const conflicted = new Set(files.map((f) => f.path));
  const theirs = new Set(b.touched);
  const overlap = a.touched.filter((p) => theirs.has(p) && !conflicted.has(p)).sort();
  return {
    a: a.id,
    b: b.id,
    aCommit: a.commit,
    bCommit: b.commit,
    conflict: files.length > 0,
    files,
    overlap,
    computedAt: new Date().toISOString(),
  };
}
