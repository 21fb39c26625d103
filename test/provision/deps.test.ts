import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import {
  depsRepo,
  hasPackage as has,
  newTask,
  packageTarball,
  snapshotsOf as snapshots,
  taskStatus as status,
} from '../helpers/deps.js';
import { tmpDir } from '../helpers/repo.js';

/**
 * A snapshot is of a tree that matches its key (issue 13 §2), with real npm and pnpm, offline:
 * the packages are local tarballs in the repository (`file:vendor/…`), so nothing is fetched.
 */

/** Real installs, several `warren new`s and a land each: minutes on a loaded 2-core machine. */
const DEPS_TIMEOUT = 300_000;

const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noPnpm = unavailable(import.meta.filename, 'pnpm');

function npm(cwd: string, cache: string, ...args: string[]): void {
  execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error', `--cache=${cache}`], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

function pnpm(cwd: string, store: string, ...args: string[]): void {
  execFileSync('pnpm', [...args, '--offline', `--store-dir=${store}`, '--config.confirmModulesPurge=false'], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CI: '1' },
  });
}

describe.skipIf(noOverlay !== null)('a snapshot is of a tree that matches its key (npm)', () => {
  it(
    'land a dependency, reinstall in the main checkout, and a new task gets it; stale is right both ways meanwhile',
    async () => {
      const repo = depsRepo({ name: 'app', version: '1.0.0', dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' } });
      const cache = tmpDir('warren-npm-cache-');
      npm(repo.root, cache, 'install');
      repo.commit('lockfile');

      const a = await newTask(repo, 'a');
      expect(a.provision[0]).toMatchObject({
        mode: 'cow',
        installed: { lockfile: 'package-lock.json', manager: 'npm', state: 'matches' },
      });
      expect(await status(repo, 'a')).toMatchObject({ stale: false });

      // The task adds a dependency with npm itself: its tree matches its new lockfile, so it is not stale.
      npm(a.path, cache, 'install', 'file:vendor/beta-1.0.0.tgz');
      expect(has(a.path, 'beta')).toBe(true);
      expect(await status(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });
      const human = await repo.warren('status', 'a');
      expect(human.stdout).toContain('stale: no');
      expect(human.stdout).not.toContain('--refresh');

      // Landed: the main checkout has the new lockfile, and its node_modules is now stale, which land says.
      expect((await repo.warren('checkpoint', 'a', '-m', 'add beta')).code).toBe(0);
      const landed = await repo.warren('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(`${landed.stdout}${landed.stderr}`).toMatch(/package-lock\.json.*stale|stale.*package-lock\.json/);
      expect(fs.readFileSync(path.join(repo.root, 'package-lock.json'), 'utf8')).toContain('beta');

      // A new task: no snapshot under the new lockfile (the tree lacks beta); the last good one, marked stale, and said.
      const before = snapshots(repo);
      const b = await newTask(repo, 'b');
      expect(b.stderr).toMatch(/does not match package-lock\.json .*beta/);
      expect(snapshots(repo)).toEqual(before);
      expect(b.provision[0]).toMatchObject({
        mode: 'cow',
        snapshot: a.provision[0]?.snapshot,
        installed: { state: 'differs' },
      });
      expect(has(b.path, 'beta')).toBe(false);
      const stale = await status(repo, 'b');
      expect(stale.stale).toBe(true);
      expect(stale.staleLockfiles[0]).toMatchObject({ path: 'package-lock.json', tree: 'node_modules' });
      expect(stale.staleLockfiles[0]?.why).toContain('beta');
      expect(stale.staleLockfiles[0]?.fix).toContain('--refresh');
      expect(b.events.some((e) => e.kind === 'provision.install_stale' && e.level === 'warn')).toBe(true);

      // --refresh while the main checkout is still stale: the last good snapshot again.
      expect((await repo.warren('provision', 'b', '--refresh')).code).toBe(0);
      expect(has(b.path, 'beta')).toBe(false);

      // Reinstalled in the main checkout: --refresh takes a fresh snapshot, and b gets beta.
      npm(repo.root, cache, 'ci');
      const refreshed = await repo.warren('provision', 'b', '--refresh');
      expect(refreshed.code, refreshed.stderr).toBe(0);
      expect(has(b.path, 'beta')).toBe(true);
      expect(snapshots(repo)).toHaveLength(before.length + 1);
      expect(await status(repo, 'b')).toMatchObject({ stale: false });

      // End to end: a new task gets the new package, from that snapshot.
      const c = await newTask(repo, 'c');
      expect(has(c.path, 'beta')).toBe(true);
      expect(c.stderr).not.toContain('does not match');
      expect(execFileSync('node', ['-p', "require('beta')"], { cwd: c.path, encoding: 'utf8' }).trim()).toBe(
        'beta 1.0.0',
      );
    },
    DEPS_TIMEOUT,
  );

  it(
    'a copy of a stale install is said and stale; with no earlier snapshot, cow copies the stale tree, marked stale',
    async () => {
      const repo = depsRepo({ name: 'app', version: '1.0.0', dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' } });
      const cache = tmpDir('warren-npm-cache-');
      npm(repo.root, cache, 'install');
      repo.commit('lockfile');
      // The lockfile moves on (as a land would), the install does not.
      const lock = JSON.parse(fs.readFileSync(path.join(repo.root, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, object>;
      };
      lock.packages['node_modules/beta'] = { version: '1.0.0', resolved: 'file:vendor/beta-1.0.0.tgz' };
      repo.write('package-lock.json', JSON.stringify(lock, null, 2));
      repo.commit('lockfile moves on');

      const a = await newTask(repo, 'a');
      expect(a.stderr).toContain('a copy of the main checkout');
      expect(a.provision[0]).toMatchObject({ mode: 'copy', requested: 'cow', installed: { state: 'differs' } });
      expect(fs.existsSync(path.join(repo.home, 'snapshots')) ? snapshots(repo) : []).toEqual([]);
      expect(await status(repo, 'a')).toMatchObject({ stale: true });

      repo.write('warren.yaml', 'provision:\n  - { path: node_modules, mode: copy }\n');
      repo.commit('copy');
      const b = await newTask(repo, 'b');
      expect(b.stderr).toMatch(/does not match package-lock\.json/);
      expect(await status(repo, 'b')).toMatchObject({ stale: true });
    },
    DEPS_TIMEOUT,
  );

  it(
    'without a lockfile: the tree against package.json; a dependency changed in package.json is stale until installed',
    async () => {
      const repo = depsRepo(
        { name: 'app', version: '1.0.0', dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' } },
        { '.npmrc': 'package-lock=false\n' },
      );
      const cache = tmpDir('warren-npm-cache-');
      npm(repo.root, cache, 'install');
      expect(fs.existsSync(path.join(repo.root, 'package-lock.json'))).toBe(false);
      const a = await newTask(repo, 'a');
      expect(a.provision[0]).toMatchObject({ installed: { lockfile: null, state: 'matches' } });
      expect(await status(repo, 'a')).toMatchObject({ stale: false });

      const pkg = JSON.parse(fs.readFileSync(path.join(a.path, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      pkg.dependencies.beta = 'file:vendor/beta-1.0.0.tgz';
      fs.writeFileSync(path.join(a.path, 'package.json'), JSON.stringify(pkg));
      const stale = await status(repo, 'a');
      expect(stale).toMatchObject({ stale: true, staleLockfiles: [{ path: 'package.json', tree: 'node_modules' }] });
      expect(stale.staleLockfiles[0]?.why).toContain('beta');

      npm(a.path, cache, 'install');
      expect(await status(repo, 'a')).toMatchObject({ stale: false });
    },
    DEPS_TIMEOUT,
  );
});

describe.skipIf(noOverlay !== null || noPnpm !== null)('a snapshot is of a tree that matches its key (pnpm)', () => {
  it(
    'picks the lockfile pnpm installed from, refuses a stale tree, and takes a fresh snapshot after pnpm install',
    async () => {
      // Two lockfiles tracked: an old package-lock.json first in the fixed order, and pnpm's, which installed the tree.
      const repo = depsRepo(
        { name: 'app', version: '1.0.0', dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' } },
        { 'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n' },
      );
      const store = tmpDir('warren-pnpm-store-');
      pnpm(repo.root, store, 'install');
      repo.commit('pnpm lockfile');

      const a = await newTask(repo, 'a');
      expect(a.provision[0]).toMatchObject({
        lockfile: { path: 'pnpm-lock.yaml' },
        installed: { lockfile: 'pnpm-lock.yaml', manager: 'pnpm', state: 'matches' },
      });
      expect(await status(repo, 'a')).toMatchObject({ stale: false });

      // A task's own pnpm add: not stale.
      pnpm(a.path, store, 'add', 'file:vendor/beta-1.0.0.tgz');
      expect(has(a.path, 'beta')).toBe(true);
      expect(await status(repo, 'a')).toMatchObject({ stale: false });

      // The main checkout's lockfile moves on (the task's, committed as a land would), the install does not.
      fs.copyFileSync(path.join(a.path, 'pnpm-lock.yaml'), path.join(repo.root, 'pnpm-lock.yaml'));
      fs.copyFileSync(path.join(a.path, 'package.json'), path.join(repo.root, 'package.json'));
      repo.commit('beta');
      const b = await newTask(repo, 'b');
      expect(b.stderr).toMatch(/does not match pnpm-lock\.yaml .*beta/);
      expect(has(b.path, 'beta')).toBe(false);
      expect(await status(repo, 'b')).toMatchObject({
        stale: true,
        staleLockfiles: [{ path: 'pnpm-lock.yaml', tree: 'node_modules' }],
      });

      pnpm(repo.root, store, 'install', '--frozen-lockfile');
      expect((await repo.warren('provision', 'b', '--refresh')).code).toBe(0);
      expect(has(b.path, 'beta')).toBe(true);
      expect(await status(repo, 'b')).toMatchObject({ stale: false });
      const c = await newTask(repo, 'c');
      expect(has(c.path, 'beta')).toBe(true);
    },
    DEPS_TIMEOUT,
  );

  it(
    'a production install (`pnpm install --prod`) is snapshotted as it is: the lockfile filtered as pnpm filters it is what it installed; a dependency it lacks is still stale',
    async () => {
      // plug has a peer (its snapshot key carries it), beta is a devDependency, gamma is optional.
      const repo = depsRepo({
        name: 'app',
        version: '1.0.0',
        dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz', plug: 'file:vendor/plug-1.0.0.tgz' },
        optionalDependencies: { gamma: 'file:vendor/gamma-1.0.0.tgz' },
        devDependencies: { beta: 'file:vendor/beta-1.0.0.tgz' },
      });
      packageTarball(path.join(repo.root, 'vendor'), 'plug', '1.0.0', { peerDependencies: { alpha: '*' } });
      packageTarball(path.join(repo.root, 'vendor'), 'gamma', '1.0.0');
      const store = tmpDir('warren-pnpm-store-');
      pnpm(repo.root, store, 'install');
      repo.commit('pnpm lockfile');
      fs.rmSync(path.join(repo.root, 'node_modules'), { recursive: true });
      pnpm(repo.root, store, 'install', '--prod');
      expect(has(repo.root, 'beta')).toBe(false);

      const a = await newTask(repo, 'a');
      expect(a.stderr).not.toContain('does not match');
      expect(a.provision[0]).toMatchObject({
        installed: { manager: 'pnpm', state: 'matches', why: expect.stringContaining('without devDependencies') },
      });
      expect(snapshots(repo)).toHaveLength(1);
      for (const name of ['alpha', 'plug', 'gamma']) expect(has(a.path, name)).toBe(true);
      expect(has(a.path, 'beta')).toBe(false);
      expect(await status(repo, 'a')).toMatchObject({ stale: false });

      // The lockfile gains a dependency (delta) that this production install does not have: stale, and why.
      packageTarball(path.join(repo.root, 'vendor'), 'delta', '1.0.0');
      const other = tmpDir('warren-pnpm-other-');
      fs.cpSync(repo.root, other, {
        recursive: true,
        filter: (src) => !src.includes('node_modules') && !src.includes('.git'),
      });
      pnpm(other, store, 'add', 'file:vendor/delta-1.0.0.tgz');
      for (const file of ['package.json', 'pnpm-lock.yaml'])
        fs.copyFileSync(path.join(other, file), path.join(repo.root, file));
      repo.commit('delta');
      const b = await newTask(repo, 'b');
      expect(b.stderr).toMatch(/does not match pnpm-lock\.yaml .*delta/);
      expect(b.stderr).not.toMatch(/not installed \([^)]*beta/);
    },
    DEPS_TIMEOUT,
  );
});
