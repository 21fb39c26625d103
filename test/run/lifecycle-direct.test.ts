import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { directCommand, packageEnv, shellWord, userAgent } from '../../src/run/lifecycle-direct.js';
import { unavailable } from '../helpers/capabilities.js';
import { depsRepo } from '../helpers/deps.js';
import { runWarren, tmpDir } from '../helpers/repo.js';

/**
 * Issue 41: a skipped install runs the root package's lifecycle scripts directly, as pnpm and
 * npm run them, not by starting `pnpm run` per script. The scripts must see what they saw under
 * `pnpm run` (the same npm_* variables, cwd, PATH), run where it ran (the task's runner), and a
 * failing one must still fail `new` with its log.
 */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noPnpm = unavailable(import.meta.filename, 'pnpm');

/** Writes `.env-EVENT.json`: the npm_* variables, INIT_CWD, PATH's first entry and the cwd the script saw. */
const ENV_DUMP = `const fs = require('fs');
if (process.env.FAIL_PREINSTALL && process.env.npm_lifecycle_event === 'preinstall') {
  console.error('preinstall refused: only pnpm may install');
  process.exit(3);
}
const seen = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('npm_') || k === 'INIT_CWD'));
seen.PATH0 = process.env.PATH.split(':')[0];
seen.cwd = process.cwd();
fs.writeFileSync('.env-' + process.env.npm_lifecycle_event + '.json', JSON.stringify(seen, null, 1));
`;

describe('the variables a script is given (pure, and by a real sh)', () => {
  it("pnpm's npm_package_* is the whole package.json flattened; npm's only name, version, config, engines, bin", () => {
    const pkg = {
      name: '@scope/app',
      version: '1.2.3',
      private: true,
      readme: 'not given',
      _id: 'not given',
      config: { port: 8080 },
      files: ['dist', 'lib'],
      scripts: { postinstall: 'node x.js' },
      'dash-key': 'a\nb',
    };
    expect(packageEnv('pnpm', pkg)).toEqual({
      npm_package_name: '@scope/app',
      npm_package_version: '1.2.3',
      npm_package_private: 'true',
      npm_package_config_port: '8080',
      npm_package_files_0: 'dist',
      npm_package_files_1: 'lib',
      npm_package_scripts_postinstall: 'node x.js',
      npm_package_dash_key: '"a\\nb"',
    });
    expect(packageEnv('npm', pkg)).toEqual({
      npm_package_name: '@scope/app',
      npm_package_version: '1.2.3',
      npm_package_config_port: '8080',
    });
    expect(userAgent('pnpm', '9.15.9', 'v20.1.0')).toBe(
      `pnpm/9.15.9 npm/? node/v20.1.0 ${process.platform} ${process.arch}`,
    );
  });

  it('hostile values stay values: the command runs exactly the scripts, in order, stopping at the first failure', () => {
    const dir = tmpDir();
    const pkg = {
      name: "it's",
      version: '1.0.0',
      description: "$(touch pwned) `touch pwned2` '; touch pwned3",
      scripts: {
        preinstall: 'echo "pre $npm_package_description" > out',
        postinstall: "echo 'post' >> out; exit 4",
        prepare: 'touch never',
      },
    };
    const command = directCommand('pnpm', pkg, ['preinstall', 'postinstall', 'prepare'], 'pnpm/9 npm/? node/v20');
    const r = (() => {
      try {
        execFileSync('sh', ['-c', command], { cwd: dir, env: { PATH: process.env.PATH ?? '', npm_stray: 'x' } });
        return 0;
      } catch (err) {
        return (err as { status: number }).status;
      }
    })();
    expect(r).toBe(4);
    expect(fs.readFileSync(path.join(dir, 'out'), 'utf8')).toBe(`pre ${pkg.description}\npost\n`);
    expect(fs.readdirSync(dir).sort()).toEqual(['out']);
    expect(shellWord("a'b")).toBe(`'a'\\''b'`);
  });
});

describe.skipIf(noOverlay !== null || noPnpm !== null)(
  'a pnpm project with root preinstall/postinstall (issue 41)',
  () => {
    function pnpmRepo() {
      // The spy below hides pnpm's own package.json: the version comes from packageManager, as corepack's would.
      const version = execFileSync('pnpm', ['--version'], { encoding: 'utf8' }).trim();
      const store = tmpDir('warren-pnpm-store-');
      const install = `pnpm install --frozen-lockfile --offline --store-dir=${store}`;
      const repo = depsRepo(
        {
          name: 'shaped',
          version: '3.5.13',
          private: true,
          packageManager: `pnpm@${version}`,
          config: { port: '8080' },
          scripts: { preinstall: 'node scripts/env.js', postinstall: 'node scripts/env.js', test: 'node -e 0' },
          dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' },
        },
        {
          '.gitignore': 'node_modules/\n.env-*.json\n',
          'scripts/env.js': ENV_DUMP,
          'warren.yaml': `provision:\n  - { path: node_modules, mode: cow }\nsetup:\n  - { id: deps, run: "${install}" }\n`,
        },
      );
      execFileSync('pnpm', ['install', '--offline', `--store-dir=${store}`, '--config.confirmModulesPurge=false'], {
        cwd: repo.root,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, CI: '1' },
      });
      repo.commit('lockfile');
      return repo;
    }

    /** A `pnpm` first on PATH that records each start, then is the real one. */
    function pnpmSpy(): { PATH: string; log: string } {
      const bin = tmpDir('warren-pnpm-spy-');
      const log = path.join(bin, 'started');
      const real = execFileSync('sh', ['-c', 'command -v pnpm'], { encoding: 'utf8' }).trim();
      fs.writeFileSync(path.join(bin, 'pnpm'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`, {
        mode: 0o755,
      });
      return { PATH: `${bin}:${process.env.PATH ?? ''}`, log };
    }

    const read = (file: string): Record<string, string> =>
      JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;

    it('runs the scripts without starting pnpm, with the npm_* variables `pnpm run` gives, and a failing one fails `new` with its log', async () => {
      const repo = pnpmRepo();
      const warren = (env: Record<string, string>, ...args: string[]) =>
        runWarren(['--json', ...args], { cwd: repo.root, home: repo.home, env });
      // What warren inherits when it is itself run from a package script: pnpm drops these.
      const spy = pnpmSpy();
      const stray = { npm_lifecycle_event: 'bench', npm_package_name: 'warren', npm_config_foo: 'x', PATH: spy.PATH };
      const made = await warren(stray, 'new', 'feat', 'direct');
      expect(made.code, made.stderr).toBe(0);
      const json = JSON.parse(made.stdout) as {
        path: string;
        state: string;
        setupSkipped: { id: string; ran?: { scripts: string[]; command: string; summary: string } }[];
      };
      expect(json.state).toBe('ready');
      expect(json.setupSkipped[0]?.ran).toMatchObject({
        scripts: ['preinstall', 'postinstall'],
        summary: 'preinstall (node scripts/env.js), postinstall (node scripts/env.js), directly as pnpm runs them',
      });
      // No pnpm started per checkout.
      expect(fs.existsSync(spy.log) ? fs.readFileSync(spy.log, 'utf8') : '').toBe('');

      // The reference: the same scripts by `pnpm run` in the main checkout, from the same environment.
      for (const event of ['preinstall', 'postinstall'])
        execFileSync('pnpm', ['run', '--config.enable-pre-post-scripts=false', event], {
          cwd: repo.root,
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, ...stray, PATH: process.env.PATH ?? '' },
        });
      const ws = json.path;
      for (const event of ['preinstall', 'postinstall']) {
        const byPnpm = read(path.join(repo.root, `.env-${event}.json`));
        const direct = read(path.join(ws, `.env-${event}.json`));
        const moved = Object.fromEntries(Object.entries(byPnpm).map(([k, v]) => [k, v.split(repo.root).join(ws)]));
        // Every variable pnpm gives that scripts read is there, the same; pnpm's own configuration is not.
        const kept = (k: string) =>
          k.startsWith('npm_config_')
            ? k === 'npm_config_user_agent'
            : !['npm_execpath', 'npm_command', 'npm_node_execpath'].includes(k);
        expect(Object.fromEntries(Object.entries(direct).filter(([k]) => kept(k) && k !== 'npm_package_json'))).toEqual(
          Object.fromEntries(Object.entries(moved).filter(([k]) => kept(k))),
        );
        expect(direct).toMatchObject({
          npm_lifecycle_event: event,
          npm_package_name: 'shaped',
          npm_package_json: path.join(ws, 'package.json'),
          INIT_CWD: ws,
          PATH0: path.join(ws, 'node_modules/.bin'),
          cwd: ws,
        });
        expect(direct.npm_config_user_agent).toMatch(/^pnpm\/\d+\.\d+\.\d+ npm\/\? node\/v/);
        expect(direct.npm_config_foo).toBeUndefined();
      }

      // A failing script fails `new`: the task is setup_failed, and its log holds the script's words.
      const failed = await warren({ FAIL_PREINSTALL: '1' }, 'new', 'feat', 'broken');
      expect(failed.code).not.toBe(0);
      const shown = await warren({}, 'show', 'broken');
      const task = JSON.parse(shown.stdout) as { state: string; events: { kind: string; message: string }[] };
      expect(task.state).toBe('setup_failed');
      const message = task.events.find((e) => e.kind === 'setup.failed')?.message ?? '';
      expect(message).toMatch(/^setup deps failed \(exit 3\)/);
      const log = /log (\S+)$/.exec(message)?.[1] ?? '';
      expect(fs.readFileSync(log, 'utf8')).toContain('preinstall refused: only pnpm may install');
      expect(fs.existsSync(path.join(ws, '..', 'broken', '.env-postinstall.json'))).toBe(false);
    }, 300_000);
  },
);
