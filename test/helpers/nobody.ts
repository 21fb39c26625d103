import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { BIN, gitIn, setTestConfig, tmpDir, trustRepo } from './repo.js';
import { unmountUnder } from './tree.js';

/** uid 65534 (through setpriv, from a root test): the CLI, and a plain shell as a user would have one. */

export const NOBODY = 65534;
const AS_NOBODY = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];

export interface Cli {
  code: number;
  stdout: string;
  stderr: string;
}

/** A plain `sh -c SCRIPT` as uid 65534 in `cwd`, outside warren: what an editor or a terminal would see. */
export function shellAsNobody(cwd: string, script: string): Cli {
  // The shell changes into `cwd` itself: root (this test) may not enter another user's fuse mount.
  const r = spawnSync(
    'setpriv',
    [
      ...AS_NOBODY,
      'sh',
      '-c',
      `cd "$1" && { ${script}
}`,
      'sh',
      cwd,
    ],
    { cwd: '/', encoding: 'utf8' },
  );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export interface NobodyRepo {
  base: string;
  root: string;
  home: string;
  warren(args: readonly string[], env?: Record<string, string>): Cli;
  json<T>(args: readonly string[], env?: Record<string, string>): T;
  git(...args: string[]): string;
}

/**
 * A repository owned by uid 65534, its WARREN_HOME too; `fill` writes its files before the first
 * commit. Whatever is still mounted below it at the end (a failed test) is unmounted first.
 */
export function nobodyRepo(fill: (root: string) => void): NobodyRepo {
  const base = tmpDir();
  onTestFinished(() => unmountUnder(base));
  fs.chmodSync(base, 0o755);
  const root = path.join(base, 'app');
  const home = path.join(base, 'home');
  // WARREN_HOME as warren makes it (0700): a 0755 one is made private on first use, saying so.
  fs.mkdirSync(root);
  fs.mkdirSync(home, { mode: 0o700 });
  gitIn(root, 'init', '-q', '-b', 'main');
  setTestConfig(root);
  fill(root);
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '-q', '-m', 'init');
  trustRepo(root, home);
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, root, home]);
  const warren = (args: readonly string[], env: Record<string, string> = {}): Cli => {
    const vars = Object.entries({ HOME: home, WARREN_HOME: home, GIT_CONFIG_NOSYSTEM: '1', ...env }).map(
      ([k, v]) => `${k}=${v}`,
    );
    const r = spawnSync('setpriv', [...AS_NOBODY, 'env', ...vars, process.execPath, BIN, ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    base,
    root,
    home,
    warren,
    json<T>(args: readonly string[], env: Record<string, string> = {}): T {
      const r = warren(['--json', ...args], env);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return JSON.parse(r.stdout) as T;
    },
    git(...args: string[]): string {
      const r = shellAsNobody(
        root,
        `HOME=${home} git "$@"`.replace('"$@"', args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')),
      );
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    },
  };
}

/** fuse-overlayfs mounts (any user's) in this process's mount table that touch `dir`. */
export function fuseMountsTouching(dir: string): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(' - fuse.fuse-overlayfs ') && line.includes(dir))
    .map((line) => line.split(' ')[4] ?? '');
}

export interface NobodyResponse {
  /** 0 when the connection itself failed (then `error` says how). */
  status: number;
  body: string;
  error?: string;
}

/** The client uid 65534 runs: one request, and what came back (a stream is cut after 1.5 s). */
const HTTP_CLIENT = `
const [url, method, headers, body, socketPath] = JSON.parse(process.argv[1]);
const done = (r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); };
// Through a unix socket, as a client of a proxy: the absolute URL in the request line.
const where = socketPath === null ? {} : { socketPath, path: url };
const req = require('node:http').request(url, { method, headers, ...where }, (res) => {
  let text = '';
  res.setEncoding('utf8').on('data', (d) => (text += d));
  res.on('end', () => done({ status: res.statusCode, body: text }));
  setTimeout(() => done({ status: res.statusCode, body: text }), 1500);
});
req.on('error', (e) => done({ status: 0, body: '', error: e.code || e.message }));
req.end(body === null ? undefined : body);
`;

/**
 * An HTTP request made by another user of this machine: a node process as uid 65534 (setpriv),
 * its own socket (over TCP, or to the unix socket `socketPath`, as to a proxy). Asynchronous, so
 * that a server in this process keeps answering meanwhile.
 */
export function requestAsNobody(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; socketPath?: string } = {},
): Promise<NobodyResponse> {
  const args = JSON.stringify([
    url,
    init.method ?? 'GET',
    init.headers ?? {},
    init.body ?? null,
    init.socketPath ?? null,
  ]);
  return new Promise((resolve, reject) => {
    execFile(
      'setpriv',
      [...AS_NOBODY, process.execPath, '-e', HTTP_CLIENT, args],
      { cwd: '/', encoding: 'utf8', timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`the client as uid ${NOBODY} failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as NobodyResponse);
      },
    );
  });
}
