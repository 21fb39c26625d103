import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import type { Worktree } from '../git/exec.js';
import { authorEnv, gitExecPath } from '../git/index-ops.js';
import { runInTask, type RunOutcome } from '../run/execute.js';
import { taskTmp } from '../run/task-tmp.js';
import type { Task } from '../state/types.js';
import { isInside } from '../util/paths.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * The main checkout's commit hooks, run by `checkpoint` the way `git commit` runs them — same
 * hooks, order, arguments and environment — but each through `runInTask`: inside the task's
 * sandbox, where `npm run lint` in a pre-commit runs the agent's package.json script as any
 * command of the task does. git itself runs no hook in a workspace (src/git/exec.ts). The
 * message file is in the task's TMPDIR (writable in its sandbox), read back by warren without
 * following a link.
 */

export type CommitHook = 'pre-commit' | 'prepare-commit-msg' | 'commit-msg' | 'post-commit';

/** The largest commit message read back from the hooks' file. */
export const MESSAGE_CAP = 1024 * 1024;

export interface CommitHooks {
  /** What git would export to the hooks, and the commit then made (its author and date): empty while no hook has run. */
  author: Record<string, string>;
  env: Record<string, string>;
  ctx: ProjectContext;
  task: Task;
  wt: Worktree;
  /** The hooks run so far and how long each took: a checkpoint's time is mostly theirs (issue 41). */
  ran: HookRun[];
}

/** A hook checkpoint ran, and its wall time. */
export interface HookRun {
  hook: CommitHook;
  ms: number;
}

const HOOKS: readonly CommitHook[] = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit'];

/**
 * The hooks' environment is read of git when there is a hook to run. With none there, nothing
 * is exported and git dates the commit itself, as it would (two git calls fewer a checkpoint); a
 * hook that appears meanwhile is given the environment when it runs, and the commit its author.
 */
export async function prepareCommitHooks(ctx: ProjectContext, task: Task, wt: Worktree): Promise<CommitHooks> {
  const h: CommitHooks = { author: {}, env: {}, ctx, task, wt, ran: [] };
  if (HOOKS.some((name) => fs.statSync(path.join(wt.hooksDir, name), { throwIfNoEntry: false })?.isFile()))
    await hookEnv(h);
  return h;
}

async function hookEnv(h: CommitHooks): Promise<Record<string, string>> {
  if (Object.keys(h.env).length > 0) return h.env;
  const { wt } = h;
  h.author = await authorEnv(wt);
  h.env = {
    ...h.author,
    GIT_DIR: wt.gitDir,
    GIT_INDEX_FILE: path.join(wt.gitDir, 'index'),
    GIT_EDITOR: ':',
    GIT_PREFIX: '',
    GIT_EXEC_PATH: await gitExecPath(),
  };
  return h.env;
}

/**
 * The hooks before the commit, as `git commit -F` runs them: pre-commit, prepare-commit-msg
 * (FILE message), commit-msg (FILE); `noVerify` skips pre-commit and commit-msg. Returns the
 * message as the hooks left it. A hook that fails refuses (COMMAND_FAILED) with what is
 * staged left staged.
 */
export async function runHooksBeforeCommit(h: CommitHooks, message: string, noVerify: boolean): Promise<string> {
  if (!noVerify) await mustPass(h, 'pre-commit', []);
  // No hook that edits the message: no file for one (and no TMPDIR made for nothing).
  const editors = ['prepare-commit-msg', ...(noVerify ? [] : ['commit-msg'])] as const;
  if (editors.every((name) => !fs.statSync(path.join(h.wt.hooksDir, name), { throwIfNoEntry: false })?.isFile()))
    return message;
  const file = writeMessageFile(h, message);
  try {
    await mustPass(h, 'prepare-commit-msg', [file, 'message']);
    if (!noVerify) await mustPass(h, 'commit-msg', [file]);
    return readMessageFile(h, file);
  } finally {
    try {
      fs.unlinkSync(file); // a link left there goes, never its target
    } catch {
      // gone already, or a folder made there: the task's TMPDIR is the task's to clean
    }
  }
}

/** post-commit, after the commit: as git, its outcome changes nothing; one that could not start is a warning. */
export async function runPostCommit(h: CommitHooks): Promise<string | null> {
  try {
    await runHook(h, 'post-commit', []);
    return null;
  } catch (err) {
    const warning = `the post-commit hook did not run after the checkpoint of ${h.task.id}: ${err instanceof Error ? err.message : String(err)}`;
    h.ctx.store.addEvent({
      project: h.ctx.key,
      taskId: h.task.id,
      kind: 'checkpoint.hook_not_run',
      level: 'warn',
      message: warning,
      data: { hook: 'post-commit' },
    });
    return warning;
  }
}

/**
 * The hook's file when git would run it: a file it may execute (a link is followed, as git does).
 * One that is there but not executable is skipped with an event, as git skips it with a hint.
 */
export function findHook(h: CommitHooks, name: CommitHook): string | null {
  const file = path.join(h.wt.hooksDir, name);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) return null;
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return file;
  } catch {
    h.ctx.store.addEvent({
      project: h.ctx.key,
      taskId: h.task.id,
      kind: 'checkpoint.hook_ignored',
      level: 'warn',
      message: `the ${name} hook ${file} was ignored because it is not executable (as git ignores it)`,
      data: { hook: name, file },
    });
    return null;
  }
}

/** Runs hook `name` in the task (null: none to run). */
async function runHook(h: CommitHooks, name: CommitHook, args: readonly string[]): Promise<RunOutcome | null> {
  const file = findHook(h, name);
  if (!file) return null;
  const env = await hookEnv(h);
  const { ctx, task, wt } = h;
  const started = Date.now();
  const outcome = await runInTask(ctx, task, {
    kind: 'hook',
    label: name,
    argv: [file, ...args],
    stdin: 'ignore',
    // git sends a hook's output to its stderr: warren's stdout stays its own (one JSON document with --json).
    output: { stdout: ctx.reporter.output.stderr, stderr: ctx.reporter.output.stderr },
    env,
    readable: hookFolders(wt.hooksDir, wt.commonDir, ctx.repo.root, [
      process.env.HOME ?? '/',
      ctx.store.home,
      ctx.root,
    ]),
  });
  h.ran.push({ hook: name, ms: Date.now() - started });
  return outcome;
}

async function mustPass(h: CommitHooks, name: CommitHook, args: readonly string[]): Promise<void> {
  const outcome = await runHook(h, name, args);
  if (!outcome || (outcome.exitCode === 0 && !outcome.timedOut && outcome.canceledBy === null)) return;
  throw hookRefused(h.task.id, name, outcome);
}

/**
 * What a sandboxed hook must see: its folder, and the folder that holds it when that is inside
 * the main checkout too (husky's `.husky/_/pre-commit` runs `.husky/pre-commit`). Nothing under
 * the common git directory (already readable), and nothing that would uncover what the sandbox
 * hides: a folder that is, or holds, one of `hidden` (home, WARREN_HOME, the workspace root) or
 * the main checkout itself is not bound, and a hook there is not found inside. Pure.
 */
export function hookFolders(
  hooksDir: string,
  commonDir: string,
  mainRoot: string,
  hidden: readonly string[],
): string[] {
  if (isInside(commonDir, hooksDir)) return [];
  const parent = path.dirname(hooksDir);
  const folder = isInside(mainRoot, parent) && parent !== mainRoot ? parent : hooksDir;
  if (folder === path.dirname(folder) || [...hidden, mainRoot].some((p) => isInside(folder, p))) return [];
  return [folder];
}

function hookRefused(id: string, name: CommitHook, outcome: RunOutcome): WarrenError {
  const tail = logTail(outcome.log);
  const readOnly = /Read-only file system|EROFS|insufficient permission for adding an object/i.test(tail);
  const why = outcome.reason ?? `exit ${outcome.exitCode ?? outcome.signal ?? '?'}`;
  const said = tail.trim().split('\n').slice(-5).join('\n').trim();
  const noVerify = `\`warren checkpoint ${id} --no-verify\``;
  return new WarrenError(
    'COMMAND_FAILED',
    readOnly
      ? `the ${name} hook failed in task ${id}'s sandbox (${why}): it wrote to git's object store or refs, which the sandbox keeps read-only (a hook that stages or stashes, as lint-staged's \`git add\` does, cannot run there). Nothing was committed; the changes are staged in the workspace, and no file was lost.`
      : `the ${name} hook refused the checkpoint of ${id} (${why})${said ? `: ${said}` : ''}. Nothing was committed; the changes are staged in the workspace, and no file was lost.`,
    {
      hint: readOnly
        ? `Run the hook's checks as a command of the task (\`warren exec ${id} -- …\`), fix what they report, then ${noVerify}, which skips pre-commit and commit-msg. The hook's output: ${outcome.log}.`
        : `Fix what the hook reports (its output: ${outcome.log}), then run \`warren checkpoint ${id}\` again. A hook that cannot run in a worktree (one that reads .git as a folder fails with ENOTDIR: in a worktree .git is a file) is skipped by ${noVerify}.`,
      details: { hook: name, exitCode: outcome.exitCode, reason: outcome.reason, log: outcome.log, readOnly },
    },
  );
}

/** The message for prepare-commit-msg and commit-msg: a new file of warren's in the task's TMPDIR. */
function writeMessageFile(h: CommitHooks, message: string): string {
  const file = path.join(
    taskTmp(h.ctx.store, h.ctx.key, h.task.id),
    `COMMIT_EDITMSG-${randomBytes(6).toString('hex')}`,
  );
  fs.writeFileSync(file, `${message}\n`, { flag: 'wx', mode: 0o600 }); // O_EXCL: never through a link
  return file;
}

/**
 * The message as the hooks left it, read without following a link (O_NOFOLLOW), only from a
 * regular file of at most MESSAGE_CAP bytes: what ran in the sandbox could have replaced it
 * with a link to a file of the host's, whose content would become the commit's message.
 */
export function readMessageFile(h: Pick<CommitHooks, 'task'>, file: string): string {
  const refuse = (what: string) =>
    new WarrenError(
      'COMMAND_FAILED',
      `the commit hooks left the message file ${file} ${what}; warren does not read it. Nothing was committed; the changes are staged in the workspace, and no file was lost.`,
      {
        hint: `Something the hooks ran replaced it. Look at the hooks' logs (\`warren show ${h.task.id}\`), then run \`warren checkpoint ${h.task.id}\` again.`,
        details: { file },
      },
    );
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse(code === 'ELOOP' ? 'a link' : code === 'ENOENT' ? 'deleted' : `unreadable (${code})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw refuse('not a regular file');
    if (stat.size > MESSAGE_CAP) throw refuse(`at ${stat.size} bytes, over ${MESSAGE_CAP}`);
    const buf = Buffer.alloc(stat.size);
    const read = fs.readSync(fd, buf, 0, stat.size, 0);
    return buf.subarray(0, read).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The last 4 KiB of a log. */
function logTail(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, 4096));
      fs.readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}
