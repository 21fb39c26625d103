import { isValidBaseRef, isValidBranchName } from '../git/refname.js';
import { prefetchBranchFacts } from '../git/refs.js';
import { prefetchRepository } from '../git/repo.js';
import { newTaskGuess, repositoryGuess } from './startup.js';

/**
 * Starts the read-only git calls a command will make first, before its code has loaded (the
 * command line's entry, src/cli/bin.ts) or before its go (a process of `warren warm`,
 * src/cli/warm-worker.ts): finding the repository, and for `warren new` — once the repository
 * is found — its base's and branch's facts (src/workspace/create.ts takes those only when they
 * let the task go ahead). Each answer is taken by the call it stands for, only for exactly what
 * that call asks; an answer nobody takes changes and costs nothing but its git process.
 * Resolves when git has answered every call it started (the command line does not wait).
 */
export async function prefetchFor(args: readonly string[], cwd: string): Promise<void> {
  const dir = repositoryGuess(args, cwd);
  if (dir === null) return;
  const opened = prefetchRepository(dir);
  const task = newTaskGuess(args);
  if (task === null || !isValidBranchName(task.branch) || (task.base !== undefined && !isValidBaseRef(task.base))) return;
  await opened.then((repo) => {
    // Without --base, the base is the main worktree's branch, known when the repository was opened there.
    const head = repo?.main?.head;
    const base = task.base ?? (head?.startsWith('refs/heads/') ? head.slice('refs/heads/'.length) : undefined);
    return repo !== null && base !== undefined ? prefetchBranchFacts(repo, [base, task.branch]) : undefined;
  });
}
