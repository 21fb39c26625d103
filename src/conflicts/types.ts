import type { ConflictHunk } from './hunks.js';

/** The other side of a task's merge that is not a task: its base's current tip. */
export const BASE_SIDE = '@base';

/** One file two sides cannot merge: git's type for it (`CONFLICT (contents)`, `CONFLICT (modify/delete)`…) and the hunks. */
export interface ConflictFile {
  path: string;
  type: string;
  /** git's own words about this path. */
  message: string;
  /** The conflicting hunks, `ours` being side `a`'s; empty for a conflict without markers (modify/delete, binary…). */
  hunks: ConflictHunk[];
}

/**
 * One pair's merge as git would do it: side `a` (a task) against side `b` (another task, or
 * BASE_SIDE), each at the commit it was computed on (a snapshot of the task's uncommitted work
 * on its tip, or its tip itself).
 */
export interface PairResult {
  a: string;
  b: string;
  aCommit: string;
  bCommit: string;
  conflict: boolean;
  files: ConflictFile[];
  /** Paths both sides changed that merged cleanly. */
  overlap: string[];
  computedAt: string;
}

/** A task's side of the map: the commit it was merged as, and whether that holds uncommitted work. */
export interface TaskSide {
  id: string;
  tip: string;
  commit: string;
  uncommitted: boolean;
  /** Why the uncommitted work could not be read (then `commit` is the committed tip): also an event. */
  error: string | null;
}

export interface ConflictMap {
  tasks: TaskSide[];
  /** Every pair, clean ones included; for a task against its base, `b` is BASE_SIDE. */
  pairs: PairResult[];
  /** Pairs merged in this refresh, and pairs whose merge was still valid (both commits unchanged). */
  merged: number;
  reused: number;
  /** Snapshots taken in this refresh. */
  snapshots: number;
  ms: number;
}

/** What one task conflicts with: each other side and the paths. */
export interface TaskConflicts {
  id: string;
  with: { other: string; paths: string[] }[];
}
