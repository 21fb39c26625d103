import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { makeRepo, tmpDir, type TestRepo } from './repo.js';
import { unmountUnder } from './tree.js';

/**
 * Projects whose `node_modules` a real package manager installs offline, for the tests of
 * snapshots that match their key (issue 13 §2): local packages as `npm pack` makes them, a
 * repository that provisions `node_modules` by cow, and what warren says about a task's tree.
 */

/** What `warren show --json` says of a provisioned path. */
export interface Provisioned {
  path: string;
  mode: string;
  requested?: string;
  snapshot?: string;
  lockfile?: { path: string };
  installed?: { lockfile: string | null; manager: string | null; state: string; why?: string };
}

/** What `warren status --json` says of staleness. */
export interface Status {
  stale: boolean;
  staleLockfiles: { path: string; tree?: string; why?: string; fix?: string }[];
}

interface Shown {
  data: { provision: Provisioned[] };
  events: { kind: string; level: string; message: string }[];
}

/**
 * A package as `npm pack` makes it (`package/package.json`, `package/index.js` exporting
 * "NAME VERSION", gzipped) at `dir/NAME-VERSION.tgz`; `fields` go into its package.json.
 */
export function packageTarball(
  dir: string,
  name: string,
  version: string,
  fields: Record<string, unknown> = {},
): string {
  const src = tmpDir('warren-pkg-');
  fs.mkdirSync(path.join(src, 'package'));
  fs.writeFileSync(
    path.join(src, 'package/package.json'),
    JSON.stringify({ name, version, main: 'index.js', ...fields }),
  );
  fs.writeFileSync(path.join(src, 'package/index.js'), `module.exports = '${name} ${version}';\n`);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${version}.tgz`);
  execFileSync('tar', ['-czf', file, '-C', src, 'package']);
  return file;
}

/**
 * A repository with `package.json`, node_modules ignored and provisioned by cow, and the
 * packages `alpha` and `beta` 1.0.0 as tarballs in `vendor/` (committed), so an install from
 * `file:vendor/…` needs no registry. Unmounts every workspace when the test ends.
 */
export function depsRepo(packageJson: object, extra: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n',
      'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
      'warren.yaml': 'provision:\n  - { path: node_modules, mode: cow }\n',
      ...extra,
    },
  });
  for (const name of ['alpha', 'beta']) packageTarball(path.join(repo.root, 'vendor'), name, '1.0.0');
  repo.commit('vendor');
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return repo;
}

/** `warren new feat ID`, which must succeed, and what `warren show` then says was provisioned. */
export async function newTask(
  repo: TestRepo,
  id: string,
): Promise<{ path: string; stderr: string; provision: Provisioned[]; events: Shown['events'] }> {
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(made.code, made.stderr).toBe(0);
  const shown = await repo.warrenJson<Shown>('show', id);
  return { path: made.json.path, stderr: made.stderr, provision: shown.json.data.provision, events: shown.json.events };
}

export const taskStatus = async (repo: TestRepo, id: string): Promise<Status> =>
  (await repo.warrenJson<Status>('status', id)).json;

/** Is package `name` installed in the `node_modules` of `dir`? */
export const hasPackage = (dir: string, name: string): boolean =>
  fs.existsSync(path.join(dir, 'node_modules', name, 'package.json'));

/** The snapshots warren has taken (their folders' names), in this test's WARREN_HOME. */
export const snapshotsOf = (repo: TestRepo): string[] => {
  const dir = path.join(repo.home, 'snapshots');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => !n.endsWith('.lock') && !n.startsWith('.')) : [];
};

/** What `require(name)` gives in `dir`, by a real node. */
export const requireIn = (dir: string, name: string): string =>
  execFileSync('node', ['-p', `require(${JSON.stringify(name)})`], { cwd: dir, encoding: 'utf8' }).trim();
