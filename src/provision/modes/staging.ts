import fs from 'node:fs';
import path from 'node:path';
import type { ProjectContext } from '../../workspace/context.js';
import { removeTree } from '../../system/remove-tree.js';
import { slugOf, taskManifestDir } from '../layout.js';
import type { ProvisionItem } from '../types.js';
import { hardlinkTree, startCopy, type HardlinkOutcome } from './copy.js';

/**
 * `warren new` starts each `copy` and `hardlink` path's `cp` while git makes the worktree (issue
 * 41): into a staging folder of the task's own under $WARREN_HOME (its provisioning folder,
 * which the undo of a failed or killed `new`, `rm` and gc delete with the task), moved into the
 * workspace by one rename once git is done and the path's checks passed. By hand, `git worktree
 * add` and `cp` run one after the other; here the copy no longer waits for git.
 *
 * Only where a rename can move it: the staging folder on the workspace root's file system (and,
 * for hard links, on the source's). Elsewhere, and for a path no staged copy was started for,
 * the mode copies into the workspace as before.
 */

/** A copy under way outside the workspace. */
export interface StagedPath {
  /** Where it is being made. */
  at: string;
  /** Settles once `cp` has ended: a hard-link copy's outcome, null for a copy. */
  made: Promise<HardlinkOutcome | null>;
  /** Kills `cp` (the copy is then deleted with the staging folder). */
  abort(): void;
  /** Where a copy's progress goes from now on (bytes written so far). */
  onProgress(report: (bytesWritten: number) => void): void;
}

export interface Staging {
  /** The staged copy of `rel`, taken once: the caller moves it into the workspace (`moveIn`). */
  take(rel: string): StagedPath | null;
  /** Kills what was not taken, waits for every `cp` to end, and deletes the staging folder. */
  close(): Promise<void>;
}

/** The task's staging folder: inside its provisioning folder, which the task's undo and gc delete. */
export function stagingDir(ctx: ProjectContext, taskId: string): string {
  return path.join(taskManifestDir(ctx, taskId), 'staging');
}

/**
 * Starts a `cp` for each of `items` (copy or hardlink) into the task's staging folder, where a
 * rename can move it into the workspace; returns null when none could be started. The task's
 * row must exist: its undo is what deletes the folder should warren be killed meanwhile.
 */
export function startStaging(ctx: ProjectContext, taskId: string, items: readonly ProvisionItem[]): Staging | null {
  if (items.length === 0) return null;
  const dir = stagingDir(ctx, taskId);
  const rootDev = fs.statSync(ctx.root, { throwIfNoEntry: false })?.dev;
  if (rootDev === undefined) return null;
  removeTree(dir); // a folder a killed run left (no task of this ID exists: `new` checked)
  fs.mkdirSync(dir, { recursive: true });
  if (fs.statSync(dir).dev !== rootDev) {
    removeTree(dir);
    return null;
  }
  const staged = new Map<string, StagedPath>();
  for (const item of items) {
    const source = path.join(ctx.repo.root, item.path);
    const st = fs.lstatSync(source, { throwIfNoEntry: false });
    if (!st || (item.mode === 'hardlink' && st.dev !== rootDev)) continue;
    staged.set(item.path, start(item, source, path.join(dir, slugOf(item.path))));
  }
  if (staged.size === 0) {
    removeTree(dir);
    return null;
  }
  const all = [...staged.values()];
  return {
    take(rel) {
      const s = staged.get(rel) ?? null;
      staged.delete(rel);
      return s;
    },
    async close() {
      for (const s of staged.values()) s.abort();
      await Promise.all(all.map((s) => s.made.catch(() => undefined)));
      removeTree(dir);
      // A failed `new`'s undo deleted the task's folder while a cp was still writing in it.
      try {
        fs.rmdirSync(path.dirname(dir));
      } catch {
        // not empty: the task's own (since, same-content caches), or already gone
      }
    },
  };
}

function start(item: ProvisionItem, source: string, at: string): StagedPath {
  const abort = new AbortController();
  let report: ((bytesWritten: number) => void) | null = null;
  const made =
    item.mode === 'hardlink'
      ? hardlinkTree(source, at, abort.signal)
      : startCopy(source, at, abort.signal, (n) => report?.(n)).then(() => null);
  made.catch(() => undefined); // awaited by the mode that takes it, or by close()
  return {
    at,
    made,
    abort: () => abort.abort(),
    onProgress: (r) => (report = r),
  };
}

/** Moves a staged copy into the workspace, where the path's checks found nothing. */
export function moveIn(staged: StagedPath, dst: string): void {
  fs.renameSync(staged.at, dst);
}
