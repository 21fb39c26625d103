import { execFileSync, spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { commandsHash, trustedSet } from '../../src/config/trust.js';
import { trustedFiles } from '../../src/trust/trust.js';
import { parseConfig } from '../../src/config/validate.js';
import type { CliIo } from '../../src/cli/command.js';
import { openStore } from '../../src/composition.js';
import { projectKey } from '../../src/workspace/paths.js';

/** Test helpers: real git in temporary repositories, each test with its own WARREN_HOME. */

export const BIN = path.resolve(import.meta.dirname, '../../bin/warren.js');

export function tmpDir(prefix = 'warren-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  onTestFinished(() => removeDir(dir));
  return dir;
}

/**
 * Removes a test's folder; only when that fails (a file made immutable, as test/workspace/rm
 * does) is `chattr -R -i` run over what is left, and the folder removed again. chattr on every
 * folder was a process and a walk of the whole tree at the end of every test.
 */
function removeDir(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  } catch {
    // EPERM: something immutable
  }
  try {
    execFileSync('chattr', ['-R', '-i', dir], { stdio: 'ignore' });
  } catch {
    // chattr missing or nothing immutable
  }
  fs.rmSync(dir, { recursive: true, force: true });
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
  /**
   * Runs the CLI in the repository with this test's WARREN_HOME: in this process (the command
   * line's own `main`, with its output captured), or as a real process when another command of
   * this process is still running (commands run at once stay at once). `runCli` always starts
   * the real bin/warren.js.
   */
  warren(...args: string[]): Promise<CliResult>;
  /** Same, and parses --json stdout. */
  warrenJson<T = Record<string, unknown>>(...args: string[]): Promise<CliResult & { json: T }>;
  git(...args: string[]): string;
  /** Writes a file; writing warren.yaml or .worktreeinclude in a trusted repository (the default) trusts the set too. */
  write(rel: string, content: string): void;
  commit(message: string): string;
  /** Records this user's trust in warren.yaml's commands as they are now, as `warren trust --yes` would. */
  trust(): void;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A repository on `main` with user set, gc.auto=0 (and no `git maintenance run --auto` after
 * each commit), gpgsign off, and one commit. Its warren.yaml
 * commands are trusted (through the library, no CLI run) unless `trusted: false`: a test of
 * another feature should not have to go through trust on first use.
 */
export function makeRepo(options: { name?: string; files?: Record<string, string>; trusted?: boolean } = {}): TestRepo {
  const base = tmpDir();
  const root = path.join(base, options.name ?? 'repo');
  const home = path.join(base, 'warren-home');
  fs.mkdirSync(root, { recursive: true });
  initialCommit(root, options.files ?? { 'README.md': '# test\n' });
  const trusted = options.trusted !== false;
  if (trusted) trustRepo(root, home);
  const repo: TestRepo = {
    root,
    home,
    warren: (...args) => runWarren(args, { cwd: root, home }),
    async warrenJson<T>(...args: string[]) {
      const result = await runWarren(['--json', ...args], { cwd: root, home });
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
      if (trusted && (rel === 'warren.yaml' || rel === '.worktreeinclude')) trustRepo(root, home);
    },
    trust: () => trustRepo(root, home),
    commit(message) {
      gitIn(root, 'add', '-A');
      gitIn(root, 'commit', '-q', '-m', message);
      return gitIn(root, 'rev-parse', 'HEAD');
    },
  };
  return repo;
}

/**
 * `root` as a repository with `files` and one commit "initial". The first repository with given
 * files is made by `git init`, `add` and `commit` and kept (folder and all) as a template; the next
 * ones with the same files are copies of it, in this process, and one `git update-index --refresh`
 * that records the copies' own inodes and times in the index, as `add` would have. One git process
 * where three were: a process is ~15 ms of CPU on a 2-core CI machine, and most tests make
 * repositories. A copy is the same as a repository made afresh (config, index, files, commit), but
 * for the commit's date: when its template was made, earlier in this process (warren reads no
 * commit's date).
 */
const made = new Map<string, string>();
let templates: string | undefined;

function initialCommit(root: string, files: Record<string, string>): void {
  // GIT_* in the environment (an author date, say) would have gone into the commit: part of the key.
  const gitVars = Object.entries(process.env).filter(([k]) => k.startsWith('GIT_'));
  const key = JSON.stringify([files, gitVars]);
  const template = made.get(key);
  if (template !== undefined) {
    fs.cpSync(template, root, { recursive: true });
    gitIn(root, 'update-index', '-q', '--refresh');
    return;
  }
  gitIn(root, 'init', '-q', '-b', 'main');
  setTestConfig(root);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '-q', '-m', 'initial');
  // The run's folder (test/helpers/templates.ts), one of this process's own inside it.
  templates ??= fs.mkdtempSync(path.join(process.env.WARREN_TEST_TEMPLATES ?? os.tmpdir(), `${process.pid}-`));
  const copy = path.join(templates, String(made.size));
  fs.cpSync(root, copy, { recursive: true });
  made.set(key, copy);
}

/**
 * The test repositories' own settings, written into `.git/config` as `git config` writes them: one
 * file write where five `git config` processes were (a process is 7–11 ms of CPU here, and every
 * test makes repositories). `maintenance.auto=false`: with gc.auto=0, the `git maintenance run
 * --auto` that each commit starts would do nothing but start.
 */
const TEST_CONFIG = [
  '[user]',
  '\tname = Warren Test',
  '\temail = test@example.invalid',
  '[gc]',
  '\tauto = 0',
  '[maintenance]',
  '\tauto = false',
  '[commit]',
  '\tgpgsign = false',
  '',
].join('\n');

export function setTestConfig(root: string): void {
  fs.appendFileSync(path.join(root, '.git', 'config'), TEST_CONFIG);
}

/**
 * Trusts the set of `root`'s warren.yaml (its commands and settings, .worktreeinclude included)
 * for `home`'s user, as `warren trust --yes` does; nothing when the file is invalid, or when it
 * sets nothing and nothing was trusted or pinned before.
 */
export function trustRepo(root: string, home: string): void {
  let commands;
  try {
    const file = path.join(root, 'warren.yaml');
    const yaml = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    commands = trustedSet(parseConfig(yaml), trustedFiles(root));
  } catch {
    return;
  }
  // Nothing set and no database yet: nothing can have been trusted or pinned.
  if (commands.length === 0 && !fs.existsSync(path.join(home, 'state.db'))) return;
  const store = openStore(home);
  try {
    const key = projectKey(root, fs.realpathSync(path.join(root, '.git')));
    if (commands.length === 0 && store.getTrust(key) === null) return;
    store.setTrust(key, commandsHash(commands), commands);
  } finally {
    store.close();
  }
}

/** The environment this process started with: what a spawned command inherits, whatever an in-process one set meanwhile. */
const STARTING_ENV = { ...process.env };

let inProcess = false;

class Collected extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

interface CliOptions {
  cwd: string;
  home: string;
  env?: Record<string, string>;
  input?: string;
}

/**
 * The CLI as a test calls it: in this process when nothing else of warren's runs in it now (the
 * environment is this test's for the call), else as a real process. A command that must die by
 * its own hand (WARREN_FAULT) is always a real one.
 */
export async function runWarren(args: readonly string[], opts: CliOptions): Promise<CliResult> {
  if (inProcess || opts.env?.WARREN_FAULT !== undefined) return runCli(args, opts);
  inProcess = true;
  const env: Record<string, string> = { WARREN_HOME: opts.home, ...opts.env };
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const stdout = new Collected();
  const stderr = new Collected();
  const input = opts.input ?? '';
  const io: CliIo = {
    stdout,
    stderr,
    stdin: Readable.from([input]),
    commandStdin: { text: input },
    cwd: opts.cwd,
    self: [process.execPath, BIN],
    interactive: false,
  };
  try {
    const { main, prepareMain, COMMANDS } = await import('../../src/cli/commands/all.js');
    const code = await main(args, prepareMain(COMMANDS, io), io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    inProcess = false;
  }
}

/** The real command line, bin/warren.js, in a process of its own. */
export function runCli(args: readonly string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...STARTING_ENV, WARREN_HOME: opts.home, ...opts.env },
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
