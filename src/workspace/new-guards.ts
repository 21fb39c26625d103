import { branchRecord } from './branch-records.js';
import { WarrenError } from '../errors.js';
import { commitsNotOn } from '../git/history.js';
import { isValidBaseRef, isValidBranchName, MAX_BASE_LENGTH } from '../git/refname.js';
import { currentBranch, otherRefTips } from '../git/refs.js';
import { lexists } from '../util/lexists.js';
import { ensureRoot, type ProjectContext } from './context.js';
import { branchFor } from './ids.js';
import { workspacePathFor } from './paths.js';

/** The guards of `new` and `restore`, read before anything is made: each refusal changes nothing. */

/** The task's branch, refused (exit 2) when git's branch-name rules would not take it. */
export function checkedBranch(type: string, id: string): string {
  const branch = branchFor(type, id);
  if (!isValidBranchName(branch)) {
    throw new WarrenError(
      'BRANCH_INVALID',
      `branch name ${JSON.stringify(branch)} breaks git's branch-name rules (git check-ref-format --branch). Nothing was created.`,
      { hint: 'Pick a task ID that makes a valid branch name.' },
    );
  }
  return branch;
}

export function assertNoTask(ctx: ProjectContext, id: string): void {
  if (ctx.store.getTask(ctx.key, id)) {
    throw new WarrenError('TASK_EXISTS', `task ${id} already exists in this repository; nothing was changed.`, {
      hint: `Use \`warren show ${id}\`, or remove it with \`warren rm ${id}\` first.`,
    });
  }
}

/**
 * Is there room for task `id` (under its lock, its row known to be absent): the workspace root a
 * real folder, nothing at the workspace path, and no branch of that name. Returns the path.
 */
export async function checkSlot(
  ctx: ProjectContext,
  id: string,
  branch: string,
  branchTaken: boolean,
): Promise<string> {
  await ensureRoot(ctx);
  const wsPath = workspacePathFor(ctx.root, id);
  if (lexists(wsPath)) {
    throw new WarrenError(
      'WORKSPACE_EXISTS',
      `${wsPath} already exists but no task ${id} is recorded; nothing was changed.`,
      {
        hint: 'Run `warren scan` to see what it is, and `warren gc` to clear what is safe to remove.',
      },
    );
  }
  if (branchTaken) {
    // Say whether it holds work: a branch left by something that died holds none, and is safe to delete.
    const own = await commitsNotOn(
      ctx.repo,
      `refs/heads/${branch}`,
      await otherRefTips(ctx.repo, [`refs/heads/${branch}`]),
    );
    throw new WarrenError(
      'BRANCH_EXISTS',
      `branch ${branch} already exists (${own.length === 0 ? 'it holds no commit of its own: everything on it is on other refs' : `it holds ${own.length} commit(s) on no other ref, newest ${own[0]?.sha.slice(0, 12)} ${own[0]?.subject}`}); nothing was created.`,
      {
        hint:
          own.length === 0 && branchRecord(ctx, branch) !== null
            ? `warren made it for a task ${id} that is gone: \`warren gc\` deletes it, then run \`warren new\` again.`
            : own.length === 0
              ? `If nothing else uses it, delete it (\`git branch -D ${branch}\`) and run \`warren new\` again, or pick another ID.`
              : `Pick another ID, or keep that work elsewhere first (e.g. \`git branch -m ${branch} ${branch}-old\`).`,
        details: { branch, ownCommits: own.length },
      },
    );
  }
  return wsPath;
}

/** `--base` is bad input (exit 2) unless it can name a branch, tag or commit: never handed to git otherwise. */
export function validateBase(base: string): void {
  if (isValidBaseRef(base)) return;
  const shown =
    base.length > 80 ? `${JSON.stringify(base.slice(0, 80))}… (${base.length} characters)` : JSON.stringify(base);
  throw new WarrenError(
    'BRANCH_INVALID',
    `base ${shown} is not a branch, tag or commit name (git's ref-name rules, at most ${MAX_BASE_LENGTH} characters); nothing was created.`,
    { hint: 'Pass --base with an existing branch, tag or commit.' },
  );
}

/** The branch checked out in the main worktree (null when detached), read when the repository was opened if it could be. */
export async function defaultBase(ctx: ProjectContext): Promise<string | null> {
  const main = ctx.repo.main;
  if (!main) return currentBranch(ctx.repo.root);
  return main.head?.startsWith('refs/heads/') ? main.head.slice('refs/heads/'.length) : null;
}
