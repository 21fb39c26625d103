import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hintMessage, provisionLine, trapMode, unprovisionedTraps } from '../../src/provision/hint.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules } from '../helpers/tree.js';

/**
 * `new` points at the trap the README names (issue 39): ignored paths the project's tooling
 * reads (node_modules, a venv, `.env`, vendor/) in the main checkout that nothing provisions
 * are said once per repository, with the `provision:` lines to add.
 */

interface Created {
  state: string;
  warnings: { kind: string; level: string; message: string }[];
  provisionHint?: { paths: { path: string; mode: string }[]; lines: string[] };
}

function repoWith(files: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({
    files: { '.gitignore': 'node_modules/\n.env\n.venv/\n', 'package.json': '{"name":"app"}\n', ...files },
  });
  makeNodeModules(repo.root);
  fs.writeFileSync(path.join(repo.root, '.env'), 'SECRET=1\n');
  return repo;
}

const hintsIn = (stderr: string): string[] =>
  stderr.split('\n').filter((l) => l.includes('not provisioned: this workspace does not have'));

describe('the hint at new: ignored paths nothing provisions', () => {
  it('says it once, with the provision: lines, as a warning, an event and a --json field; never again, even after rm', async () => {
    const repo = repoWith();
    const first = await repo.warren('new', 'feat', 'a');
    expect(first.code, first.stderr).toBe(0);
    expect(hintsIn(first.stderr)).toEqual([
      'warren: warn: .env and node_modules are in the main checkout, ignored by git, and not provisioned: this workspace does not have them, so a command that needs them fails here (`npm test` exits 127 without node_modules). To bring them into every workspace, add under `provision:` in warren.yaml `- { path: .env, mode: copy }` `- { path: node_modules, mode: cow }` (or list them in .worktreeinclude, copied). Said once for this repository.',
    ]);
    const shown = await repo.warrenJson<{ events: { kind: string; level: string }[] }>('show', 'a');
    expect(shown.json.events.filter((e) => e.kind === 'provision.hint').map((e) => e.level)).toEqual(['warn']);

    const second = await repo.warrenJson<Created>('new', 'feat', 'b');
    expect(second.code, second.stderr).toBe(0);
    expect(second.json.provisionHint).toBeUndefined();
    expect(second.json.warnings.filter((w) => w.kind === 'provision.hint')).toEqual([]);
    expect(hintsIn(second.stderr)).toEqual([]);

    // The memory is the project's, not a task's: removing every task does not bring it back.
    expect((await repo.warren('rm', 'a')).code).toBe(0);
    expect((await repo.warren('rm', 'b')).code).toBe(0);
    const third = await repo.warren('new', 'feat', 'c');
    expect(hintsIn(third.stderr)).toEqual([]);

    // A trap that appears later is news: said once, alone.
    fs.mkdirSync(path.join(repo.root, '.venv', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\n');
    const fourth = await repo.warrenJson<Created>('new', 'feat', 'd');
    expect(fourth.json.provisionHint).toEqual({
      paths: [{ path: '.venv', mode: 'cow' }],
      lines: ['- { path: .venv, mode: cow }'],
    });
    expect(fourth.json.warnings.filter((w) => w.kind === 'provision.hint')).toHaveLength(1);
    expect((await repo.warrenJson<Created>('new', 'feat', 'e')).json.provisionHint).toBeUndefined();
  });

  it('--json carries the paths and lines the first time', async () => {
    const repo = repoWith();
    const made = await repo.warrenJson<Created>('new', 'feat', 'a');
    expect(made.json.provisionHint).toEqual({
      paths: [
        { path: '.env', mode: 'copy' },
        { path: 'node_modules', mode: 'cow' },
      ],
      lines: ['- { path: .env, mode: copy }', '- { path: node_modules, mode: cow }'],
    });
    expect(made.json.warnings.find((w) => w.kind === 'provision.hint')?.level).toBe('warn');
  });

  it('says nothing where they are provisioned (warren.yaml or .worktreeinclude) or not ignored', async () => {
    const provisioned = repoWith({
      'warren.yaml': 'provision:\n  - { path: node_modules, mode: copy }\n',
      '.worktreeinclude': '.env\n',
    });
    const made = await provisioned.warrenJson<Created>('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.provisionHint).toBeUndefined();
    // Both are provisioned as asked, with nothing to say about them (other warnings are the machine's: ports in use).
    expect(made.json.warnings.filter((w) => w.kind.startsWith('provision.'))).toEqual([]);

    // Untracked but not ignored: git's business (a .env that would be committed), not this hint's.
    const unignored = makeRepo({ files: { '.gitignore': 'dist/\n', 'README.md': '# r\n' } });
    fs.writeFileSync(path.join(unignored.root, '.env'), 'SECRET=1\n');
    const plain = await unignored.warrenJson<Created>('new', 'feat', 'a');
    expect(plain.json.provisionHint).toBeUndefined();
  });
});

describe('the hint, on plain data', () => {
  it('knows the traps and their modes', () => {
    expect(['node_modules', '.venv', 'venv', 'vendor'].map(trapMode)).toEqual(['cow', 'cow', 'cow', 'cow']);
    expect(['.env', '.env.local', '.env.development.local'].map(trapMode)).toEqual(['copy', 'copy', 'copy']);
    expect(['.env.warren', 'src', '.envrc', '.env.a b', 'dist'].map(trapMode)).toEqual([null, null, null, null, null]);
  });

  it('leaves out what a provisioned path covers, around or inside it', () => {
    const names = ['src', 'node_modules', '.env', '.env.local', 'vendor', 'venv'];
    expect(unprovisionedTraps(names, ['node_modules/.bin', '.env', 'vendor/bundle/x'])).toEqual([
      { path: '.env.local', mode: 'copy' },
      { path: 'venv', mode: 'cow' },
    ]);
    expect(unprovisionedTraps(names, [])).toHaveLength(5);
  });

  it('says one path in the singular, with its line', () => {
    expect(provisionLine({ path: 'vendor', mode: 'cow' })).toBe('- { path: vendor, mode: cow }');
    expect(hintMessage([{ path: '.env', mode: 'copy' }])).toMatch(
      /^\.env is in the main checkout, ignored by git, and not provisioned: this workspace does not have it, so a command that needs it fails here\. To bring it .* `- \{ path: \.env, mode: copy \}` /,
    );
  });
});
