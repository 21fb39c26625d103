import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { commitsNotOn } from '../git/history.js';
import type { WorktreeEntry } from '../git/parse.js';
import { otherRefTips } from '../git/refs.js';
import type { Repository } from '../git/repo.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from './context.js';
import { readMeta } from './meta.js';

/**
 * Ownership is recorded twice (the metadata file beside the workspace and the database row)
 * and git has its own list. Before warren adopts, reuses or removes a workspace all three
 * must agree, and the folder must be that worktree, on its branch, with no git operation half
 * done; otherwise it refuses, names the state, and says what to do that keeps the work.
 */
export async function checkOwnership(
  ctx: ProjectContext,
  task: Task,
  worktrees: readonly WorktreeEntry[],
): Promise<WorktreeEntry> {
  const problems: string[] = [];
  const meta = readMeta(task.path);
  if (!meta) {
    problems.push(`the metadata file ${task.path}.warren.json is missing or unreadable`);
  } else {
    if (meta.project !== ctx.key)
      problems.push(`the metadata file names project ${meta.project}, the database ${ctx.key}`);
    if (meta.taskId !== task.id) problems.push(`the metadata file names task ${meta.taskId}, the database ${task.id}`);
    if (meta.branch !== task.branch)
      problems.push(`the metadata file names branch ${meta.branch}, the database ${task.branch}`);
    if (meta.path !== task.path) problems.push(`the metadata file names path ${meta.path}, the database ${task.path}`);
  }
  const entry = worktrees.find((wt) => wt.path === task.path);
  if (!entry) problems.push(`git worktree list does not list ${task.path}`);
  if (problems.length > 0 || !entry) {
    throw new WarrenError(
      'OWNERSHIP_MISMATCH',
      `task ${task.id}'s records disagree: ${problems.join('; ')}. Nothing was changed.`,
      {
        hint: "Run `warren scan` to see the workspace, and fix or remove it by hand if it is not warren's.",
        details: { problems },
      },
    );
  }
  await assertWorkspaceState(ctx.repo, task);
  return entry;
}

/** What is wrong with a workspace folder as a worktree of its task, in git's terms. */
export type WorkspaceProblem =
  | { kind: 'no-git-file' }
  | { kind: 'other-repository'; gitDir: string }
  | { kind: 'broken-git-file'; detail: string }
  | { kind: 'in-progress'; operation: GitOperation; branch: string | null }
  | { kind: 'detached'; head: string; onlyHere: { sha: string; subject: string }[] }
  | { kind: 'other-branch'; branch: string };

export type GitOperation = 'rebase' | 'am' | 'merge' | 'cherry-pick' | 'revert' | 'bisect';

/** The files git keeps in a worktree's own git directory while an operation is half done, in the order git's own status checks them. */
const IN_PROGRESS: readonly { file: string; operation: GitOperation }[] = [
  { file: 'rebase-merge', operation: 'rebase' },
  { file: 'rebase-apply/applying', operation: 'am' },
  { file: 'rebase-apply', operation: 'rebase' },
  { file: 'MERGE_HEAD', operation: 'merge' },
  { file: 'CHERRY_PICK_HEAD', operation: 'cherry-pick' },
  { file: 'REVERT_HEAD', operation: 'revert' },
  { file: 'BISECT_LOG', operation: 'bisect' },
];

export interface InspectOptions {
  /** Operations that are fine here: `checkpoint` concludes a merge with its commit. */
  allow?: readonly GitOperation[];
}

/**
 * Reads the folder as git would, without trusting it: its `.git` must be a file that points at
 * this repository's record of this very path; then no operation may be half done, and HEAD
 * must be the task's branch. Reads files only (the worktree's git directory is located and
 * checked first), plus one git call for a detached HEAD's commits. Null when all is well.
 */
export async function inspectWorkspace(
  repo: Repository,
  task: Task,
  options: InspectOptions = {},
): Promise<WorkspaceProblem | null> {
  const located = locateGitDir(repo, task.path);
  if ('kind' in located) return located;
  const { gitDir } = located;
  for (const { file, operation } of IN_PROGRESS) {
    if (!fs.existsSync(path.join(gitDir, file)) || options.allow?.includes(operation)) continue;
    return { kind: 'in-progress', operation, branch: rebasedBranch(gitDir) };
  }
  const head = readSmall(path.join(gitDir, 'HEAD'))?.trim() ?? '';
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (ref !== undefined)
    return ref === `refs/heads/${task.branch}`
      ? null
      : { kind: 'other-branch', branch: ref.replace(/^refs\/heads\//, '') };
  if (!/^[0-9a-f]{40,64}$/.test(head))
    return {
      kind: 'broken-git-file',
      detail: `its HEAD (${path.join(gitDir, 'HEAD')}) names neither a branch nor a commit`,
    };
  const onlyHere = await commitsNotOn(repo, head, await otherRefTips(repo, []));
  return { kind: 'detached', head, onlyHere };
}

/** The worktree's own git directory, or why the folder is not this repository's worktree at this path. */
function locateGitDir(repo: Repository, wsPath: string): { gitDir: string } | WorkspaceProblem {
  const dotGit = path.join(wsPath, '.git');
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dotGit);
  } catch {
    return { kind: 'no-git-file' };
  }
  if (stat.isDirectory()) return { kind: 'other-repository', gitDir: dotGit };
  const text = stat.isFile() ? readSmall(dotGit) : null;
  const pointer = text === null ? null : /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  if (!pointer)
    return {
      kind: 'broken-git-file',
      detail: `${dotGit} does not say "gitdir: PATH"${text === null ? '' : ` (it reads ${JSON.stringify(text.slice(0, 60))})`}`,
    };
  let gitDir: string;
  try {
    gitDir = fs.realpathSync(path.resolve(wsPath, pointer));
  } catch {
    return { kind: 'broken-git-file', detail: `${dotGit} points to ${pointer}, which does not exist` };
  }
  if (gitDir === realpathOrNull(repo.commonDir)) {
    return {
      kind: 'broken-git-file',
      detail: `${dotGit} points to the main checkout's git directory ${gitDir}, not to git's record of this worktree`,
    };
  }
  const records = realpathOrNull(path.join(repo.commonDir, 'worktrees'));
  if (records === null || path.dirname(gitDir) !== records) {
    // A git directory of some other repository (its own `commondir`), or not one at all.
    return fs.existsSync(path.join(gitDir, 'commondir')) || fs.existsSync(path.join(gitDir, 'HEAD'))
      ? { kind: 'other-repository', gitDir }
      : { kind: 'broken-git-file', detail: `${dotGit} points to ${gitDir}, which is not a git directory` };
  }
  // The record must point back at this path: a .git copied from another workspace points at that one's record.
  const back = readSmall(path.join(gitDir, 'gitdir'))?.trim();
  if (back === undefined || path.resolve(gitDir, back) !== dotGit) {
    return {
      kind: 'broken-git-file',
      detail: `${dotGit} points to git's record of ${back ? path.dirname(back) : 'another worktree'}, not of ${wsPath}`,
    };
  }
  return { gitDir };
}

/** Refuses with a message that names the state and a hint that keeps the work. */
export async function assertWorkspaceState(repo: Repository, task: Task, options: InspectOptions = {}): Promise<void> {
  const problem = await inspectWorkspace(repo, task, options);
  if (problem) throw workspaceError(repo, task, problem);
}

export function workspaceError(repo: Repository, task: Task, problem: WorkspaceProblem): WarrenError {
  const ws = task.path;
  const nothing = 'Nothing was changed.';
  const repair = `In the main checkout, run \`git -C ${repo.root} worktree repair ${ws}\`: it rewrites the link and touches none of your files. Then run the command again.`;
  switch (problem.kind) {
    case 'no-git-file':
      return new WarrenError(
        'OWNERSHIP_MISMATCH',
        `task ${task.id}'s workspace ${ws} has no .git file, so git cannot open it as a worktree (its files are still there). ${nothing}`,
        {
          hint: repair,
          details: { state: problem.kind },
        },
      );
    case 'broken-git-file':
      return new WarrenError(
        'OWNERSHIP_MISMATCH',
        `task ${task.id}'s workspace ${ws} has a broken .git file: ${problem.detail}. git cannot open it, but its files are still there. ${nothing}`,
        {
          hint: repair,
          details: { state: problem.kind },
        },
      );
    case 'other-repository':
      return new WarrenError(
        'OWNERSHIP_MISMATCH',
        `${ws} holds another repository (its git directory is ${problem.gitDir}), not task ${task.id}'s worktree; warren leaves it alone. ${nothing}`,
        {
          hint: `That folder is not warren's: move it somewhere else (it holds its own work), then put task ${task.id}'s workspace back at ${ws}, or run \`warren rm ${task.id}\` to forget the workspace (branch ${task.branch} is kept).`,
          details: { state: problem.kind, gitDir: problem.gitDir },
        },
      );
    case 'in-progress': {
      const { operation } = problem;
      const of = problem.branch ? ` of ${problem.branch}` : '';
      const finish = FINISH[operation].replaceAll('WS', ws);
      return new WarrenError(
        'TASK_STATE',
        `a ${operation}${of} is in progress in task ${task.id}'s workspace ${ws}; warren will not act on a half-done ${operation}. ${nothing}`,
        {
          hint: `Finish it (${finish}), then run the command again.`,
          details: { state: problem.kind, operation, branch: problem.branch },
        },
      );
    }
    case 'detached': {
      const at = problem.head.slice(0, 12);
      if (problem.onlyHere.length === 0) {
        return new WarrenError(
          'TASK_STATE',
          `task ${task.id}'s workspace ${ws} has a detached HEAD at ${at}, not branch ${task.branch} (every commit there is also on a branch or tag). ${nothing}`,
          {
            hint: `Switch back: \`git -C ${ws} switch ${task.branch}\` (commit or stash first), then run the command again.`,
            details: { state: problem.kind, head: problem.head, onlyHere: [] },
          },
        );
      }
      const shown = problem.onlyHere
        .slice(0, 10)
        .map((c) => `${c.sha.slice(0, 12)} ${c.subject}`)
        .join('; ');
      const save = `warren-save-${task.id}`;
      return new WarrenError(
        'TASK_STATE',
        `task ${task.id}'s workspace ${ws} has a detached HEAD at ${at} with ${problem.onlyHere.length} commit(s) on no branch or tag: ${shown}${problem.onlyHere.length > 10 ? '; …' : ''}. Switching away or removing the workspace would leave them behind. ${nothing}`,
        {
          hint: `Keep them: \`git -C ${ws} branch ${save} HEAD\` puts a branch on them; then \`git -C ${ws} switch ${task.branch}\` and \`git -C ${ws} merge ${save}\` (or cherry-pick) brings them onto the task's branch. Then run the command again.`,
          details: { state: problem.kind, head: problem.head, onlyHere: problem.onlyHere },
        },
      );
    }
    case 'other-branch':
      return new WarrenError(
        'TASK_STATE',
        `task ${task.id}'s workspace ${ws} has branch ${problem.branch} checked out, not ${task.branch}. ${nothing}`,
        {
          hint: `Run \`git -C ${ws} switch ${task.branch}\` (commit or stash first; ${problem.branch} keeps its commits), then try again.`,
          details: { state: problem.kind, branch: problem.branch },
        },
      );
  }
}

/** How to finish each operation, keeping what it did (`--continue`), or undo it. */
const FINISH: Record<GitOperation, string> = {
  rebase:
    '`git -C WS rebase --continue` after resolving, or `git -C WS rebase --abort` to put the branch back as it was before the rebase',
  am: '`git -C WS am --continue`, or `git -C WS am --abort`',
  merge: 'resolve and `git -C WS commit`, or `git -C WS merge --abort`',
  'cherry-pick': '`git -C WS cherry-pick --continue`, or `git -C WS cherry-pick --abort`',
  revert: '`git -C WS revert --continue`, or `git -C WS revert --abort`',
  bisect: '`git -C WS bisect reset` returns to the branch',
};

/** The branch a rebase was started on (`refs/heads/…` in its head-name), or null. */
function rebasedBranch(gitDir: string): string | null {
  for (const dir of ['rebase-merge', 'rebase-apply']) {
    const name = readSmall(path.join(gitDir, dir, 'head-name'))?.trim();
    if (name?.startsWith('refs/heads/')) return name.slice('refs/heads/'.length);
  }
  return null;
}

/** A small git bookkeeping file, or null when it is missing, unreadable or not small. */
function readSmall(file: string): string | null {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > 64 * 1024) return null;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function realpathOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
