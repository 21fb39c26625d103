import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  compareNpm,
  comparePackageJson,
  comparePnpm,
  satisfies,
} from '../../src/provision/snapshots/installed-compare.js';
import {
  compareYarnBerry,
  compareYarnClassic,
  devirtualize,
  parseYarnClassic,
} from '../../src/provision/snapshots/installed-compare-yarn.js';
import { checkInstalled, installCommand, pickLockfile } from '../../src/provision/snapshots/installed.js';

/** The installed tree against its lockfile, on literal file contents (issue 13 §2). */

const npmLock = (pkgs: Record<string, object>): string =>
  JSON.stringify({ name: 'p', lockfileVersion: 3, packages: { '': { name: 'p' }, ...pkgs } });
const hidden = (pkgs: Record<string, object>): string =>
  JSON.stringify({ name: 'p', lockfileVersion: 3, packages: pkgs });

describe('compareNpm: package-lock.json against node_modules/.package-lock.json', () => {
  const a1 = { 'node_modules/a': { version: '1.0.0' } };
  it('matches the same packages', () => {
    expect(compareNpm(npmLock(a1), hidden(a1), 'package-lock.json').state).toBe('matches');
  });
  it('names a package the lockfile wants that is not installed, and one at another version', () => {
    const c = compareNpm(
      npmLock({
        ...a1,
        'node_modules/b': { version: '1.0.0' },
        'node_modules/c/node_modules/@s/d': { version: '2.0.0' },
      }),
      hidden({ 'node_modules/a': { version: '0.9.0' } }),
      'package-lock.json',
    );
    expect(c.state).toBe('differs');
    expect(c.why).toContain('b@1.0.0');
    expect(c.why).toContain('@s/d@2.0.0');
    expect(c.why).toContain('a 0.9.0, wants 1.0.0');
  });
  it('names an installed package the lockfile does not list', () => {
    expect(
      compareNpm(npmLock(a1), hidden({ ...a1, 'node_modules/x': { version: '3.0.0' } }), 'package-lock.json').why,
    ).toContain('x@3.0.0');
  });
  it('an optional package may be absent (another platform), and dev packages all absent (--omit=dev), but not some of them', () => {
    const lock = npmLock({
      ...a1,
      'node_modules/opt': { version: '1.0.0', optional: true },
      'node_modules/d1': { version: '1.0.0', dev: true },
      'node_modules/d2': { version: '1.0.0', dev: true },
    });
    expect(compareNpm(lock, hidden(a1), 'package-lock.json').state).toBe('matches');
    expect(
      compareNpm(lock, hidden({ ...a1, 'node_modules/d1': { version: '1.0.0' } }), 'package-lock.json').why,
    ).toContain('d2@1.0.0');
  });
  it('a missing hidden lockfile is an install npm did not finish; a lockfile v1 cannot be told', () => {
    expect(compareNpm(npmLock(a1), null, 'package-lock.json').state).toBe('differs');
    expect(compareNpm('{"lockfileVersion":1,"dependencies":{}}', hidden(a1), 'package-lock.json').state).toBe(
      'unknown',
    );
  });
});

describe('comparePnpm: pnpm-lock.yaml against node_modules/.pnpm/lock.yaml', () => {
  const lock = (extra = ''): string =>
    `lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      a:\n        specifier: 1.0.0\n        version: 1.0.0\npackages:\n  a@1.0.0:\n    resolution: {integrity: sha512-x}\n${extra}snapshots:\n  a@1.0.0: {}\n`;
  it('matches the same lockfile, whatever its key order', () => {
    const reordered = `snapshots:\n  a@1.0.0: {}\npackages:\n  a@1.0.0:\n    resolution: {integrity: sha512-x}\nimporters:\n  .:\n    dependencies:\n      a:\n        version: 1.0.0\n        specifier: 1.0.0\nlockfileVersion: '9.0'\n`;
    expect(comparePnpm(lock(), reordered, parse, 'pnpm-lock.yaml').state).toBe('matches');
  });
  it('names the packages a new lockfile adds', () => {
    const newer = lock('  b@2.0.0:\n    resolution: {integrity: sha512-y}\n').replace(
      'snapshots:\n  a@1.0.0: {}\n',
      'snapshots:\n  a@1.0.0: {}\n  b@2.0.0: {}\n',
    );
    const c = comparePnpm(newer, lock(), parse, 'pnpm-lock.yaml');
    expect(c).toMatchObject({ state: 'differs' });
    expect(c.why).toContain('b@2.0.0');
  });
  it('an install without some kinds of dependency (.modules.yaml `included`): the lockfile filtered as pnpm filters it, through transitive dependencies, peers and aliases', () => {
    // app: a (needs t), x (an alias of real), p (a peer of a); dev d (needs t and dt); optional o.
    const pkg = (k: string): string => `  ${k}:\n    resolution: {integrity: sha512-${k.length}}\n`;
    const dep = (name: string, version: string): string =>
      `      ${name}:\n        specifier: ^1\n        version: ${version}\n`;
    const full = [
      `lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n${dep('a', '1.0.0')}${dep('x', 'real@1.0.0')}${dep('p', '1.0.0(a@1.0.0)')}    devDependencies:\n${dep('d', '1.0.0')}    optionalDependencies:\n${dep('o', '1.0.0')}`,
      `packages:\n${['a@1.0.0', 'real@1.0.0', 'p@1.0.0', 't@1.0.0', 'd@1.0.0', 'dt@1.0.0', 'o@1.0.0'].map(pkg).join('')}`,
      `snapshots:\n  a@1.0.0:\n    dependencies:\n      t: 1.0.0\n  real@1.0.0: {}\n  p@1.0.0(a@1.0.0):\n    dependencies:\n      a: 1.0.0\n  t@1.0.0: {}\n  d@1.0.0:\n    dependencies:\n      t: 1.0.0\n      dt: 1.0.0\n  dt@1.0.0: {}\n  o@1.0.0: {}\n`,
    ].join('');
    const without = (text: string, ...names: string[]): string =>
      names.reduce(
        (t, n) =>
          t
            .replace(new RegExp(`  ${n.replace(/[()]/g, '\\$&')}:\\n(    .*\\n)*`, 'g'), '')
            .replace(new RegExp(`  ${n.replace(/[()]/g, '\\$&')}: \\{\\}\\n`, 'g'), ''),
        text,
      );
    const prod = without(full.replace(`    devDependencies:\n${dep('d', '1.0.0')}`, ''), 'd@1.0.0', 'dt@1.0.0');
    const modules = (included: string): string => `included:\n${included}layoutVersion: 5\n`;
    const noDev = modules('  dependencies: true\n  devDependencies: false\n  optionalDependencies: true\n');
    const c = comparePnpm(full, prod, parse, 'pnpm-lock.yaml', noDev);
    expect(c).toMatchObject({ state: 'matches', why: expect.stringContaining('without devDependencies') });
    // Without .modules.yaml, or with it saying everything was installed, the same tree is stale.
    expect(comparePnpm(full, prod, parse, 'pnpm-lock.yaml').state).toBe('differs');
    expect(
      comparePnpm(
        full,
        prod,
        parse,
        'pnpm-lock.yaml',
        modules('  dependencies: true\n  devDependencies: true\n  optionalDependencies: true\n'),
      ).state,
    ).toBe('differs');
    // A package the kept ones need is missing (t, which a needs), or the peer-keyed snapshot: stale, and named.
    expect(comparePnpm(full, without(prod, 't@1.0.0'), parse, 'pnpm-lock.yaml', noDev)).toMatchObject({
      state: 'differs',
      why: expect.stringContaining('t@1.0.0'),
    });
    expect(comparePnpm(full, without(prod, 'real@1.0.0'), parse, 'pnpm-lock.yaml', noDev)).toMatchObject({
      state: 'differs',
      why: expect.stringContaining('real@1.0.0'),
    });
    // --no-optional as well: o goes too.
    const neither = modules('  dependencies: true\n  devDependencies: false\n  optionalDependencies: false\n');
    const bare = without(prod.replace(`    optionalDependencies:\n${dep('o', '1.0.0')}`, ''), 'o@1.0.0');
    expect(comparePnpm(full, bare, parse, 'pnpm-lock.yaml', neither)).toMatchObject({
      state: 'matches',
      why: expect.stringContaining('without devDependencies and optionalDependencies'),
    });
  });
});

describe('yarn', () => {
  const berryLock = `__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"a@npm:^1.0.0":\n  version: 1.0.0\n  resolution: "a@npm:1.0.0"\n  linkType: hard\n\n"fsevents@npm:^2.0.0":\n  version: 2.3.3\n  resolution: "fsevents@npm:2.3.3"\n  conditions: os=darwin\n\n"p@workspace:.":\n  version: 0.0.0-use.local\n  resolution: "p@workspace:."\n`;
  it('berry: every resolution against .yarn-state.yml, workspaces and other platforms aside', () => {
    const state = `__metadata:\n  version: 1\n  nmMode: classic\n\n"a@npm:1.0.0":\n  locations:\n    - "node_modules/a"\n\n"p@workspace:.":\n  locations:\n    - ""\n`;
    expect(compareYarnBerry(berryLock, state, parse).state).toBe('matches');
    const c = compareYarnBerry(berryLock.replace(/a@npm:1\.0\.0/g, 'a@npm:1.1.0'), state, parse);
    expect(c.state).toBe('differs');
    expect(c.why).toContain('a@npm:1.1.0');
  });
  it('berry: a package with peer dependencies is installed as a virtual instance, and is the package yarn.lock resolves (as yarn 4.18 wrote them)', () => {
    const lock = `__metadata:\n  version: 10\n  cacheKey: 10c0\n\n"app@workspace:.":\n  version: 0.0.0-use.local\n  resolution: "app@workspace:."\n  dependencies:\n    plug: "file:vendor/plug-1.0.0.tgz"\n  languageName: unknown\n  linkType: soft\n\n"plug@file:vendor/plug-1.0.0.tgz::locator=app%40workspace%3A.":\n  version: 1.0.0\n  resolution: "plug@file:vendor/plug-1.0.0.tgz#vendor/plug-1.0.0.tgz::hash=258462&locator=app%40workspace%3A."\n  peerDependencies:\n    alpha: "*"\n  languageName: node\n  linkType: hard\n`;
    const state = `__metadata:\n  version: 1\n  nmMode: classic\n\n"app@workspace:.":\n  locations:\n    - ""\n\n"plug@virtual:0460f86c7587ee75#file:vendor/plug-1.0.0.tgz#vendor/plug-1.0.0.tgz::hash=258462&locator=app%40workspace%3A.":\n  locations:\n    - "node_modules/plug"\n`;
    expect(compareYarnBerry(lock, state, parse)).toEqual({ state: 'matches', why: '' });
    // A workspace with peer dependencies is a virtual instance too, and still a workspace.
    const workspace = `${state}\n"wa@virtual:0460f86c#workspace:packages/wa":\n  locations:\n    - "node_modules/wa"\n`;
    expect(compareYarnBerry(lock, workspace, parse)).toEqual({ state: 'matches', why: '' });
    expect(devirtualize('@s/p@virtual:ab12#npm:1.0.0')).toBe('@s/p@npm:1.0.0');
    expect(devirtualize('app@virtual:ab12#workspace:.')).toBe('app@workspace:.');
    expect(devirtualize('a@npm:1.0.0')).toBe('a@npm:1.0.0');
  });
  describe('berry: a tree less than all of yarn.lock by design (yarn workspaces focus, --production)', () => {
    // As yarn 4 wrote them for a workspace `app` (alpha, which needs lib; devDependencies devtool,
    // which needs devlib) and a workspace `wb` (beta), then `yarn workspaces focus app --production`.
    const entry = (key: string, resolution: string, deps: Record<string, string> = {}): string =>
      `"${key}":\n  version: 1.0.0\n  resolution: "${resolution}"\n${
        Object.keys(deps).length > 0
          ? `  dependencies:\n${Object.entries(deps)
              .map(([n, r]) => `    ${n}: "${r}"\n`)
              .join('')}`
          : ''
      }  linkType: hard\n`;
    const lockOf = (...entries: string[]): string =>
      `__metadata:\n  version: 10\n  cacheKey: 10c0\n\n${entries.join('\n')}`;
    const base = [
      entry('app@workspace:.', 'app@workspace:.', { alpha: 'npm:^1.0.0', devtool: 'npm:^1.0.0' }),
      entry('wb@workspace:packages/wb', 'wb@workspace:packages/wb', { beta: 'npm:^1.0.0' }),
      entry('alpha@npm:^1.0.0', 'alpha@npm:1.0.0', { lib: 'npm:^1.0.0' }),
      entry('lib@npm:^1.0.0', 'lib@npm:1.0.0'),
      entry('devtool@npm:^1.0.0', 'devtool@npm:1.0.0', { devlib: 'npm:^1.0.0' }),
      entry('devlib@npm:^1.0.0', 'devlib@npm:1.0.0'),
      entry('beta@npm:^1.0.0', 'beta@npm:1.0.0'),
    ];
    const stateOf = (...locators: string[]): string =>
      `__metadata:\n  version: 1\n  nmMode: classic\n\n${locators.map((l) => `"${l}":\n  locations:\n    - "node_modules/${l.split('@')[0]}"\n`).join('\n')}`;
    const appManifest = { name: 'app', dependencies: { alpha: '^1.0.0' }, devDependencies: { devtool: '^1.0.0' } };
    const manifests =
      (app: object = appManifest) =>
      (ws: string): string | null =>
        ws === '.'
          ? JSON.stringify(app)
          : ws === 'packages/wb'
            ? JSON.stringify({ name: 'wb', dependencies: { beta: '^1.0.0' } })
            : null;
    const production = stateOf('app@workspace:.', 'alpha@npm:1.0.0', 'lib@npm:1.0.0');

    it('a production install of one workspace matches: nothing it installed needs the absent packages, and the record says why', () => {
      const c = compareYarnBerry(lockOf(...base), production, parse, manifests());
      expect(c.state).toBe('matches');
      expect(c.why).toContain('a production install (yarn workspaces focus)');
      expect(c.why).toContain('devtool@npm:1.0.0');
      // Without the workspaces' manifests it cannot be told apart from a stale tree.
      expect(compareYarnBerry(lockOf(...base), production, parse).state).toBe('differs');
      // A focused install with devDependencies (no --production): the other workspace's packages may be absent.
      const focused = compareYarnBerry(
        lockOf(...base),
        stateOf('app@workspace:.', 'alpha@npm:1.0.0', 'lib@npm:1.0.0', 'devtool@npm:1.0.0', 'devlib@npm:1.0.0'),
        parse,
        manifests(),
      );
      expect(focused).toMatchObject({ state: 'matches' });
      expect(focused.why).toContain('a focused install');
      expect(focused.why).toContain('beta@npm:1.0.0');
    });

    it('still stale when the tree lacks anything it needs: a dependency, one of its own, or a devDependency beside installed ones', () => {
      // yarn.lock gained a dependency of app's.
      const gamma = lockOf(
        ...base.map((e) => e.replace('alpha: "npm:^1.0.0"', 'alpha: "npm:^1.0.0"\n    gamma: "npm:^1.0.0"')),
        entry('gamma@npm:^1.0.0', 'gamma@npm:1.0.0'),
      );
      const withGamma = manifests({ ...appManifest, dependencies: { alpha: '^1.0.0', gamma: '^1.0.0' } });
      expect(compareYarnBerry(gamma, production, parse, withGamma)).toMatchObject({
        state: 'differs',
        why: expect.stringContaining('gamma@npm:1.0.0'),
      });
      // A package a dependency needs.
      expect(
        compareYarnBerry(lockOf(...base), stateOf('app@workspace:.', 'alpha@npm:1.0.0'), parse, manifests()).state,
      ).toBe('differs');
      // A full install (devtool is there) and a devDependency landed since: the new one is wanted.
      const devnew = lockOf(...base, entry('devnew@npm:^1.0.0', 'devnew@npm:1.0.0'));
      const full = stateOf(
        'app@workspace:.',
        'alpha@npm:1.0.0',
        'lib@npm:1.0.0',
        'devtool@npm:1.0.0',
        'devlib@npm:1.0.0',
        'wb@workspace:packages/wb',
        'beta@npm:1.0.0',
      );
      expect(
        compareYarnBerry(
          devnew,
          full,
          parse,
          manifests({ ...appManifest, devDependencies: { devtool: '^1.0.0', devnew: '^1.0.0' } }),
        ).state,
      ).toBe('differs');
      // An alias (`x: npm:real@^1`) needs the package it names.
      const aliased = lockOf(
        entry('app@workspace:.', 'app@workspace:.', { x: 'npm:real@^1.0.0' }),
        entry('x@npm:real@^1.0.0', 'real@npm:1.0.0'),
        entry('devtool@npm:^1.0.0', 'devtool@npm:1.0.0'),
      );
      expect(
        compareYarnBerry(
          aliased,
          stateOf('app@workspace:.'),
          parse,
          manifests({ name: 'app', dependencies: { x: 'npm:real@^1.0.0' }, devDependencies: { devtool: '^1.0.0' } }),
        ).state,
      ).toBe('differs');
      // A package nobody listed is never a partial install.
      expect(
        compareYarnBerry(
          lockOf(...base),
          `${production}\n"extra@npm:1.0.0":\n  locations:\n    - "node_modules/extra"\n`,
          parse,
          manifests(),
        ).state,
      ).toBe('differs');
    });
  });
  it('classic: patterns and resolved URLs against .yarn-integrity', () => {
    const lock = `# yarn lockfile v1\n\n\na@^1.0.0, a@^1.0.1:\n  version "1.0.1"\n  resolved "https://r/a-1.0.1.tgz#ab"\n\n"@s/b@2":\n  version "2.0.0"\n  resolved "https://r/b-2.0.0.tgz#cd"\n`;
    expect([...parseYarnClassic(lock)]).toEqual([
      ['a@^1.0.0', 'https://r/a-1.0.1.tgz#ab'],
      ['a@^1.0.1', 'https://r/a-1.0.1.tgz#ab'],
      ['@s/b@2', 'https://r/b-2.0.0.tgz#cd'],
    ]);
    const integrity = JSON.stringify({
      lockfileEntries: {
        'a@^1.0.0': 'https://r/a-1.0.1.tgz#ab',
        'a@^1.0.1': 'https://r/a-1.0.1.tgz#ab',
        '@s/b@2': 'https://r/b-2.0.0.tgz#cd',
      },
    });
    expect(compareYarnClassic(lock, integrity).state).toBe('matches');
    expect(compareYarnClassic(lock.replace('b-2.0.0', 'b-2.0.1'), integrity).why).toContain('@s/b@2');
  });
});

describe('no lockfile: package.json against the installed packages', () => {
  const installed: Record<string, string> = { a: '1.2.3', b: '0.2.5' };
  const read = (name: string): string | null =>
    installed[name] ? JSON.stringify({ name, version: installed[name] }) : null;
  it('matches what satisfies each range, and names what is missing or out of range', () => {
    expect(
      comparePackageJson(
        JSON.stringify({
          dependencies: { a: '^1.0.0' },
          devDependencies: { b: '~0.2.0' },
          optionalDependencies: { c: '1' },
        }),
        read,
      ).state,
    ).toBe('matches');
    const c = comparePackageJson(JSON.stringify({ dependencies: { a: '^2.0.0', d: 'latest' } }), read);
    expect(c.state).toBe('differs');
    expect(c.why).toContain('(d)');
    expect(c.why).toContain('a 1.2.3, wants ^2.0.0');
  });
  it.each([
    ['1.2.3', '1.2.3', true],
    ['1.2.3', '1.2.4', false],
    ['^1.2.3', '1.9.0', true],
    ['^1.2.3', '2.0.0', false],
    ['^1.2.3', '1.2.2', false],
    ['^0.2.3', '0.2.9', true],
    ['^0.2.3', '0.3.0', false],
    ['^0.0.3', '0.0.4', false],
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['1.x', '1.5.0', true],
    ['1.2', '1.3.0', false],
    ['*', '9.9.9', true],
    ['>=2', '2.0.1', true],
    ['>=2', '1.9.9', false],
    ['latest', '1.0.0', null],
    ['file:../a', '1.0.0', null],
    ['^1 || ^2', '2.0.0', null],
  ] as const)('satisfies(%s, %s) is %s', (range, version, want) => {
    expect(satisfies(range, version)).toBe(want);
  });
});

describe('which lockfile an installed tree came from, when several are tracked', () => {
  const reader = (files: Record<string, string>) => ({
    read: (rel: string) => files[rel] ?? null,
    exists: (rel: string) => rel in files || Object.keys(files).some((f) => f.startsWith(`${rel}/`)),
  });
  const both = { 'package-lock.json': '{}', 'pnpm-lock.yaml': '' };
  it('the installed-state file names it, not a fixed order', () => {
    const r1 = reader({ ...both, 'node_modules/.modules.yaml': 'layoutVersion: 5\n' });
    expect(pickLockfile(r1.read, r1.exists, 'node_modules')).toEqual({ lockfile: 'pnpm-lock.yaml', manager: 'pnpm' });
    const r2 = reader({ ...both, 'node_modules/.package-lock.json': '{}' });
    expect(pickLockfile(r2.read, r2.exists, 'node_modules')).toEqual({ lockfile: 'package-lock.json', manager: 'npm' });
  });
  it('else packageManager in package.json, else the first present; in a subfolder, its own', () => {
    const r = reader({ ...both, 'package.json': '{"packageManager":"pnpm@9.15.9"}' });
    expect(pickLockfile(r.read, r.exists, 'node_modules').lockfile).toBe('pnpm-lock.yaml');
    const plain = reader(both);
    expect(pickLockfile(plain.read, plain.exists, 'node_modules').lockfile).toBe('package-lock.json');
    const sub = reader({ 'web/yarn.lock': '', 'pnpm-lock.yaml': '' });
    expect(pickLockfile(sub.read, sub.exists, 'web/node_modules').lockfile).toBe('web/yarn.lock');
  });
  it('a tree with no installed-state file is unknown, not stale', async () => {
    const r = reader({ 'package-lock.json': npmLock({}), 'node_modules/a/package.json': '{}' });
    expect((await checkInstalled(r.read, r.exists, 'node_modules')).state).toBe('unknown');
  });
  it('the install command for the hint follows the manager', () => {
    expect(installCommand('pnpm', 'pnpm-lock.yaml')).toBe('pnpm install --frozen-lockfile');
    expect(installCommand('npm', 'package-lock.json')).toBe('npm ci');
    expect(installCommand(null, null)).toBe('npm install');
  });
});
