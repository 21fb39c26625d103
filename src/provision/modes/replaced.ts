import fs from 'node:fs';
import path from 'node:path';
import type { Task } from '../../state/types.js';
import { readMounts, type MountEntry } from '../../system/mounts.js';
import { lstatOrNull } from '../../util/lexists.js';
import { listDir } from '../../util/list-dir.js';
import { walkTree, type Change } from '../status/manifest.js';
import { overlayAt } from '../../system/overlay.js';
import { provisionRecords, type ProvisionRecord } from '../types.js';
import { modeKind } from './kinds.js';

/**
 * A cow path whose mount point was replaced: `rm -rf node_modules && mkdir node_modules && npm
 * install`, `mv node_modules x && cp -r x node_modules` or a package manager that swaps the folder,
 * where the layer was not mounted (after a reboot or a `fusermount -u`), or at any time on the
 * host for a layer mounted only in each run's namespace (there the mount point is a plain empty
 * folder, and a tool outside warren sees and fills it). Mounted over it, the layer would hide
 * what is there from warren's own commands and from `status`, while the user's tools see it; so
 * warren never mounts over a replaced path, and says so.
 */

export interface Replacement {
  /** What is at the path now instead of the layer. */
  by: 'folder' | 'file' | 'link';
  /** Names directly in it (a folder). */
  entries: number;
}

/**
 * What replaced a cow path's layer at `target`, or null: mounted (where the layer is
 * mounted, nothing can replace it: rename and rmdir of a mount point fail with EBUSY), gone
 * (made again, empty), or an empty plain folder (the mount point as warren made it).
 */
export function replacementAt(target: string, table: readonly MountEntry[] = readMounts()): Replacement | null {
  if (overlayAt(target, table)) return null;
  const st = lstatOrNull(target);
  if (st === null) return null;
  if (st.isSymbolicLink()) return { by: 'link', entries: 0 };
  if (!st.isDirectory()) return { by: 'file', entries: 0 };
  const entries = listDir(target).length;
  return entries === 0 ? null : { by: 'folder', entries };
}

/** A task's cow records whose layer was replaced, with what replaced it. */
export function replacedRecords(task: Task): { record: ProvisionRecord; replacement: Replacement }[] {
  const table = readMounts();
  const out: { record: ProvisionRecord; replacement: Replacement }[] = [];
  for (const record of provisionRecords(task.data)) {
    if (!modeKind(record.mode).layered || !record.upper || !record.lower) continue;
    const replacement = replacementAt(path.join(task.path, record.path), table);
    if (replacement) out.push({ record, replacement });
  }
  return out;
}

/** `node_modules was replaced by a plain folder (3 entries)`, for messages. Pure. */
export function describeReplacement(rel: string, r: Replacement): string {
  const what =
    r.by === 'folder'
      ? `a plain folder (${r.entries} entr${r.entries === 1 ? 'y' : 'ies'})`
      : r.by === 'link'
        ? 'a symlink'
        : 'a file';
  return `${rel} is no longer its copy-on-write layer: ${what} replaced it`;
}

/**
 * What a replacing folder holds against the snapshot the layer was made from: an entry only
 * in the folder is added, one only in the snapshot deleted (its folder once, not each file in
 * it), one of another type, size, link target or content modified. Bytes are compared only
 * where size matches and mtime does not (`cp -a` keeps mtimes; `cp -r` and installs do not).
 */
export function replacementChanges(folder: string, lower: string): Change[] {
  const changes: Change[] = [];
  walkTree(folder, (rel, st) => {
    if (rel === '') return;
    const was = lstatOrNull(path.join(lower, rel));
    if (was === null) changes.push({ path: rel, change: 'added' });
    else if (differs(path.join(folder, rel), st, path.join(lower, rel), was))
      changes.push({ path: rel, change: 'modified' });
  });
  walkTree(lower, (rel) => {
    if (rel === '') return;
    if (lstatOrNull(path.join(folder, rel)) !== null) return;
    changes.push({ path: rel, change: 'deleted' });
    return false;
  });
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

function differs(now: string, st: fs.Stats, then: string, was: fs.Stats): boolean {
  if (st.isDirectory() || was.isDirectory()) return st.isDirectory() !== was.isDirectory();
  if (st.isSymbolicLink() || was.isSymbolicLink())
    return !(st.isSymbolicLink() && was.isSymbolicLink()) || fs.readlinkSync(now) !== fs.readlinkSync(then);
  if (!st.isFile() || !was.isFile()) return st.mode !== was.mode || st.rdev !== was.rdev;
  if (st.size !== was.size) return true;
  if (Math.trunc(st.mtimeMs) === Math.trunc(was.mtimeMs)) return false;
  try {
    return !fs.readFileSync(now).equals(fs.readFileSync(then));
  } catch {
    return true;
  }
}
