import { mergeTreeDetailed, type MergeTreeResult } from '../git/merge-tree.js';
import type { Repository } from '../git/repo.js';
import { changedSinceFork, fileAt } from '../git/trees.js';
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

/**
 * What `commit` changed since it left `baseTip`, and what the base changed since then: two
 * name-only diffs from their merge base (`A...B`), side by side.
 */
export async function touchedSince(
  repo: Repository,
  baseTip: string,
  commit: string,
): Promise<{ touched: string[]; baseTouched: string[] }> {
  const [touched, baseTouched] = await Promise.all([
    changedSinceFork(repo, baseTip, commit),
    changedSinceFork(repo, commit, baseTip),
  ]);
  return { touched, baseTouched };
}

/**
 * Whether two sides' changes can meet in a merge at all: a path both changed, or one a folder
 * of the other (a file against a directory). git's merge is per path — a rename's source is a
 * path its side changed — so sides with none cannot conflict, and are not merged. Pure.
 */
export function mayConflict(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === 0 || b.length === 0) return false;
  const files = new Set(a);
  const folders = new Set(a.flatMap(folderPrefixes));
  return b.some((p) => files.has(p) || folders.has(p) || folderPrefixes(p).some((d) => files.has(d)));
}

/** `a/b/c` → `a`, `a/b`. */
function folderPrefixes(p: string): string[] {
  const out: string[] = [];
  for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) out.push(p.slice(0, i));
  return out;
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
  if (!mayConflict(a.touched, b.touched)) {
    return {
      a: a.id,
      b: b.id,
      aCommit: a.commit,
      bCommit: b.commit,
      conflict: false,
      files: [],
      overlap: [],
      computedAt: new Date().toISOString(),
    };
  }
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
