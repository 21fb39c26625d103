import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** Test helpers: real git in temporary repositories, each test with its own WARREN_HOME. */

export const BIN = path.resolve(import.meta.dirname, '../../bin/warren.js');

export function tmpDir(prefix = 'warren-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  onTestFinished(() => {
    try {
      execFileSync('chattr', ['-R', '-i', dir], { stdio: 'ignore' });
    } catch {
      // chattr missing or nothing immutable
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export interface TestRepo {
  root: string;
  home: string;
  /** Runs the real CLI (bin/warren.js) in the repository with this test's WARREN_HOME. */
  warren(...args: string[]): Promise<CliResult>;
  /** Same, and parses --json stdout. */
  warrenJson<T = Record<string, unknown>>(...args: string[]): Promise<CliResult & { json: T }>;
  git(...args: string[]): string;
  write(rel: string, content: string): void;
  commit(message: string): string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A repository on `main` with user set, gc.auto=0, gpgsign off, and one commit. */
export function makeRepo(options: { name?: string; files?: Record<string, string> } = {}): TestRepo {
  const base = tmpDir();
  const root = path.join(base, options.name ?? 'repo');
  const home = path.join(base, 'warren-home');
  fs.mkdirSync(root, { recursive: true });
  gitIn(root, 'init', '-q', '-b', 'main');
  for (const [key, value] of [
    ['user.name', 'Warren Test'],
    ['user.email', 'test@example.invalid'],
    ['gc.auto', '0'],
    ['commit.gpgsign', 'false'],
  ] as const) {
    gitIn(root, 'config', key, value);
  }
  const files = options.files ?? { 'README.md': '# test\n' };
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '-q', '-m', 'initial');
  const repo: TestRepo = {
    root,
    home,
    warren: (...args) => runCli(args, { cwd: root, home }),
    async warrenJson<T>(...args: string[]) {
      const result = await runCli(['--json', ...args], { cwd: root, home });
      let json: T;
      try {
        json = JSON.parse(result.stdout) as T;
      } catch {
        throw new Error(`not JSON (exit ${result.code}): ${result.stdout}\n${result.stderr}`);
      }
      return { ...result, json };
    },
    git: (...args) => gitIn(root, ...args),
    write(rel, content) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), content);
    },
    commit(message) {
      gitIn(root, 'add', '-A');
      gitIn(root, 'commit', '-q', '-m', message);
      return gitIn(root, 'rev-parse', 'HEAD');
    },
  };
  return repo;
}

export function runCli(args: readonly string[], opts: { cwd: string; home: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, WARREN_HOME: opts.home, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Snapshot of every ref and the worktree list: compare before and after a refusal. */
export function refsAndWorktrees(root: string): string {
  return `${gitIn(root, 'for-each-ref', '--format=%(refname) %(objectname)')}\n---\n${gitIn(root, 'worktree', 'list', '--porcelain')}`;
}
