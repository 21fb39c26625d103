import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable, YARN_BERRY, YARN_CLASSIC, type CapabilityName } from '../helpers/capabilities.js';
import { depsRepo, hasPackage, newTask, packageTarball, requireIn, snapshotsOf, taskStatus } from '../helpers/deps.js';
import { yarnBerry, yarnClassic, type YarnDirs } from '../helpers/ecosystems.js';
import { tmpDir } from '../helpers/repo.js';

/**
 * A snapshot is of a tree that matches its key (issue 13 §2), with real yarn, offline: classic
 * (1.x; its record is `node_modules/.yarn-integrity`) and berry (4.x with `nodeLinker:
 * node-modules`; `node_modules/.yarn-state.yml`), installed from local tarballs in the
 * repository (`file:vendor/…`). One of them, `plug`, has a peer dependency, which berry installs
 * as a virtual instance.
 */

/** Real installs, several `warren new`s and a land: minutes on a loaded 2-core machine. */
const YARN_TIMEOUT = 300_000;

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

interface Flavour {
  name: string;
  capability: CapabilityName;
  manager: 'yarn-classic' | 'yarn-berry';
  /** Its record of what it installed, in node_modules. */
  record: string;
  /** Files the project tracks besides package.json. */
  files: Record<string, string>;
  /** `yarn ARGS` in `cwd`. */
  yarn(cwd: string, dirs: YarnDirs, ...args: string[]): void;
  /** The arguments that add `beta` from its tarball. */
  addBeta: string[];
  /** The install that puts exactly what yarn.lock says in place, as warren's hint names it. */
  frozen: string[];
}

const FLAVOURS: Flavour[] = [
  {
    name: 'yarn classic',
    capability: 'yarn-classic',
    manager: 'yarn-classic',
    record: '.yarn-integrity',
    files: {},
    yarn: (cwd, dirs, ...args) => yarnClassic(YARN_CLASSIC, cwd, dirs, ...args),
    addBeta: ['add', 'file:vendor/beta-1.0.0.tgz'],
    frozen: ['install', '--frozen-lockfile'],
  },
  {
    name: 'yarn berry',
    capability: 'yarn-berry',
    manager: 'yarn-berry',
    record: '.yarn-state.yml',
    // .yarn/ holds berry's install-state.gz: per checkout, like node_modules. An empty yarn.lock
    // makes the folder a project of its own, whatever package.json a folder above it holds.
    files: { '.gitignore': 'node_modules/\n.yarn/\n', '.yarnrc.yml': 'nodeLinker: node-modules\n', 'yarn.lock': '' },
    yarn: (cwd, dirs, ...args) => yarnBerry(YARN_BERRY, cwd, dirs, ...args),
    addBeta: ['add', 'beta@file:vendor/beta-1.0.0.tgz'],
    frozen: ['install', '--immutable'],
  },
];

for (const flavour of FLAVOURS) {
  const missing = noOverlay ?? unavailable(import.meta.filename, flavour.capability);

  describe.skipIf(missing !== null)(`a snapshot is of a tree that matches its key (${flavour.name})`, () => {
    it(
      `snapshots a tree whose ${flavour.record} matches yarn.lock; after a landed dependency, refuses the stale main checkout and says why; after yarn install there, a new task gets the package`,
      async () => {
        const repo = depsRepo(
          {
            name: 'app',
            version: '1.0.0',
            private: true,
            dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz', plug: 'file:vendor/plug-1.0.0.tgz' },
          },
          flavour.files,
        );
        packageTarball(path.join(repo.root, 'vendor'), 'plug', '1.0.0', { peerDependencies: { alpha: '*' } });
        const dirs: YarnDirs = { cache: tmpDir('warren-yarn-cache-'), home: tmpDir('warren-yarn-home-') };
        flavour.yarn(repo.root, dirs, 'install');
        expect(fs.existsSync(path.join(repo.root, 'node_modules', flavour.record))).toBe(true);
        repo.commit('yarn.lock');

        // The main checkout matches: the snapshot is taken, and the task's tree works.
        const a = await newTask(repo, 'a');
        expect(a.provision[0]).toMatchObject({
          mode: 'cow',
          lockfile: { path: 'yarn.lock' },
          installed: { lockfile: 'yarn.lock', manager: flavour.manager, state: 'matches' },
        });
        expect(a.stderr).not.toContain('does not match');
        expect(snapshotsOf(repo)).toHaveLength(1);
        expect(requireIn(a.path, 'plug')).toBe('plug 1.0.0');
        expect(await taskStatus(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });

        // The task adds a dependency with yarn itself: its tree matches its new yarn.lock, so it is not stale.
        flavour.yarn(a.path, dirs, ...flavour.addBeta);
        expect(hasPackage(a.path, 'beta')).toBe(true);
        expect(await taskStatus(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });
        expect((await repo.warren('status', 'a')).stdout).not.toContain('--refresh');

        // Landed: the main checkout has the new yarn.lock and its old node_modules, which land says.
        expect((await repo.warren('checkpoint', 'a', '-m', 'add beta')).code).toBe(0);
        const landed = await repo.warren('land', 'a');
        expect(landed.code, landed.stderr).toBe(0);
        expect(`${landed.stdout}${landed.stderr}`).toMatch(/yarn\.lock.*stale|stale.*yarn\.lock/);
        expect(fs.readFileSync(path.join(repo.root, 'yarn.lock'), 'utf8')).toContain('beta');
        expect(hasPackage(repo.root, 'beta')).toBe(false);

        // A new task: no snapshot under the new key, the last good one instead, stale, and why.
        const before = snapshotsOf(repo);
        const b = await newTask(repo, 'b');
        expect(b.stderr).toMatch(/does not match yarn\.lock .*beta/);
        expect(snapshotsOf(repo)).toEqual(before);
        expect(b.provision[0]).toMatchObject({
          mode: 'cow',
          snapshot: a.provision[0]?.snapshot,
          installed: { manager: flavour.manager, state: 'differs' },
        });
        expect(hasPackage(b.path, 'beta')).toBe(false);
        const stale = await taskStatus(repo, 'b');
        expect(stale.stale).toBe(true);
        expect(stale.staleLockfiles[0]).toMatchObject({ path: 'yarn.lock', tree: 'node_modules' });
        expect(stale.staleLockfiles[0]?.why).toContain('beta');
        expect(stale.staleLockfiles[0]?.fix).toContain(`yarn ${flavour.frozen.join(' ')}`);
        expect(b.events.some((e) => e.kind === 'provision.install_stale' && e.level === 'warn')).toBe(true);

        // Reinstalled in the main checkout: a new task gets beta from a fresh snapshot, and --refresh gives it to b.
        flavour.yarn(repo.root, dirs, ...flavour.frozen);
        const c = await newTask(repo, 'c');
        expect(c.stderr).not.toContain('does not match');
        expect(c.provision[0]).toMatchObject({ installed: { state: 'matches' } });
        expect(snapshotsOf(repo)).toHaveLength(before.length + 1);
        expect(requireIn(c.path, 'beta')).toBe('beta 1.0.0');
        expect(requireIn(c.path, 'plug')).toBe('plug 1.0.0');
        expect(await taskStatus(repo, 'c')).toMatchObject({ stale: false });
        const refreshed = await repo.warren('provision', 'b', '--refresh');
        expect(refreshed.code, refreshed.stderr).toBe(0);
        expect(hasPackage(b.path, 'beta')).toBe(true);
        expect(await taskStatus(repo, 'b')).toMatchObject({ stale: false });
      },
      YARN_TIMEOUT,
    );
  });
}

const berry = FLAVOURS.find((f) => f.manager === 'yarn-berry') as Flavour;

describe.skipIf((noOverlay ?? unavailable(import.meta.filename, 'yarn-berry')) !== null)(
  'a tree less than all of yarn.lock by design (yarn berry)',
  () => {
    it(
      'a production install (`yarn workspaces focus --production`) is snapshotted as it is, not called stale: what it left out is needed by nothing it installed',
      async () => {
        const repo = depsRepo(
          {
            name: 'app',
            version: '1.0.0',
            private: true,
            dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' },
            devDependencies: { beta: 'file:vendor/beta-1.0.0.tgz' },
          },
          berry.files,
        );
        const dirs: YarnDirs = { cache: tmpDir('warren-yarn-cache-'), home: tmpDir('warren-yarn-home-') };
        berry.yarn(repo.root, dirs, 'install');
        repo.commit('yarn.lock');
        berry.yarn(repo.root, dirs, 'workspaces', 'focus', '--production');
        expect(hasPackage(repo.root, 'beta')).toBe(false);

        const a = await newTask(repo, 'a');
        expect(a.stderr).not.toContain('does not match');
        expect(a.provision[0]).toMatchObject({
          mode: 'cow',
          installed: { manager: 'yarn-berry', state: 'matches', why: expect.stringContaining('a production install') },
        });
        expect(a.provision[0]?.installed?.why).toContain('beta@file:vendor/beta-1.0.0.tgz');
        expect(snapshotsOf(repo)).toHaveLength(1);
        expect(requireIn(a.path, 'alpha')).toBe('alpha 1.0.0');
        expect(hasPackage(a.path, 'beta')).toBe(false);
        expect(await taskStatus(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });
      },
      YARN_TIMEOUT,
    );
  },
);
