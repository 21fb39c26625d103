import { spawn } from 'node:child_process';
import { WarrenError } from '../errors.js';
import { classifyGitStderr } from './errors.js';

/**
 * The only place that spawns git. Argv arrays (never a shell), a fixed environment, its own
 * process group so that a timeout kills git and anything it started, and one error type.
 */

export interface GitOptions {
  cwd: string;
  /** Kill the whole process group after this long. */
  timeoutMs?: number;
  input?: string | Buffer;
  /** Return a non-zero result instead of throwing. */
  allowFailure?: boolean;
  env?: Record<string, string>;
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
const SCRUBBED = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX'];

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of SCRUBBED) delete env[key];
  return {
    ...env,
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

export function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const argv = ['git', ...args];
  const timeoutMs = options.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdin.on('error', () => undefined);
    child.on('error', (cause) => {
      clearTimeout(timer);
      reject(
        new WarrenError('GIT_NOT_FOUND', `could not start git (${cause.message}); nothing was changed.`, {
          hint: 'Install git 2.38 or newer and make sure it is on PATH.',
          cause,
        }),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBuffer = Buffer.concat(out);
      const result: GitResult = {
        argv,
        exitCode: code ?? 128,
        stdout: stdoutBuffer.toString('utf8'),
        stdoutBuffer,
        stderr: Buffer.concat(err).toString('utf8'),
      };
      if (timedOut) {
        reject(
          new WarrenError('GIT_TIMEOUT', `${argv.join(' ')} ran past ${timeoutMs}ms and was killed.`, {
            hint: 'Look for another process holding the repository, then try again.',
            details: { argv, signal },
          }),
        );
        return;
      }
      if (result.exitCode !== 0 && !options.allowFailure) {
        reject(gitError(result));
        return;
      }
      resolve(result);
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

export function gitError(result: GitResult, context?: string): WarrenError {
  const first = result.stderr.trim().split('\n').find((line) => line.trim() !== '') ?? `exit ${result.exitCode}`;
  return new WarrenError(classifyGitStderr(result.stderr), `${context ? `${context}: ` : ''}${result.argv.join(' ')} failed: ${first}`, {
    details: { argv: result.argv, exitCode: result.exitCode, stderr: result.stderr },
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}
