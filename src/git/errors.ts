import type { ErrorCode } from '../errors.js';

/**
 * The one table that reads git's stderr into a stable code. Order matters: the first pattern
 * that matches wins. git's messages are stable under LC_ALL=C, which the seam always sets.
 */
export const GIT_STDERR_CODES = [
  [/Unable to create '.*\.lock': File exists|could not lock|cannot lock ref|index\.lock/i, 'GIT_LOCKED'],
  // "a branch named 'x' already exists" — and only that: a path git finds in the way says "'<path>' already exists".
  [/a branch named '.*' already exists/i, 'GIT_BRANCH_EXISTS'],
  [/is already (checked out|used by worktree)|already registered worktree/i, 'GIT_WORKTREE_EXISTS'],
  [/'.*' already exists/i, 'GIT_PATH_EXISTS'],
  [/contains modified or untracked files|has changes not staged|would be overwritten/i, 'GIT_DIRTY'],
  [
    /not a valid (object name|ref)|unknown revision|invalid reference|bad revision|couldn't find remote ref|not a commit/i,
    'GIT_UNKNOWN_REF',
  ],
] as const satisfies readonly (readonly [RegExp, ErrorCode])[];

export function classifyGitStderr(stderr: string): ErrorCode {
  for (const [pattern, code] of GIT_STDERR_CODES) {
    if (pattern.test(stderr)) return code;
  }
  return 'GIT_FAILED';
}

/** Failures worth one more try: another git process held a lock, or read a half-written worktree. */
export function isTransientGitFailure(stderr: string): boolean {
  return /Unable to create '.*\.lock': File exists|could not lock|cannot lock ref|failed to read .*commondir|unable to read .*gitdir|is not a valid path/i.test(
    stderr,
  );
}
