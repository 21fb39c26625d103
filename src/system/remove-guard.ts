import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarrenError } from '../errors.js';

/**
 * What removeTree refuses to delete, whoever calls it (rimraf's path-arg guard, in the lowest
 * layer): a relative path, one with a NUL byte, `/`, a home directory or a folder that holds
 * this user's, and — when the caller names the root it works in — anything not inside it. The
 * threat: a path joined from a hostile name or a damaged record (`..`, an empty id, a link
 * swapped in above the target) that a caller's own containment check missed.
 */

export interface RemoveGuard {
  /** The folder the tree must be strictly inside (a workspace root, warren's home, the temp dir). */
  inside?: string;
}

/** The facts the decision reads, gathered by `unsafeRemoval`: pure data, so the decision is tested on plain strings. */
export interface RemovalFacts {
  /** The path as given. */
  given: string;
  /** Where the path leads with its parent's links resolved (the target itself is never followed). */
  real: string;
  /** The current user's home ($HOME and the password database's), resolved. */
  ownHomes: readonly string[];
  /** Every home in /etc/passwd. */
  homes: readonly string[];
  /** The guard's root, resolved, or null. */
  inside: string | null;
}

/** Why `facts` must not be deleted, or null when it may. */
export function removalRefusal(facts: RemovalFacts): string | null {
  const { given, real, ownHomes, homes, inside } = facts;
  if (given.includes('\0')) return 'it holds a NUL byte';
  if (!path.isAbsolute(given)) return 'it is not an absolute path';
  for (const p of new Set([path.resolve(given), real])) {
    if (p === path.parse(p).root) return 'it is the root of the file system';
    if (homes.includes(p) || ownHomes.includes(p)) return 'it is a home directory';
    if (ownHomes.some((h) => isInside(h, p))) return `it holds your home directory`;
    if (inside !== null && !isInside(p, inside)) return `it is not inside ${inside}`;
  }
  return null;
}

/** Whether `p` is strictly inside `dir`. */
function isInside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Throws the refusal when `target` must not be deleted (a WarrenError: nothing was deleted). */
export function assertRemovable(target: string, guard: RemoveGuard = {}): void {
  const facts = gatherFacts(target, guard);
  const why = removalRefusal(facts);
  if (why === null) return;
  throw new WarrenError(
    guard.inside !== undefined && why.startsWith('it is not inside') ? 'PATH_ESCAPE' : 'PATH_UNSAFE',
    `warren will not delete ${JSON.stringify(target)}: ${why}. Nothing was deleted.`,
    { hint: 'This is a bug in warren, or a record of it was damaged; run `warren scan` to see what it knows of.' },
  );
}

function gatherFacts(target: string, guard: RemoveGuard): RemovalFacts {
  const resolved = target.includes('\0') || !path.isAbsolute(target) ? target : path.resolve(target);
  return {
    given: target,
    real: resolved.includes('\0') || !path.isAbsolute(resolved) ? resolved : realParent(resolved),
    ownHomes: [...new Set([process.env.HOME, os.homedir()].filter((h): h is string => !!h && path.isAbsolute(h)))].map(
      (h) => realOr(path.resolve(h)),
    ),
    homes: passwdHomes(),
    inside: guard.inside === undefined ? null : realOr(path.resolve(guard.inside)),
  };
}

/** `p` with its parent's links resolved, as far as the parent exists; the last name kept as it is. */
function realParent(p: string): string {
  const parent = path.dirname(p);
  return parent === p ? p : path.join(realOr(parent), path.basename(p));
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

let cachedHomes: readonly string[] | null = null;

/** The homes of /etc/passwd, read once (none when it cannot be read). */
function passwdHomes(): readonly string[] {
  if (cachedHomes) return cachedHomes;
  let text = '';
  try {
    text = fs.readFileSync('/etc/passwd', 'utf8');
  } catch {
    // no password database: $HOME alone
  }
  cachedHomes = text
    .split('\n')
    .map((line) => line.split(':')[5] ?? '')
    .filter((h) => path.isAbsolute(h))
    .map((h) => path.resolve(h));
  return cachedHomes;
}
