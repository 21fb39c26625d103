import { describe, expect, it } from 'vitest';
import { gateSetupSteps, isInstallStep } from '../../src/queue/gate-deps.js';
import { failureText } from '../../src/queue/failure-text.js';
import { namesAny } from '../../src/queue/suspects.js';
import { describeSnapshots, foldersOf, lockfilesOf } from '../../src/queue/gate-deps.js';
import { depsStaleMessage } from '../../src/land/deps.js';

describe("the gate's setup steps", () => {
  it.each([
    ['npm ci', true],
    ['npm install --offline', true],
    ['pnpm install --frozen-lockfile', true],
    ['  yarn', true],
    ['yarn install --immutable', true],
    ['bun install', true],
    ['npm run build', false],
    ['npx prisma generate', false],
    ['make deps', false],
  ])('%j installs: %s', (run, installs) => {
    expect(isInstallStep({ id: 's', run })).toBe(installs);
    expect(isInstallStep({ id: 's', run: run.trim().split(/\s+/) })).toBe(installs);
  });

  it('`gate:` decides over the command: install, always, never', () => {
    expect(isInstallStep({ id: 's', run: 'make deps', gate: 'install' })).toBe(true);
    expect(isInstallStep({ id: 's', run: 'npm ci', gate: false })).toBe(false);
    const setup = [
      { id: 'deps', run: 'npm ci' },
      { id: 'gen', run: 'npm run gen', gate: true as const },
      { id: 'seed', run: 'npm run seed' },
    ];
    expect(gateSetupSteps(setup, false).map((s) => s.id)).toEqual(['gen']);
    expect(gateSetupSteps(setup, true).map((s) => s.id)).toEqual(['deps', 'gen']);
  });
});

describe('the likely culprits of a failing gate', () => {
  it('a path the failure names, as a path: not inside a longer name, not in the header that quotes the command', () => {
    expect(namesAny('FAIL src/impl/util.test.js (3 tests)', ['src/impl/util.test.js'])).toBe(true);
    expect(namesAny('    at f (/w/.queue-x/src/impl/util.js:12:3)', ['src/impl/util.js'])).toBe(true);
    expect(namesAny('FAIL src/impl/util.test.js', ['src/impl/util.js'])).toBe(false);
    expect(namesAny('see myutil.js', ['util.js'])).toBe(false);
    expect(namesAny('x.c failed', ['x.c'])).toBe(false); // too short to tell
    expect(failureText('### verify gate: ! test -e culprit.txt\nFAIL broken-t05.txt\n')).toBe('FAIL broken-t05.txt\n');
  });
});

describe("the gate's and the land's words about dependencies (issue 41)", () => {
  it("a pnpm workspace's folders of one lockfile are said once, and the snapshots it ran with summarised", () => {
    const folders = ['node_modules', ...Array.from({ length: 16 }, (_, i) => `packages/p${i}/node_modules`)];
    expect(lockfilesOf(folders.map(() => ({ lockfile: { path: 'pnpm-lock.yaml' } })))).toBe('pnpm-lock.yaml');
    expect(foldersOf(folders)).toBe('node_modules and 16 more folders');
    expect(foldersOf(['node_modules', 'web/node_modules'])).toBe('node_modules, web/node_modules');
    const snaps = folders.map((p, i) => ({
      path: p,
      key: `${String(i).padStart(2, '0')}aaaaaaaaaaaaaa`,
      lockfile: 'pnpm-lock.yaml',
      how: 'installed' as const,
    }));
    expect(describeSnapshots(snaps)).toBe(
      'node_modules and 16 more folders: 17 snapshots (installed from the integrated pnpm-lock.yaml)',
    );
    expect(
      describeSnapshots([
        { path: 'node_modules', key: '1a2b3c4d5e6f7a8b', lockfile: 'package-lock.json', how: 'main' },
      ]),
    ).toBe("node_modules: snapshot 1a2b3c4d5e6f (the main checkout's package-lock.json)");
    expect(describeSnapshots([])).toBe('');
  });

  it("after a lockfile lands, says what new workspaces get: the gate's snapshot (not stale), or the last good one (stale)", () => {
    const gate = depsStaleMessage(['package-lock.json'], '/r', new Map([['package-lock.json', 1]]));
    expect(gate).toMatch(
      /; new workspaces get the snapshot already installed from the landed package-lock\.json \(the merge queue's gate keeps its install\), not stale$/,
    );
    expect(gate).not.toMatch(/last good/);
    expect(depsStaleMessage(['package-lock.json'], '/r', new Map())).toMatch(
      /; until then new workspaces get the last good snapshot and are marked stale$/,
    );
    expect(
      depsStaleMessage(['pnpm-lock.yaml', 'web/package-lock.json'], '/r', new Map([['pnpm-lock.yaml', 17]])),
    ).toMatch(
      /get the 17 snapshots already installed from the landed pnpm-lock\.yaml .*; until then new workspaces get the last good snapshot of web\/package-lock\.json and are marked stale$/,
    );
  });
});
