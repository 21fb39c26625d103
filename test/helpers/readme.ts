import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { NOBODY } from './nobody.js';
import { startNpmMirror, type NpmMirror } from './npm-mirror.js';
import { tmpDir } from './repo.js';

/**
 * The README as a user follows it: its fenced code blocks, and its install replayed as uid
 * 65534 on this machine, offline (the registry is an offline mirror of the versions
 * package-lock.json pins: helpers/npm-mirror.ts), counting the native builds it runs.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Block {
  lang: string;
  /** The heading the block is under. */
  section: string;
  lines: string[];
}

/** The README's fenced code blocks, with their language and section; an indented fence (in a list) too. */
export function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let open: Block | null = null;
  let indent = '';
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.trim() === '```') {
        blocks.push(open);
        open = null;
      } else open.lines.push(line.startsWith(indent) ? line.slice(indent.length) : line);
      continue;
    }
    const fence = /^(\s*)```(\w+)\s*$/.exec(line);
    if (fence) {
      indent = fence[1] ?? '';
      open = { lang: fence[2] ?? '', section, lines: [] };
    } else if (line.startsWith('#')) section = line.replace(/^#+\s*/, '');
  }
  return blocks;
}

/** The one block of `markdown` that `pick` selects: the test fails, naming it, when there is none or several. */
export function block(markdown: string, pick: (b: Block) => boolean, what: string): Block {
  const found = codeBlocks(markdown).filter(pick);
  expect(found.length, `the README's ${what}`).toBe(1);
  return found[0] as Block;
}

/** The `$ ` commands of a console block, each with the output the README shows after it. */
export function commandsOf(b: Block): { command: string; shown: string[] }[] {
  const out: { command: string; shown: string[] }[] = [];
  for (const line of b.lines) {
    if (line.startsWith('$ ')) out.push({ command: line.slice(2), shown: [] });
    else out.at(-1)?.shown.push(line);
  }
  return out;
}

export interface Shell {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ReplayedInstall {
  /** The user's home (uid 65534's, 0755 above it). */
  home: string;
  /** The user's environment as the README leaves it: ~/.local/bin first on PATH. */
  user: Record<string, string>;
  /** The install block's own run. */
  installed: Shell;
  /** One entry per native build the install ran: the folder `make` ran in. */
  builds: string[];
  mirror: NpmMirror;
  /** A `sh -ec SCRIPT` as uid 65534 in `cwd`, asynchronous (the mirror answers from this process). */
  sh(cwd: string, script: string, extra?: Record<string, string>): Promise<Shell>;
}

/**
 * The README's install block, run as written by uid 65534 in a fresh home, from a clone of this
 * checkout (its working tree as it is, committed into a repository of its own). Every `make`
 * goes through a shim on PATH that notes the folder it ran in: node-gyp runs make once per
 * native module it compiles, so `builds` counts them. `prebuilt: false`: better-sqlite3's
 * prebuilt binary is missing (404), as on a machine that cannot reach its host, and `npm ci`
 * compiles; the offline hint of the block's `npm ci` line (`--nodedir=…`) is followed, as its
 * comment says, since the machine is offline.
 */
export async function replayInstall(readme: string, options: { prebuilt: boolean }): Promise<ReplayedInstall> {
  const mirror = await startNpmMirror(ROOT, { dev: true, prebuilt: options.prebuilt });
  const base = tmpDir('warren-install-');
  fs.chmodSync(base, 0o755);
  const home = path.join(base, 'home');
  const source = path.join(base, 'warren.git');
  const shims = path.join(base, 'shims');
  const makeLog = path.join(base, 'make.log');
  fs.mkdirSync(home);
  snapshotCheckout(source);
  fs.mkdirSync(shims);
  const make = execFileSync('sh', ['-c', 'command -v make'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(path.join(shims, 'make'), `#!/bin/sh\nprintf '%s\\n' "$PWD" >> ${makeLog}\nexec ${make} "$@"\n`, {
    mode: 0o755,
  });
  fs.writeFileSync(makeLog, '');
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, home, source, makeLog]);

  const env: Record<string, string> = {
    HOME: home,
    USER: 'nobody',
    LANG: 'C.UTF-8',
    PATH: `${shims}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    ...mirror.env,
  };
  const sh = (cwd: string, script: string, extra: Record<string, string> = {}): Promise<Shell> => {
    const vars = Object.entries({ ...env, ...extra }).map(([k, v]) => `${k}=${v}`);
    return new Promise((resolve) => {
      execFile(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', '-i', ...vars, 'sh', '-ec', script],
        { cwd, encoding: 'utf8', timeout: 40 * 60_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  };

  const install = block(readme, (b) => b.section === 'Install' && b.lang === 'sh', 'install block');
  const script = install.lines.map((line) => line.replace('<this repository>', source));
  // The machine is offline: the user follows the hint the `npm ci` line gives for that.
  const ci = install.lines.find((l) => /^npm ci\b/.test(l)) ?? '';
  const nodedir = /offline: npm ci --nodedir=(\S+)/.exec(ci)?.[1];
  expect(nodedir, `the README's npm ci line says what to add offline: ${ci}`).toBeDefined();
  const installed = await sh(home, script.join('\n'), { npm_config_nodedir: nodedir ?? '' });
  const builds = fs.readFileSync(makeLog, 'utf8').split('\n').filter(Boolean);
  return {
    home,
    user: { PATH: `${home}/.local/bin:${env.PATH}` },
    installed,
    builds,
    mirror,
    sh,
  };
}

/** A repository at `dest` holding this checkout's working tree as it is (tracked and new files, not ignored ones). */
function snapshotCheckout(dest: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)));
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
    fs.cpSync(path.join(ROOT, file), path.join(dest, file), { preserveTimestamps: true });
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dest, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=Warren Test', '-c', 'user.email=test@example.invalid', 'commit', '-qm', 'snapshot');
}
