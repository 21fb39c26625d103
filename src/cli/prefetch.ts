import path from 'node:path';
import { isValidBaseRef, isValidBranchName } from '../git/refname.js';
import { prefetchBranchFacts, startBranchFacts } from '../git/refs.js';
import { guessMainBranch, prefetchRepository } from '../git/repo.js';
import { newTaskGuess, repositoryGuess } from './startup.js';

/**
 * Starts the read-only git calls a command will make first, before its code has loaded (the
 * command line's entry, src/cli/bin.ts) or before its go (a process of `warren warm`,
 * src/cli/warm-worker.ts): finding the repository, and for `warren new` its base's and
 * branch's facts — beside it when the base is known (`--base`, or guessed from the files),
 * else once git has named it (src/workspace/create.ts takes those only when they let the task
 * go ahead). Each answer is taken by the call it stands for, only for exactly what
 * that call asks; an answer nobody takes changes and costs nothing but its git process.
 * Resolves when git has answered every call it started (the command line does not wait).
 */
export async function prefetchFor(args: readonly string[], cwd: string): Promise<void> {
  const dir = repositoryGuess(args, cwd);
  if (dir === null) return;
  const opened = prefetchRepository(dir);
  const task = newTaskGuess(args);
  if (task === null || !isValidBranchName(task.branch) || (task.base !== undefined && !isValidBaseRef(task.base))) return;
  // The base is --base, or the main worktree's branch: guessed from the files, the branches' read
  // starts beside the repository's instead of after it (in a warm process, from the job to the
  // worktree's add: 40 → 36 ms, medians of 9; on 2 cores the two git processes share the CPU).
  const guess = task.base ?? guessMainBranch(path.resolve(cwd, dir));
  const early = guess !== null && isValidBaseRef(guess) ? { base: guess, read: startBranchFacts(dir, [guess, task.branch]) } : null;
  await opened.then((repo) => {
    const head = repo?.main?.head;
    const base = task.base ?? (head?.startsWith('refs/heads/') ? head.slice('refs/heads/'.length) : undefined);
    if (repo === null || base === undefined) return undefined;
    // git's answer names the base: the early read counts only if it read that one.
    return prefetchBranchFacts(repo, [base, task.branch], early?.base === base ? early.read : undefined);
  });
}
