import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, unmountUnder } from '../helpers/tree.js';

/** `warren status` a person can read: one line per package, `--files` for every file; skips that say what really happens. */

interface Status {
  provisioned: {
    path: string;
    changedCount: number;
    changed: { path: string; change: string }[];
    packages?: { name: string; kind: string; change: string; before?: string; after?: string; changes: number }[];
  }[];
}

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

function repoWith(mode: string): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n',
      'package-lock.json': '{"lockfileVersion":3}\n',
      'warren.yaml': `provision:\n  - { path: node_modules, mode: ${mode} }\n`,
    },
  });
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  makeNodeModules(repo.root);
  return repo;
}

/** What `npm install is-odd@3.0.1 left-pad@1.3.1 && npm uninstall dep` does to the tree, by hand. */
function install(nm: string): void {
  fs.mkdirSync(path.join(nm, 'is-odd/lib'), { recursive: true });
  fs.writeFileSync(path.join(nm, 'is-odd/package.json'), '{"name":"is-odd","version":"3.0.1"}\n');
  for (let i = 0; i < 11; i++) fs.writeFileSync(path.join(nm, `is-odd/lib/f${i}.js`), `${i}\n`);
  fs.writeFileSync(path.join(nm, 'left-pad/package.json'), '{"name":"left-pad","version":"1.3.1"}\n');
  fs.writeFileSync(path.join(nm, 'left-pad/index.js'), 'module.exports = () => "1.3.1";\n');
  fs.rmSync(path.join(nm, 'dep'), { recursive: true });
  fs.writeFileSync(path.join(nm, '.package-lock.json'), '{"lockfileVersion":3,"changed":true}\n');
}

async function checkSummary(repo: TestRepo, mode: string): Promise<void> {
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
  expect(made.code, made.stderr).toBe(0);
  install(path.join(made.json.path, 'node_modules'));
  const human = await repo.warren('status', 'a');
  expect(human.code, human.stderr).toBe(0);
  const lines = human.stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`node_modules (${mode}): `));
  expect(lines[at]).toMatch(/^node_modules \(\w+\): \d+ change\(s\) in 3 package\(s\)$/);
  expect(lines.slice(at + 1, at + 5)).toEqual([
    '  added    is-odd 3.0.1 (14 changes)',
    '  changed  .package-lock.json (1 change)',
    '  changed  left-pad 1.3.0 → 1.3.1 (2 changes)',
    expect.stringMatching(/^ {2}removed {2}dep 2\.0\.0 \(\d+ changes?\)$/),
  ]);
  expect(human.stdout).toContain('`warren status a --files` lists every changed file');

  const files = await repo.warren('status', 'a', '--files');
  expect(files.stdout).toContain('  added    node_modules/is-odd/lib/f10.js');
  expect(files.stdout).toContain('  modified node_modules/left-pad/index.js');
  expect(files.stdout).not.toContain('is-odd 3.0.1');

  const json = await repo.warrenJson<Status>('status', 'a');
  const p = json.json.provisioned[0];
  expect(p?.changed.length).toBe(p?.changedCount);
  expect(p?.packages?.find((k) => k.name === 'left-pad')).toEqual({
    name: 'left-pad',
    kind: 'package',
    change: 'changed',
    before: '1.3.0',
    after: '1.3.1',
    changes: 2,
  });
  expect(p?.packages?.find((k) => k.name === 'dep')).toMatchObject({ change: 'removed', before: '2.0.0' });
  expect(p?.packages?.find((k) => k.name === 'dep')?.after).toBeUndefined();
}

describe('status per package', () => {
  it('copy: one line per package, with versions; --files lists every file; --json has both', async () => {
    await checkSummary(repoWith('copy'), 'copy');
  });

  it.skipIf(noOverlay !== null)('cow: the same, read from the upper layer over the snapshot', async () => {
    await checkSummary(repoWith('cow'), 'cow');
  });

  it('a file path has no summary, and a tree that is not node_modules is summarised per top-level entry', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'vendor/\n.env\n',
        'warren.yaml': 'provision:\n  - { path: vendor, mode: copy }\n  - { path: .env, mode: copy }\n',
      },
    });
    repo.write('vendor/acme/lib/a.php', 'a\n');
    repo.write('vendor/autoload.php', 'x\n');
    repo.write('.env', 'A=1\n');
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
    fs.mkdirSync(path.join(made.json.path, 'vendor/newco'));
    fs.writeFileSync(path.join(made.json.path, 'vendor/newco/b.php'), 'b\n');
    fs.writeFileSync(path.join(made.json.path, 'vendor/acme/lib/a.php'), 'changed\n');
    fs.writeFileSync(path.join(made.json.path, '.env'), 'A=2\n');
    const human = await repo.warren('status', 'a');
    expect(human.stdout).toContain(
      'vendor (copy): 3 change(s)\n  added    newco (2 changes)\n  changed  acme (1 change)\n',
    );
    expect(human.stdout).toContain('.env (copy): 1 change(s)\n  modified .env\n');
  });
});

describe('skips that say what really happens', () => {
  it('an untracked file git does not ignore: git does not carry it, so the workspace will not have it', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'warren.yaml': 'provision:\n  - { path: .env, mode: copy }\n  - { path: .gitignore, mode: copy }\n',
      },
    });
    repo.write('.env', 'SECRET=1\n');
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);
    expect(fs.existsSync(path.join(made.json.path, '.env'))).toBe(false);
    expect(made.stderr).toContain(
      'skipped .env (not-ignored): git does not ignore .env, and git does not carry untracked files into a new worktree, so the workspace will not have it; to bring it, add it to .gitignore or to .git/info/exclude (your own, never committed; warren then provisions it), or commit it',
    );
    expect(made.stderr).toContain(
      "skipped .gitignore (not-ignored): git tracks .gitignore, so the workspace already has the branch's version of it",
    );
    expect(made.stderr).not.toContain('git carries it');
  });

  it('listed in .worktreeinclude but not ignored: left out, as git leaves it, and said', async () => {
    const repo = makeRepo({ files: { '.gitignore': 'node_modules/\n', '.worktreeinclude': '.env\n' } });
    repo.write('.env', 'SECRET=1\n');
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);
    expect(fs.existsSync(path.join(made.json.path, '.env'))).toBe(false);
    expect(made.stderr).toContain(
      'skipped .env (not-ignored): git does not ignore .env, and git does not carry untracked files into a new worktree',
    );
  });
});
