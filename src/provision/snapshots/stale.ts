import fs from 'node:fs';
import path from 'node:path';
import type { Task } from '../../state/types.js';
import { checkInstalled, diskReader, installCommand, isNodeModules, layeredReader, sha256Of } from './installed.js';
import { sha256File } from './snapshot.js';
import { replacementAt } from '../modes/replaced.js';
import type { ProvisionRecord } from '../types.js';
import { modeKind } from '../modes/kinds.js';

/** A provisioned tree that no longer matches what pins it, and why. */
export interface StaleEntry {
  /** The lockfile (or package.json) that pins the tree, relative to the workspace root. */
  path: string;
  /** Its sha256 when the tree was provisioned ('' when there was none). */
  provisionedFrom: string;
  /** Its sha256 now; null when it is gone. */
  now: string | null;
  /** The provisioned path, why it is stale and what to run (node_modules, checked against the package manager's record). */
  tree?: string;
  why?: string;
  fix?: string;
}

/**
 * Is each provisioned tree stale? A `node_modules` is stale when its tree does not match the
 * workspace's lockfile (or package.json), read from the package manager's own record of what
 * it installed — so a task's own install that matches its new lockfile is not stale, and a
 * tree provisioned from a stale main checkout is. Unchanged since a matching provision, it is
 * not read again. Any other path: stale when its lockfile changed since it was provisioned.
 */
export async function staleEntries(task: Task, records: readonly ProvisionRecord[]): Promise<StaleEntry[]> {
  const out: StaleEntry[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (isNodeModules(r.path) && r.installed) {
      const entry = await nodeModulesStale(task, r);
      if (entry) out.push(entry);
      continue;
    }
    if (!r.lockfile || seen.has(r.lockfile.path)) continue;
    seen.add(r.lockfile.path);
    const now = sha256File(path.join(task.path, r.lockfile.path));
    if (now !== r.lockfile.sha256) out.push({ path: r.lockfile.path, provisionedFrom: r.lockfile.sha256, now });
  }
  return out;
}

async function nodeModulesStale(task: Task, r: ProvisionRecord): Promise<StaleEntry | null> {
  const installed = r.installed;
  if (!installed) return null;
  const dir = path.posix.dirname(r.path);
  const pinPath = installed.lockfile ?? (dir === '.' ? 'package.json' : `${dir}/package.json`);
  const now = installed.lockfile
    ? sha256File(path.join(task.path, installed.lockfile))
    : sha256Of(readOrNull(path.join(task.path, pinPath)));
  const then = installed.lockfile
    ? r.lockfile?.path === installed.lockfile
      ? r.lockfile.sha256
      : ''
    : (installed.packageJson ?? '');
  // Provisioned matching, and what pins it unchanged: nothing to read (unless something else replaced the layer).
  const replaced = modeKind(r.mode).layered && replacementAt(path.join(task.path, r.path)) !== null;
  if (installed.state === 'matches' && now !== null && now === then && !replaced) return null;
  const reader =
    modeKind(r.mode).layered && r.namespaced && r.upper && r.lower && !replaced
      ? layeredReader(task.path, r.path, r.upper, r.lower)
      : diskReader(task.path);
  const check = await checkInstalled(reader.read, reader.exists, r.path);
  if (check.state === 'matches') return null;
  // Nothing to compare with: stale when what pins it changed, as for any other path.
  if (check.state === 'unknown')
    return now === then && installed.state !== 'differs' ? null : { path: pinPath, provisionedFrom: then, now };
  const pinned = check.lockfile ?? pinPath;
  const cmd = installCommand(check.manager ?? installed.manager, check.lockfile);
  return {
    path: pinned,
    provisionedFrom: then,
    now: check.lockfile ? sha256File(path.join(task.path, check.lockfile)) : now,
    tree: r.path,
    why: check.why || installed.why || 'it differs',
    fix: `install in the workspace: \`warren exec ${task.id} -- ${cmd}\`${sameInMain(r, pinned, now) ? `; or reinstall in the main checkout (${cmd}) and run \`warren provision ${task.id} --refresh\` (which drops this workspace's changes to ${r.path})` : ''}`,
  };
}

/** The main checkout pins the same (its lockfile is the workspace's): a reinstall there, then a refresh, would serve this task too. */
function sameInMain(r: ProvisionRecord, pinned: string, now: string | null): boolean {
  const mainRoot = r.source.slice(0, r.source.length - r.path.length);
  return now !== null && sha256File(path.join(mainRoot, pinned)) === now;
}

function readOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
