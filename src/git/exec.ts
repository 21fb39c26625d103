import { OWNER_ENV, ownerTag } from '../system/left-running.js';
import { procStartTime } from '../util/lockfile.js';
import fs from 'node:fs';
import { WarrenError } from '../errors.js';
import { runBounded } from '../system/spawn.js';
import { classifyGitStderr } from './errors.js';
import { assertNoLinks } from './git-dir-links.js';

/**
 * The only place that spawns git, and only the modules beside it call it: the rest of warren
 * uses the typed operations in src/git. Argv arrays (never a shell), a fixed environment, its
 * own process group so that a timeout kills git and anything it started, and one error type.
 */

/** A linked worktree as warren made it, checked (src/git/worktree.ts's pinWorktree): git is given its directories. */
export interface Worktree {
  /** The workspace: the work tree. */
  path: string;
  /** Its private git directory, `<commonDir>/worktrees/<name>`. */
  gitDir: string;
  /** The repository's common git directory. */
  commonDir: string;
  /**
   * The main checkout's hooks, as git resolves them there: the ones `checkpoint` runs, inside the
   * task's boundary (src/land/commit-hooks.ts). git itself runs none in a pinned workspace.
   */
  hooksDir: string;
}

/** Where a git call runs: a folder of the user's own (the main checkout, a repository), or a pinned workspace. */
export type Where = string | Worktree;

export function folderOf(where: Where): string {
  return typeof where === 'string' ? where : where.path;
}

export interface GitOptions {
  /** A folder (the main checkout, a repository), or a pinned workspace (src/git/worktree.ts). */
  cwd: Where;
  /** Kill the whole process group after this long. */
  timeoutMs?: number;
  input?: string | Buffer;
  /** Return a non-zero result instead of throwing. */
  allowFailure?: boolean;
  env?: Record<string, string>;
  /** Run no hook (a call in a pinned workspace never runs one): for `git worktree add` of a workspace. */
  noHooks?: boolean;
}

export interface GitResult {
  argv: string[];
  exitCode: number;
  stdout: string;
  stdoutBuffer: Buffer;
  stderr: string;
}

export const GIT_DEFAULT_TIMEOUT_MS = 120_000;

/** Variables that would point git at another repository, index or work tree when warren runs inside a hook. */
const SCRUBBED = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
];

/** Which warren started a git (src/system/left-running.ts): a repair waits for a killed warren's git to finish. */
const OWNER = { [OWNER_ENV]: ownerTag(process.pid, procStartTime(process.pid)) };

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of SCRUBBED) delete env[key];
  return {
    ...env,
    ...OWNER,
    LC_ALL: 'C',
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_ASKPASS: 'true',
    ...extra,
  };
}

/**
 * No hook runs: git looks for `/dev/null/<hook>`, which cannot exist (git 2.39 and later take it
 * without a word). A hook run in a workspace runs on the host, as the user, in a folder the
 * agent writes: the main checkout's pre-commit that calls `npm run lint` would run the agent's
 * package.json script outside its sandbox. `checkpoint` runs the commit hooks itself, through
 * the task's boundary (src/land/commit-hooks.ts).
 */
const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null'];

/**
 * In a pinned workspace, git is given its directories (the `.git` file and `commondir` are not
 * read), runs no hook and no fsmonitor (a `config.worktree` that sets a key that runs a program
 * was refused when pinned), and first its git directory is checked for links git would write
 * through (git-dir-links.ts).
 */
function inWorktree(
  where: Where,
  args: readonly string[],
  noHooks: boolean,
): { args: string[]; env: Record<string, string> } {
  if (typeof where === 'string') return { args: noHooks ? [...NO_HOOKS, ...args] : [...args], env: {} };
  assertNoLinks(where.path, where.gitDir);
  return {
    args: ['-c', 'core.fsmonitor=false', ...NO_HOOKS, ...args],
    env: { GIT_DIR: where.gitDir, GIT_COMMON_DIR: where.commonDir, GIT_WORK_TREE: where.path },
  };
}

export async function git(rawArgs: readonly string[], options: GitOptions): Promise<GitResult> {
  const { args, env } = inWorktree(options.cwd, rawArgs, options.noHooks === true);
  const argv = ['git', ...args];
  const timeoutMs = options.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS;
  const cwd = folderOf(options.cwd);
  const run = await runBounded({
    argv,
    cwd,
    env: { ...gitEnv(options.env), ...env },
    stdin: options.input ?? 'ignore', // /dev/null: one pipe fewer to set up per call
    stdout: 'collect',
    stderr: 'collect',
    timeoutMs,
  });
  if (run.spawnError) {
    // ENOENT for the program itself, or for the folder it was to run in: say which.
    const missingDir = run.spawnError.code === 'ENOENT' && !isDir(cwd);
    throw missingDir
      ? new WarrenError(
          'GIT_FAILED',
          `${argv.join(' ')} could not run: its working folder ${cwd} does not exist; nothing was changed.`,
          {
            hint: 'Run `warren scan` to see which workspace is missing.',
            cause: run.spawnError,
            details: { argv, cwd },
          },
        )
      : new WarrenError('GIT_NOT_FOUND', `could not start git (${run.spawnError.message}); nothing was changed.`, {
          hint: 'Install git 2.38 or newer and make sure it is on PATH.',
          cause: run.spawnError,
        });
  }
  if (run.timedOut) {
    throw new WarrenError('GIT_TIMEOUT', `${argv.join(' ')} ran past ${timeoutMs}ms and was killed.`, {
      hint: 'Look for another process holding the repository, then try again.',
      details: { argv, signal: run.signal },
    });
  }
  const result: GitResult = {
    argv,
    exitCode: run.exitCode ?? 128,
    stdout: run.stdout.toString('utf8'),
    stdoutBuffer: run.stdout,
    stderr: run.stderr.toString('utf8'),
  };
  if (result.exitCode !== 0 && !options.allowFailure) throw gitError(result);
  return result;
}

export function gitError(result: GitResult, context?: string): WarrenError {
  const first =
    result.stderr
      .trim()
      .split('\n')
      .find((line) => line.trim() !== '') ?? `exit ${result.exitCode}`;
  return new WarrenError(
    classifyGitStderr(result.stderr),
    `${context ? `${context}: ` : ''}${result.argv.join(' ')} failed: ${first}`,
    {
      details: { argv: result.argv, exitCode: result.exitCode, stderr: result.stderr },
    },
  );
}

function isDir(dir: string): boolean {
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}
