import { describe, expect, it } from 'vitest';
import { newTask } from '../helpers/land.js';
import { makeRepo } from '../helpers/repo.js';
import { gitDirAssumption, scriptsNamed } from '../../src/audit/git-dir-hooks.js';

interface AuditJson {
  sections: { name: string; data: unknown }[];
}

describe('warren audit', () => {
  it('names what the workspace owns and shares, hook drift, and compose binds of the main checkout', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'docker-compose.yml':
          'services:\n  app:\n    image: node:20\n    volumes:\n      - .:/app\n      - cache:/cache\nvolumes:\n  cache: {}\n',
        'deploy/compose.yaml':
          'services:\n  db:\n    volumes:\n      - type: bind\n        source: ..\n        target: /src\n      - type: bind\n        source: /tmp\n        target: /t\n',
      },
    });
    const ws = await newTask(repo, 'T-1');
    const r = await repo.warrenJson<AuditJson>('audit', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    const section = (name: string) => r.json.sections.find((s) => s.name === name)?.data as Record<string, unknown>;

    const scopes = Object.fromEntries(
      (section('git')['paths'] as { name: string; scope: string }[]).map((p) => [p.name, p.scope]),
    );
    expect(scopes).toMatchObject({
      HEAD: 'own',
      index: 'own',
      'logs/HEAD': 'own',
      objects: 'shared',
      refs: 'shared',
      config: 'shared',
      hooks: 'shared',
      'info/exclude': 'shared',
    });

    expect((section('hooks')['drift'] as { hooks: unknown[] }).hooks).toEqual([]);

    const binds = section('compose')['binds'] as {
      file: string;
      source: string;
      target: string;
      resolved: string;
      mainCheckout: boolean;
    }[];
    const risky = binds.filter((b) => b.mainCheckout);
    expect(risky.map((b) => [b.source, b.target, b.resolved]).sort()).toEqual([
      ['.', '/app', repo.root],
      ['..', '/src', repo.root],
    ]);
    // The workspace's own copy of the compose file binds the workspace: not a warning.
    expect(binds.filter((b) => !b.mainCheckout).map((b) => b.resolved)).toEqual(expect.arrayContaining([ws, '/tmp']));

    const human = await repo.warren('audit', 'T-1');
    expect(human.stdout).toContain('WARNING docker-compose.yml service app: .:/app binds the main checkout');
    expect(human.stdout).toMatch(/own\s+index/);
  });

  it('shows hook drift after a hook appears', async () => {
    const repo = makeRepo();
    await newTask(repo, 'T-1');
    repo.write('.git/hooks/pre-commit', '#!/bin/sh\nexit 0\n');
    const r = await repo.warren('audit', 'T-1');
    expect(r.stdout).toContain('DRIFT since');
    expect(r.stdout).toContain('hook pre-commit added');
  });
});

describe('hooks that assume .git is a folder', () => {
  it('finds .git/NAME and path.join(".git", NAME), and the local scripts a hook runs', () => {
    expect(gitDirAssumption("fs.readFileSync('.git/COMMIT_EDITMSG')")).toBe('.git/COMMIT_EDITMSG');
    expect(gitDirAssumption('path.resolve(".git", "COMMIT_EDITMSG")')).toBe('".git", "COMMIT_EDITMSG"');
    expect(gitDirAssumption('git rev-parse --git-dir; cat "$(git rev-parse --git-path COMMIT_EDITMSG)"')).toBeNull();
    expect(gitDirAssumption('cat foo.git/x')).toBeNull();
    expect(scriptsNamed('#!/bin/sh\nnpx --no-install node ./scripts/verify-commit.js "$1"\nsh ../up.sh\n')).toEqual([
      'scripts/verify-commit.js',
    ]);
  });
});
