import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { isStrictlyInside } from '../util/paths.js';

export { isInside, isStrictlyInside } from '../util/paths.js';

/**
 * `<project>` names the repository and stays distinct for two repositories with the same
 * folder name: the folder name plus a hash of the canonical common git directory.
 */
export function projectKey(repoRoot: string, commonDir: string): string {
  const name = path.basename(repoRoot).replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
  const hash = createHash('sha256').update(commonDir).digest('hex').slice(0, 10);
  return `${name}-${hash}`;
}

/**
 * The workspace path for an ID under a canonical root, with its real location checked.
 * Threat: a symlink planted at `<root>/<ID>` (or a root replaced by one) would make every
 * later step — checkout, provisioning, deletion — act on someone else's directory.
 */
export function workspacePathFor(root: string, id: string): string {
  const candidate = path.join(root, id);
  if (path.dirname(candidate) !== root) {
    throw new WarrenError(
      'PATH_UNSAFE',
      `task ID ${JSON.stringify(id)} would leave the workspace root; nothing was created.`,
    );
  }
  return candidate;
}

/**
 * Checks on every use that `recorded` (a canonical workspace path) still resolves to itself
 * and lies inside the canonical root. A path that now resolves elsewhere is refused, not followed.
 */
export function assertContained(root: string, recorded: string, what = 'workspace'): void {
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    throw new WarrenError('PATH_ESCAPE', `the workspace root ${root} no longer exists; nothing was changed.`, {
      hint: 'Run `warren scan` to see what state the workspaces are in.',
    });
  }
  if (realRoot !== root) {
    throw new WarrenError(
      'PATH_ESCAPE',
      `the workspace root ${root} now resolves to ${realRoot} (a symlink?); warren refuses to follow it. Nothing was changed.`,
      {
        hint: 'Put the real directory back at the root, or move the workspaces and run `warren scan`.',
        details: { root, realRoot },
      },
    );
  }
  let real: string | null = null;
  try {
    real = fs.realpathSync(recorded);
  } catch {
    real = null; // missing: callers decide what a missing workspace means
  }
  if (real !== null && real !== recorded) {
    throw new WarrenError(
      'PATH_ESCAPE',
      `${what} ${recorded} resolves to ${real}, not to itself (a symlink?); warren refuses to follow it. Nothing was changed.`,
      {
        hint: 'Remove the symlink and run `warren scan`.',
        details: { path: recorded, realPath: real },
      },
    );
  }
  if (!isStrictlyInside(root, recorded)) {
    throw new WarrenError(
      'PATH_ESCAPE',
      `${what} ${recorded} is outside the workspace root ${root}; nothing was changed.`,
    );
  }
}

/** What is at a workspace path: the folder, nothing, or something else in its place (a symlink, a file). */
export type Presence = { kind: 'folder' } | { kind: 'missing' } | { kind: 'replaced'; what: string };

/** Reads what is at `p` without following it. */
export function presenceAt(p: string): Presence {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return {
      kind: 'replaced',
      what: `something warren cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
  if (stat.isDirectory()) return { kind: 'folder' };
  if (stat.isSymbolicLink()) {
    let target = '?';
    try {
      target = fs.readlinkSync(p);
    } catch {
      // unreadable link: still a link
    }
    return { kind: 'replaced', what: `a symlink to ${target}` };
  }
  return { kind: 'replaced', what: stat.isFile() ? 'a file' : 'not a folder' };
}
