import { git, type GitResult } from './exec.js';
import type { Repository } from './repo.js';

/**
 * git's answers about objects named by their full ids, remembered for the life of the process.
 *
 * An object id names its content, and a commit's id its whole history: what is the tree of
 * commit X, the merge base of X and Y, the paths that differ between them, the file F in X, is
 * the same answer every time it is asked. The merge queue asks the same of the same commits
 * again and again (a land plans when it joins and again when its batch is integrated, and a
 * bisection integrates the same tasks onto the same tips in round after round), and every
 * answer was a process. Only the text git printed is kept: every caller parses it again, with
 * the seam's own parsers.
 *
 * Names that can move (a branch, HEAD, `main~1`) are always asked of git. Answers that a later
 * state of the repository could change are not kept: a failure (the object is missing, git
 * could not run) is asked again next time. What remains assumes the repository's history does
 * not change under a full id, which only `git replace` (or grafts) made while warren runs would do.
 * And an answer is kept a minute at most: an object that `git gc --prune=now` removed meanwhile
 * (a squash nothing refers to) is then no more a risk than it is between two git calls, and a
 * long `warren serve` does not answer from an old memory.
 */

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** At most this many answers; the least recently used go first. */
const KEEP = 2048;
const KEEP_MS = 60_000;

const answers = new Map<string, { answer: Promise<GitResult>; at: number }>();

export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}

export interface ObjectQuestion {
  /** Every revision the question names: it is remembered only when each is a full object id. */
  ids: readonly string[];
  input?: string;
  /** Return a non-zero result instead of throwing (as `git`'s own option). */
  allowFailure?: boolean;
  /** Which results are facts of the objects and may be kept (by default, a zero exit). */
  keep?: (result: GitResult) => boolean;
}

/** `git args` in the repository's main worktree, answered from memory when it was asked before about the same objects. */
export function askAboutObjects(
  repo: Repository,
  args: readonly string[],
  question: ObjectQuestion,
): Promise<GitResult> {
  const options = { cwd: repo.root, allowFailure: question.allowFailure === true, ...inputOf(question) };
  if (question.ids.length === 0 || !question.ids.every(isObjectId)) return git(args, options);
  const key = [repo.commonDir, options.allowFailure, ...args, question.input ?? ''].join('\0');
  const known = answers.get(key);
  answers.delete(key);
  if (known && Date.now() - known.at < KEEP_MS) {
    answers.set(key, known);
    return known.answer;
  }
  const keep = question.keep ?? ((r: GitResult) => r.exitCode === 0);
  const answer = git(args, options).then(
    (result) => {
      if (!keep(result)) forget(key, answer);
      return result;
    },
    (err: unknown) => {
      forget(key, answer);
      throw err;
    },
  );
  answers.set(key, { answer, at: Date.now() });
  if (answers.size > KEEP) {
    const oldest = answers.keys().next().value;
    if (oldest !== undefined) answers.delete(oldest);
  }
  return answer;
}

function inputOf(question: ObjectQuestion): { input?: string } {
  return question.input === undefined ? {} : { input: question.input };
}

function forget(key: string, answer: Promise<GitResult>): void {
  if (answers.get(key)?.answer === answer) answers.delete(key);
}
