import picomatch from 'picomatch';
import { WarrenError } from '../errors.js';
import type { NameStatus } from '../git/parse.js';

/**
 * The protected-path policy (`protected:` globs in warren.yaml): paths that never land. Pure:
 * validation and classification work on plain strings so they are tested without git.
 */

export interface ProtectedPolicy {
  globs: string[];
  matches(path: string): boolean;
}

/** Why a glob is refused; null when it is usable. */
export function globProblem(glob: string): string | null {
  if (glob.trim() === '') return 'is empty';
  if (glob.includes('\0')) return 'contains a NUL byte';
  if (glob.startsWith('/')) return 'is absolute; globs are relative to the repository root';
  if (glob.startsWith('!')) return 'is a negation; protected globs only add paths, they cannot carve exceptions';
  if (glob.includes('\\')) return 'contains a backslash; use / as the separator';
  if (glob.split('/').some((part) => part === '..')) return 'climbs out of the repository with ..';
  try {
    picomatch.makeRe(glob, { dot: true, strictBrackets: true });
  } catch (err) {
    return `does not compile (${err instanceof Error ? err.message : String(err)})`;
  }
  return null;
}

/** Compiles the globs; any unusable one refuses the whole policy (a half-read policy would let a file through). */
export function compilePolicy(globs: readonly string[], source: string): ProtectedPolicy {
  const problems = globs.flatMap((glob) => {
    const problem = globProblem(glob);
    return problem ? [`${JSON.stringify(glob)} ${problem}`] : [];
  });
  if (problems.length > 0) {
    throw new WarrenError(
      'PROTECTED_POLICY_INVALID',
      `the protected-path policy in ${source} is invalid: ${problems.join('; ')}. Nothing was changed.`,
      {
        hint: `Fix the protected: list in ${source} and run the command again.`,
        details: { problems },
      },
    );
  }
  // dot: a protected `.env*` must match dotfiles; a glob without a slash matches at any depth,
  // the way .gitignore reads it, so `*.local` protects `src/x.local` too.
  const matchers = globs.map((glob) => picomatch(glob, { dot: true, basename: !glob.includes('/') }));
  return {
    globs: [...globs],
    matches: (path) => matchers.some((m) => m(path)),
  };
}

/** One path the task touched, from `git diff --name-status --no-renames`. */
/** A path a task touched, with git's status letter (A, M, D, T). */
export type TouchedPath = NameStatus;

export interface Exclusion {
  path: string;
  /** `created`: left out; `changed`/`deleted`: the base's version is kept. */
  how: 'created' | 'changed' | 'deleted';
  /** A `protected:` glob matched it, or it is one of warren's provisioned paths (committed by hand). */
  why: 'protected' | 'provisioned';
}

/**
 * Which of the task's touched paths stay out of the landed commit, and how: those the policy
 * protects, and warren's own provisioned paths should an agent have committed one by hand (a
 * `share` symlink would land as a blob).
 */
export function classifyExclusions(
  touched: readonly TouchedPath[],
  policy: ProtectedPolicy,
  isProvisioned: (path: string) => boolean = () => false,
): Exclusion[] {
  return touched.flatMap((t): Exclusion[] => {
    const why = policy.matches(t.path) ? 'protected' : isProvisioned(t.path) ? 'provisioned' : null;
    if (why === null) return [];
    return [{ path: t.path, how: t.status === 'A' ? 'created' : t.status === 'D' ? 'deleted' : 'changed', why }];
  });
}
