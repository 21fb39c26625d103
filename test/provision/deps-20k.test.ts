import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEPS_20K_CACHE, deps20kFixture, unavailable } from '../helpers/capabilities.js';
import { depsRepo, hasPackage, newTask, requireIn, snapshotsOf, taskStatus } from '../helpers/deps.js';

/**
 * A snapshot is of a tree that matches its key (issue 13 §2) on a real tree of about 20,000
 * files: the deps-20k fixture (an Astro site toolchain), installed with real npm, offline, from
 * the cache .ci/deps-20k fills; the dependency change is a local package (`file:vendor/…`).
 */

/** `npm ci` of 20,000 files (20–45 s here), three `warren new`s, an `npm install` in a cow layer, a land. */
const DEPS_20K_TIMEOUT = 600_000;

// Removing the test's folder afterwards (the install, two snapshots, three workspaces: some
// 60,000 entries) takes longer than the default minute a hook may on a loaded machine.
vi.setConfig({ hookTimeout: 300_000 });

const missing = unavailable(import.meta.filename, 'overlay-root') ?? unavailable(import.meta.filename, 'deps-20k');

function npm(cwd: string, ...args: string[]): void {
  execFileSync(
    'npm',
    [
      ...args,
      '--offline',
      `--cache=${DEPS_20K_CACHE}`,
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
    ],
    { cwd, stdio: ['ignore', 'ignore', 'pipe'] },
  );
}

/** Every entry under `dir`, not following links. */
function countEntries(dir: string): number {
  let n = 0;
  const stack = [dir];
  for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      n++;
      if (e.isDirectory()) stack.push(path.join(d, e.name));
    }
  }
  return n;
}

const read = (...parts: string[]): string => fs.readFileSync(path.join(...parts), 'utf8');

describe.skipIf(missing !== null)('a snapshot is of a tree that matches its key (npm, deps-20k)', () => {
  it(
    'a 20,000-file npm install: snapshotted when .package-lock.json matches, private writes, refused while stale after a landed dependency, and a new task gets it after the reinstall',
    async () => {
      const fixture = deps20kFixture() as string;
      const repo = depsRepo(JSON.parse(read(fixture, 'package.json')) as object, {
        'package-lock.json': read(fixture, 'package-lock.json'),
      });
      npm(repo.root, 'ci');
      const mainEntries = countEntries(path.join(repo.root, 'node_modules'));
      expect(mainEntries).toBeGreaterThan(15_000);
      const tsVersion = requireIn(repo.root, 'typescript/package.json').match(/version: '([^']+)'/)?.[1];
      expect(tsVersion).toMatch(/^5\./);

      // The main checkout matches its lockfile: the snapshot is taken, and the workspace sees the whole tree.
      const a = await newTask(repo, 'a');
      expect(a.provision[0]).toMatchObject({
        mode: 'cow',
        lockfile: { path: 'package-lock.json' },
        installed: { lockfile: 'package-lock.json', manager: 'npm', state: 'matches' },
      });
      expect(snapshotsOf(repo)).toHaveLength(1);
      expect(countEntries(path.join(a.path, 'node_modules'))).toBe(mainEntries);
      expect(execFileSync('node', ['node_modules/.bin/tsc', '--version'], { cwd: a.path, encoding: 'utf8' })).toContain(
        tsVersion,
      );
      expect(await taskStatus(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });

      // Its writes stay in it: a new file, a changed one, a deleted one.
      const readme = read(repo.root, 'node_modules/typescript/README.md');
      fs.writeFileSync(path.join(a.path, 'node_modules/typescript/WARREN-PRIVATE'), 'a\n');
      fs.appendFileSync(path.join(a.path, 'node_modules/typescript/README.md'), 'changed in a\n');
      fs.rmSync(path.join(a.path, 'node_modules/astro/README.md'));
      expect(fs.existsSync(path.join(repo.root, 'node_modules/typescript/WARREN-PRIVATE'))).toBe(false);
      expect(read(repo.root, 'node_modules/typescript/README.md')).toBe(readme);
      expect(fs.existsSync(path.join(repo.root, 'node_modules/astro/README.md'))).toBe(true);

      // The task adds a dependency with npm in its cow layer: its tree matches its new lockfile, not stale.
      npm(a.path, 'install', 'file:vendor/beta-1.0.0.tgz');
      expect(requireIn(a.path, 'beta')).toBe('beta 1.0.0');
      expect(hasPackage(repo.root, 'beta')).toBe(false);
      expect(await taskStatus(repo, 'a')).toMatchObject({ stale: false, staleLockfiles: [] });

      // Landed: the main checkout has the new lockfile and its old tree, which land says.
      expect((await repo.warren('checkpoint', 'a', '-m', 'add beta')).code).toBe(0);
      const landed = await repo.warren('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(`${landed.stdout}${landed.stderr}`).toMatch(/package-lock\.json.*stale|stale.*package-lock\.json/);
      expect(read(repo.root, 'package-lock.json')).toContain('node_modules/beta');

      // No snapshot of the stale main checkout under the new key: the last good one (without a's writes), stale, and why.
      const b = await newTask(repo, 'b');
      expect(b.stderr).toMatch(/does not match package-lock\.json .*beta/);
      expect(snapshotsOf(repo)).toHaveLength(1);
      expect(b.provision[0]).toMatchObject({
        mode: 'cow',
        snapshot: a.provision[0]?.snapshot,
        installed: { state: 'differs' },
      });
      expect(hasPackage(b.path, 'beta')).toBe(false);
      expect(fs.existsSync(path.join(b.path, 'node_modules/typescript/WARREN-PRIVATE'))).toBe(false);
      expect(read(b.path, 'node_modules/typescript/README.md')).toBe(readme);
      expect(fs.existsSync(path.join(b.path, 'node_modules/astro/README.md'))).toBe(true);
      const stale = await taskStatus(repo, 'b');
      expect(stale).toMatchObject({
        stale: true,
        staleLockfiles: [{ path: 'package-lock.json', tree: 'node_modules' }],
      });
      expect(stale.staleLockfiles[0]?.why).toContain('beta@1.0.0');

      // Reinstalled in the main checkout, offline: a fresh snapshot, and a new task gets beta with the whole tree.
      npm(repo.root, 'install');
      expect(repo.git('status', '--porcelain')).toBe('');
      const c = await newTask(repo, 'c');
      expect(c.stderr).not.toContain('does not match');
      expect(c.provision[0]).toMatchObject({ mode: 'cow', installed: { state: 'matches' } });
      expect(snapshotsOf(repo)).toHaveLength(2);
      expect(requireIn(c.path, 'beta')).toBe('beta 1.0.0');
      expect(countEntries(path.join(c.path, 'node_modules'))).toBe(countEntries(path.join(repo.root, 'node_modules')));
      expect(await taskStatus(repo, 'c')).toMatchObject({ stale: false });
    },
    DEPS_20K_TIMEOUT,
  );
});
