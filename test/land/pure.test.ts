import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeBinds } from '../../src/audit/compose.js';
import { compareFingerprints, describeDrift, type Fingerprint } from '../../src/land/fingerprint.js';
import { parseNameStatusZ } from '../../src/git/parse.js';
import { classifyExclusions, compilePolicy, globProblem } from '../../src/config/protected.js';
import { isWarrenError } from '../../src/errors.js';
import { hookFolders, MESSAGE_CAP, readMessageFile } from '../../src/land/commit-hooks.js';
import type { Task } from '../../src/state/types.js';
import { tmpDir } from '../helpers/repo.js';

describe('protected-path globs', () => {
  it.each([
    ['', 'is empty'],
    ['/etc/passwd', 'is absolute'],
    ['!keep.local', 'is a negation'],
    ['../outside', 'climbs out'],
    ['a/../../b', 'climbs out'],
    ['a\\b', 'backslash'],
    ['x\0y', 'NUL'],
    ['[unclosed', 'does not compile'],
  ])('refuses %j (%s)', (glob, why) => {
    expect(globProblem(glob)).toContain(why);
  });

  it.each(['.env.testing', '**/*.local', 'config/*.secret', '*.pem'])('accepts %j', (glob) => {
    expect(globProblem(glob)).toBeNull();
  });

  it('refuses the whole policy when one glob is bad, naming it', () => {
    try {
      compilePolicy(['.env', '../x'], 'warren.yaml');
      expect.unreachable();
    } catch (err) {
      expect(isWarrenError(err, 'PROTECTED_POLICY_INVALID')).toBe(true);
      expect((err as Error).message).toContain('"../x"');
    }
  });

  it.each([
    ['.env.testing', '.env.testing', true],
    ['.env.testing', 'sub/.env.testing', true],
    ['**/*.local', 'a.local', true],
    ['**/*.local', 'deep/er/b.local', true],
    ['*.local', 'deep/b.local', true],
    ['config/*.secret', 'config/db.secret', true],
    ['config/*.secret', 'other/config/db.secret', false],
    ['.env.testing', '.env.testing.bak', false],
    ['**/*.local', 'local.txt', false],
  ])('%j matches %j: %s', (glob, file, expected) => {
    expect(compilePolicy([glob], 'test').matches(file)).toBe(expected);
  });

  it('classifies created, changed and deleted protected paths and ignores the rest', () => {
    const touched = parseNameStatusZ(
      ['A', '.env.testing', 'M', 'a.local', 'D', 'gone.local', 'M', 'src/app.ts', 'T', 'x.local', ''].join('\0'),
    );
    expect(classifyExclusions(touched, compilePolicy(['.env.testing', '**/*.local'], 'test'))).toEqual([
      { path: '.env.testing', how: 'created', why: 'protected' },
      { path: 'a.local', how: 'changed', why: 'protected' },
      { path: 'gone.local', how: 'deleted', why: 'protected' },
      { path: 'x.local', how: 'changed', why: 'protected' },
    ]);
  });

  it('also leaves out a provisioned path committed by hand', () => {
    const touched = parseNameStatusZ(['A', 'node_modules', 'M', 'src/app.ts', ''].join('\0'));
    expect(classifyExclusions(touched, compilePolicy([], 'test'), (p) => p === 'node_modules')).toEqual([
      { path: 'node_modules', how: 'created', why: 'provisioned' },
    ]);
  });
});

describe('hook fingerprints', () => {
  const fp = (hooks: Record<string, string>, extra: Partial<Fingerprint> = {}): Fingerprint => ({
    hooksDir: '/r/.git/hooks',
    hooksPath: null,
    hooksDirExists: true,
    hooks,
    configSha: 'c1',
    at: '2026-01-01T00:00:00Z',
    ...extra,
  });

  it('names hooks added, removed and changed', () => {
    const drift = compareFingerprints(
      fp({ 'pre-commit': 'a', 'commit-msg': 'b' }),
      fp({ 'pre-commit': 'z', 'pre-push': 'c' }),
    );
    expect(drift.hooks).toEqual([
      { name: 'commit-msg', change: 'removed' },
      { name: 'pre-commit', change: 'changed' },
      { name: 'pre-push', change: 'added' },
    ]);
    expect(drift.configChanged).toBe(false);
  });

  it('reports a moved hooks dir and a changed shared config', () => {
    const drift = compareFingerprints(fp({}), fp({}, { hooksDir: '/w/.husky/_', configSha: 'c2' }));
    expect(describeDrift(drift)).toEqual([
      'hooks directory moved from /r/.git/hooks to /w/.husky/_',
      'shared git config changed',
    ]);
  });

  it('finds no drift in identical fingerprints', () => {
    expect(describeDrift(compareFingerprints(fp({ h: '1' }), fp({ h: '1' }, { at: 'later' })))).toEqual([]);
  });
});

describe('compose bind mounts', () => {
  it('reads short and long syntax binds, skipping named and anonymous volumes', () => {
    const text = `
services:
  web:
    image: node
    volumes:
      - .:/app
      - ./src:/app/src:ro
      - db-data:/var/lib/db
      - /cache
  worker:
    volumes:
      - type: bind
        source: .
        target: /srv
      - type: volume
        source: db-data
        target: /data
  env:
    volumes:
      - \${PWD}:/app
volumes:
  db-data: {}
`;
    const binds = composeBinds(text, '/repo');
    expect(binds.map((b) => [b.service, b.source, b.target, b.syntax, b.resolved])).toEqual([
      ['web', '.', '/app', 'short', '/repo'],
      ['web', './src', '/app/src', 'short', '/repo/src'],
      ['worker', '.', '/srv', 'long', '/repo'],
      ['env', '${PWD}', '/app', 'short', null],
    ]);
  });

  it.each(['', 'not: [valid', 'services: 3', 'services:\n  a:\n    volumes: nope\n'])(
    'returns nothing for %j',
    (text) => {
      expect(composeBinds(text, '/repo')).toEqual([]);
    },
  );
});

describe('what a sandboxed commit hook may read', () => {
  const common = '/repo/.git';
  const main = '/repo';
  const hidden = ['/home/u', '/home/u/.warren', '/home/u/.warren/worktrees'];
  it.each([
    ['git’s own hooks folder: already readable', '/repo/.git/hooks', []],
    ["husky's .husky/_: the folder that holds it too", '/repo/.husky/_', ['/repo/.husky']],
    ['a hooks folder at the top of the main checkout', '/repo/.githooks', ['/repo/.githooks']],
    ['a folder of its own elsewhere', '/opt/hooks', ['/opt/hooks']],
    ['the main checkout itself: never', '/repo', []],
    ['a folder that holds the home folder: never', '/home', []],
    ['/: never', '/', []],
    ['a folder in the home folder', '/home/u/hooks', ['/home/u/hooks']],
  ] as const)('%s', (_, hooksDir, expected) => {
    expect(hookFolders(hooksDir, common, main, hidden)).toEqual(expected);
  });
});

describe('the message file, read back after the hooks', () => {
  const task = { id: 'T-1' } as Task;
  it('reads a regular file', () => {
    const file = path.join(tmpDir(), 'msg');
    fs.writeFileSync(file, 'feat: x\n');
    expect(readMessageFile({ task }, file)).toBe('feat: x\n');
  });

  it.each([
    ['a link to a file of the host', (file: string) => fs.symlinkSync('/etc/hostname', file), /a link/],
    ['a fifo (no writer: reading would block)', (file: string) => execFileSync('mkfifo', [file]), /not a regular file/],
    ['a folder', (file: string) => fs.mkdirSync(file), /not a regular file/],
    ['over the cap', (file: string) => fs.writeFileSync(file, Buffer.alloc(MESSAGE_CAP + 1, 'a')), /over/],
    ['deleted', () => undefined, /deleted/],
  ])('refuses %s', (_, make, why) => {
    const file = path.join(tmpDir(), 'msg');
    make(file);
    expect(() => readMessageFile({ task }, file)).toThrow(why);
  });
});
