import fs from 'node:fs';
import path from 'node:path';
import { statusOf } from '../git/repo.js';
import type { Task } from '../state/types.js';
import { diffManifests, readManifest, takeManifest, walkTree, type Change } from './manifest.js';
import { overlayAt } from './overlay.js';
import { sha256File } from './snapshot.js';
import { provisionRecords, type ProvisionRecord } from './types.js';
import { lexists } from '../util/lexists.js';

export interface ProvisionedStatus {
  path: string;
  mode: ProvisionRecord['mode'];
  isolated: boolean;
  /** Paths relative to the workspace root. */
  changed: Change[];
  /** How many changes there were (`changed` holds at most MAX_LISTED). */
  changedCount: number;
  /** share: these changes are seen by every workspace that shares the path, and the main checkout. */
  affectsAllSharers?: true;
  /** hardlink: files written in place through a link, so the main checkout's copy changed too. */
  writtenThrough?: string[];
  /** Why the changes could not be read, when they could not. */
  unknown?: string;
}

export interface TaskStatus {
  tracked: { code: string; path: string }[];
  provisioned: ProvisionedStatus[];
  stale: boolean;
  staleLockfiles: { path: string; provisionedFrom: string; now: string | null }[];
}

export const MAX_LISTED = 500;

/** Reads a cow path's upper layer: every entry there is a change; a 0:0 character device is a deletion. */
export function upperChanges(upper: string, lower: string, merged: string | null): Change[] {
  const changes: Change[] = [];
  walkTree(upper, (rel, st) => {
    if (rel === '') return;
    const inLower = lexists(path.join(lower, rel));
    if (st.isCharacterDevice() && st.rdev === 0) {
      changes.push({ path: rel, change: 'deleted' });
    } else if (st.isDirectory()) {
      if (!inLower) changes.push({ path: rel, change: 'added' });
      else if (merged !== null) {
        // An opaque directory (rm -rf then mkdir, as npm does) hides the lower entries without whiteouts.
        for (const name of safeList(path.join(lower, rel))) {
          const child = `${rel}/${name}`;
          if (!lexists(path.join(merged, child)) && !lexists(path.join(upper, child))) changes.push({ path: child, change: 'deleted' });
        }
      }
    } else {
      changes.push({ path: rel, change: inLower ? 'modified' : 'added' });
    }
  });
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

function recordStatus(task: Task, r: ProvisionRecord): ProvisionedStatus {
  const target = path.join(task.path, r.path);
  const out: ProvisionedStatus = { path: r.path, mode: r.mode, isolated: r.isolated, changed: [], changedCount: 0 };
  let changes: Change[] = [];
  if (r.mode === 'cow' && r.upper && r.lower) {
    changes = upperChanges(r.upper, r.lower, overlayAt(target) ? target : null);
  } else if (r.manifest) {
    const before = readManifest(r.manifest);
    if (before === null) {
      out.unknown = `the manifest taken at provisioning (${r.manifest}) is missing`;
      return out;
    }
    const root = r.mode === 'share' ? r.source : target;
    changes = diffManifests(before, takeManifest(root));
    if (r.mode === 'share') out.affectsAllSharers = true;
    if (r.mode === 'hardlink') {
      // Same inode, new size or mtime: written in place through the link, so the source changed too.
      const through = changes.filter((c) => c.change === 'modified' && before.entries[c.path]?.[0] === 'f' && safeIno(path.join(target, c.path)) === before.entries[c.path]?.[3]);
      if (through.length > 0) out.writtenThrough = through.map((c) => join(r.path, c.path));
    }
  }
  out.changedCount = changes.length;
  out.changed = changes.slice(0, MAX_LISTED).map((c) => ({ ...c, path: join(r.path, c.path) }));
  return out;
}

/** `warren status ID`: tracked changes from git, changes inside each provisioned path, staleness. */
export async function taskStatus(task: Task): Promise<TaskStatus> {
  const tracked = (await statusOf(task.path)).map((e) => ({ code: e.code, path: e.path }));
  const records = provisionRecords(task.data);
  const provisioned = records.map((r) => recordStatus(task, r));
  const staleLockfiles: TaskStatus['staleLockfiles'] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (!r.lockfile || seen.has(r.lockfile.path)) continue;
    seen.add(r.lockfile.path);
    const now = sha256File(path.join(task.path, r.lockfile.path));
    if (now !== r.lockfile.sha256) staleLockfiles.push({ path: r.lockfile.path, provisionedFrom: r.lockfile.sha256, now });
  }
  return { tracked, provisioned, stale: staleLockfiles.length > 0, staleLockfiles };
}

function join(base: string, rel: string): string {
  return rel === '' ? base : `${base}/${rel}`;
}


function safeIno(p: string): number | null {
  try {
    return fs.lstatSync(p).ino;
  } catch {
    return null;
  }
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
