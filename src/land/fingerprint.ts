import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { Worktree } from '../git/exec.js';
import type { Task } from '../state/types.js';

/**
 * What every worktree of a repository shares and a task silently depends on: the hooks that run
 * on its commits and the shared config. Recorded at `warren new`, compared by `checkpoint`
 * and `land`: one agent's `npm install` in a husky repository rewrites the commit path for all.
 */
export interface Fingerprint {
  /** The hooks directory a commit of warren's in the workspace runs: the main checkout's, as git resolves it there. */
  hooksDir: string;
  /** core.hooksPath as configured (null when unset). */
  hooksPath: string | null;
  hooksDirExists: boolean;
  /** Hook file name → sha256 of its executable bit and contents (`*.sample` files never run and are left out). */
  hooks: Record<string, string>;
  /** sha256 of the shared config file. */
  configSha: string;
  at: string;
}

export interface HookChange {
  name: string;
  change: 'added' | 'removed' | 'changed';
}

export interface Drift {
  hooks: HookChange[];
  hooksDirMoved: { from: string; to: string } | null;
  configChanged: boolean;
}

/**
 * The hooks a commit in the workspace runs — warren's commits there run the main checkout's
 * (the pinned worktree's `hooksDir`), never a folder the workspace holds — and the shared config.
 * `hooksPath`: core.hooksPath as the repository configures it (null when unset).
 */
export async function takeFingerprint(wt: Worktree, hooksPath: string | null): Promise<Fingerprint> {
  const hooksDirExists = isDirectory(wt.hooksDir);
  return {
    hooksDir: wt.hooksDir,
    hooksPath,
    hooksDirExists,
    hooks: hooksDirExists ? hashHooks(wt.hooksDir) : {},
    configSha: sha256(readOrEmpty(path.join(wt.commonDir, 'config'))),
    at: new Date().toISOString(),
  };
}

function hashHooks(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.sample')) continue;
    const file = path.join(dir, name);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file); // follows links: a symlinked hook runs its target
    } catch {
      out[name] = 'dangling';
      continue;
    }
    if (!stat.isFile()) continue;
    const executable = (stat.mode & 0o111) !== 0 ? 'x' : '-';
    out[name] = sha256(Buffer.concat([Buffer.from(`${executable}\0`), fs.readFileSync(file)]));
  }
  return out;
}

/** Pure comparison of two fingerprints. */
export function compareFingerprints(before: Fingerprint, now: Fingerprint): Drift {
  const hooks: HookChange[] = [];
  for (const [name, hash] of Object.entries(now.hooks)) {
    const old = before.hooks[name];
    if (old === undefined) hooks.push({ name, change: 'added' });
    else if (old !== hash) hooks.push({ name, change: 'changed' });
  }
  for (const name of Object.keys(before.hooks)) if (!(name in now.hooks)) hooks.push({ name, change: 'removed' });
  hooks.sort((a, b) => a.name.localeCompare(b.name));
  return {
    hooks,
    hooksDirMoved: before.hooksDir === now.hooksDir ? null : { from: before.hooksDir, to: now.hooksDir },
    configChanged: before.configSha !== now.configSha,
  };
}

export function describeDrift(drift: Drift): string[] {
  return [
    ...(drift.hooksDirMoved
      ? [`hooks directory moved from ${drift.hooksDirMoved.from} to ${drift.hooksDirMoved.to}`]
      : []),
    ...drift.hooks.map((h) => `hook ${h.name} ${h.change}`),
    ...(drift.configChanged ? ['shared git config changed'] : []),
  ];
}

/** Reads the fingerprint recorded at `new`, defensively: a task made before this feature has none. */
export function recordedFingerprint(task: Task): Fingerprint | null {
  const fp = task.data['fingerprint'];
  if (typeof fp !== 'object' || fp === null) return null;
  const f = fp as Partial<Fingerprint>;
  if (
    typeof f.hooksDir !== 'string' ||
    typeof f.configSha !== 'string' ||
    typeof f.hooks !== 'object' ||
    f.hooks === null
  )
    return null;
  return fp as Fingerprint;
}

/**
 * The guard `checkpoint` and `land` run before mutating anything (`mainHooksDir`: as for
 * takeFingerprint, read freshly by the caller). Hook drift refuses (unless accepted); a
 * shared-config change alone is returned for the caller to report, not refused: git writes
 * that file for ordinary reasons (upstreams, fetch settings).
 */
export async function checkHooks(
  task: Task,
  wt: Worktree,
  hooksPath: string | null,
  acceptHooks: boolean,
  verb: string,
): Promise<{ current: Fingerprint; drift: Drift | null }> {
  const current = await takeFingerprint(wt, hooksPath);
  const before = recordedFingerprint(task);
  if (!before) return { current, drift: null };
  const drift = compareFingerprints(before, current);
  if (!acceptHooks && (drift.hooks.length > 0 || drift.hooksDirMoved)) {
    const what = describeDrift({ ...drift, configChanged: false });
    throw new WarrenError(
      'HOOKS_CHANGED',
      `the git hooks changed since task ${task.id} began: ${what.join('; ')}. Nothing was changed; ${verb} was refused.`,
      {
        hint: `Check the hooks in ${current.hooksDir}; if the change is expected, run the command again with --accept-hooks.`,
        details: { drift },
      },
    );
  }
  return { current, drift };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function readOrEmpty(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
