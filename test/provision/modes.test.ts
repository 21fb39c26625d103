import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeRepo, runWarren, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, treeDigest } from '../helpers/tree.js';

/** copy, hardlink and share on real files, the sources and their skips, the budget and the cow fallback. */

interface Provisioned {
  path: string;
  mode: string;
  requested: string;
  isolated: boolean;
  method: string;
  entries: number;
  linked?: number;
  filled?: number;
  fallback?: string;
}
interface Shown {
  path: string;
  data: { provision: Provisioned[]; provisionSkips: { path: string; reason: string }[] };
  events: { kind: string; level: string; message: string; path?: string; reason?: string; used?: string }[];
}
interface Status {
  tracked: { code: string; path: string }[];
  provisioned: {
    path: string;
    mode: string;
    changed: { path: string; change: string }[];
    affectsAllSharers?: boolean;
    writtenThrough?: string[];
  }[];
  stale: boolean;
}

function repoWith(yaml: string, extra: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n.env\n.env.*\n*.local\ncache/\n',
      'package-lock.json': '{"lockfileVersion":3}\n',
      'warren.yaml': yaml,
      ...extra,
    },
  });
  makeNodeModules(repo.root);
  return repo;
}

async function make(repo: TestRepo, id: string, env: Record<string, string> = {}): Promise<Shown & { stderr: string }> {
  const made = await runWarren(['--json', 'new', 'feat', id], { cwd: repo.root, home: repo.home, env });
  expect(made.code, made.stdout + made.stderr).toBe(0);
  const shown = await repo.warrenJson<Shown>('show', id, '--events', '100');
  return { ...shown.json, stderr: made.stderr };
}

describe('provisioning sources', () => {
  it('takes .worktreeinclude patterns and warren.yaml entries, and skips missing, not-ignored and unsafe paths with events', async () => {
    const repo = repoWith(
      [
        'provision:',
        '  - { path: node_modules, mode: copy }',
        '  - { path: ../outside, mode: copy }',
        '  - { path: /etc, mode: copy }',
        '  - { path: .git/hooks, mode: copy }',
        '  - { path: package-lock.json, mode: copy }',
        '  - { path: nowhere, mode: copy }',
        '',
      ].join('\n'),
      { '.worktreeinclude': '# env files\n.env*\n!.env.production\nsettings.local\n' },
    );
    for (const f of ['.env', '.env.test', '.env.production', 'settings.local', 'other.local']) repo.write(f, `${f}\n`);
    const shown = await make(repo, 'a');
    expect(shown.data.provision.map((p) => p.path).sort()).toEqual([
      '.env',
      '.env.test',
      'node_modules',
      'settings.local',
    ]);
    for (const f of ['.env', '.env.test', 'settings.local'])
      expect(fs.readFileSync(path.join(shown.path, f), 'utf8')).toBe(`${f}\n`);
    expect(fs.existsSync(path.join(shown.path, '.env.production'))).toBe(false);
    expect(fs.existsSync(path.join(shown.path, 'other.local'))).toBe(false);
    const skips = Object.fromEntries(shown.data.provisionSkips.map((s) => [s.path, s.reason]));
    expect(skips).toEqual({
      '../outside': 'unsafe',
      '/etc': 'unsafe',
      '.git/hooks': 'unsafe',
      'package-lock.json': 'not-ignored',
      nowhere: 'missing',
    });
    expect(shown.events.filter((e) => e.kind === 'provision.skip')).toHaveLength(5);
    expect(shown.stderr).toContain('skipped package-lock.json (not-ignored)');
    // warren's own paths never make the workspace dirty: rm goes through.
    expect((await repo.warren('rm', 'a')).code).toBe(0);
  });
});

describe('copy', () => {
  it('keeps relative symlinks verbatim, isolates, and lists changes against the manifest', async () => {
    const repo = repoWith('provision:\n  - { path: node_modules, mode: copy }\n');
    const main = path.join(repo.root, 'node_modules');
    const digest = treeDigest(main);
    const shown = await make(repo, 'a');
    expect(shown.data.provision[0]).toMatchObject({ mode: 'copy', isolated: true, method: 'cp -a' });
    const nm = path.join(shown.path, 'node_modules');
    expect(fs.readlinkSync(path.join(nm, '.bin/left-pad'))).toBe('../left-pad/cli.js');
    expect(treeDigest(nm)).toBe(digest);
    fs.writeFileSync(path.join(nm, 'dep/lib/main.js'), 'changed\n');
    fs.rmSync(path.join(nm, 'left-pad/index.js'));
    expect(treeDigest(main)).toBe(digest);
    const status = await repo.warrenJson<Status>('status', 'a');
    expect(status.json.provisioned[0]?.changed).toEqual([
      { path: 'node_modules/dep/lib/main.js', change: 'modified' },
      { path: 'node_modules/left-pad/index.js', change: 'deleted' },
    ]);
  });

  it('skips an entry over the budget with a warning naming it, and still creates the workspace', async () => {
    const repo = repoWith(
      'provision_budget: { entries: 5 }\nprovision:\n  - { path: node_modules, mode: copy }\n  - { path: .env, mode: copy }\n',
    );
    repo.write('.env', 'A=1\n');
    const shown = await make(repo, 'a');
    expect(shown.data.provision.map((p) => p.path)).toEqual(['.env']);
    expect(shown.data.provisionSkips).toEqual([
      expect.objectContaining({ path: 'node_modules', reason: 'over-budget' }),
    ]);
    const warning = shown.events.find((e) => e.kind === 'provision.skip');
    expect(warning?.level).toBe('warn');
    expect(warning?.message).toMatch(/node_modules.*over the budget of 5/);
    expect(fs.existsSync(path.join(shown.path, 'node_modules'))).toBe(false);
  });
});

describe('hardlink', () => {
  it('links what it can, copies what the kernel refuses to link (fill pass), and detects a write through a link', async () => {
    const repo = repoWith('provision:\n  - { path: node_modules, mode: hardlink }\n');
    // An immutable file: link(2) refuses it even for root (EPERM), like protected_hardlinks does for others' files.
    const refused = path.join(repo.root, 'node_modules/dep/package.json');
    execFileSync('chattr', ['+i', refused]);
    onTestFinished(() => {
      execFileSync('chattr', ['-i', refused]);
    });
    const shown = await make(repo, 'a');
    const rec = shown.data.provision[0];
    expect(rec).toMatchObject({ mode: 'hardlink', isolated: false, filled: 1 });
    expect(rec?.linked).toBeGreaterThan(4);
    expect(shown.events.find((e) => e.kind === 'provision.fill')?.message).toMatch(/refused to hard-link 1 file/);
    const nm = path.join(shown.path, 'node_modules');
    expect(fs.statSync(path.join(nm, 'dep/package.json')).ino).not.toBe(fs.statSync(refused).ino);
    expect(fs.readFileSync(path.join(nm, 'dep/package.json'), 'utf8')).toBe(fs.readFileSync(refused, 'utf8'));
    expect(fs.statSync(path.join(nm, 'dep/lib/main.js')).ino).toBe(
      fs.statSync(path.join(repo.root, 'node_modules/dep/lib/main.js')).ino,
    );
    expect(fs.readlinkSync(path.join(nm, '.bin/left-pad'))).toBe('../left-pad/cli.js');

    expect(rec).not.toHaveProperty('manifest');
    fs.appendFileSync(path.join(nm, 'dep/lib/main.js'), '// in place\n');
    const status = await repo.warrenJson<Status>('status', 'a');
    expect(status.json.provisioned[0]?.writtenThrough).toEqual(['node_modules/dep/lib/main.js']);
  });
});

describe('share', () => {
  it('is one symlink, never untracked in git status, flagged as not isolated, and rm leaves the target alone', async () => {
    const repo = repoWith('provision:\n  - { path: node_modules, mode: share }\n');
    const main = path.join(repo.root, 'node_modules');
    const a = await make(repo, 'a');
    const b = await make(repo, 'b');
    const link = path.join(a.path, 'node_modules');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe(main);
    // `.gitignore` says node_modules/ (directories only): without warren's exclude line the link would be untracked.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: a.path, encoding: 'utf8' })).toBe('');
    // b found a's line standing and asked git nothing: git agrees.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: b.path, encoding: 'utf8' })).toBe('');
    expect(a.events.some((e) => e.kind === 'provision.excluded')).toBe(true);
    fs.writeFileSync(path.join(b.path, 'node_modules/dep/lib/main.js'), 'changed by b\n');
    const status = await repo.warrenJson<Status>('status', 'a');
    expect(status.json.provisioned[0]).toMatchObject({
      mode: 'share',
      affectsAllSharers: true,
      changed: [{ path: 'node_modules/dep/lib/main.js', change: 'modified' }],
    });
    const audit = a.data.provision[0];
    expect(audit?.isolated).toBe(false);
    // No manifest of the shared folder is taken at new (issue 41): status reads the clock instead.
    expect(audit).not.toHaveProperty('manifest');
    expect(fs.readdirSync(path.join(repo.home, 'provision'), { recursive: true }).join(',')).not.toContain('manifest');
    const digest = treeDigest(main);
    expect((await repo.warren('rm', 'a')).code).toBe(0);
    expect((await repo.warren('rm', 'b')).code).toBe(0);
    expect(treeDigest(main)).toBe(digest);
    // The exclude lines go with the last workspace that needed them.
    expect(fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8')).not.toContain('/node_modules');
  });
});

describe('keeping provisioned paths out of the workspace status', () => {
  it('asks git where the workspace ignores by other rules than the main checkout, and adds the exclude line', async () => {
    // The committed .gitignore (what the workspace gets) does not ignore vendor/; the main checkout's edited one does.
    const repo = repoWith('provision:\n  - { path: vendor, mode: copy }\n');
    repo.write('.gitignore', 'node_modules/\nvendor/\n');
    repo.write('vendor/lib.php', '<?php\n');
    const a = await make(repo, 'a');
    expect(a.data.provision.map((p) => p.path)).toEqual(['vendor']);
    expect(fs.readFileSync(path.join(a.path, '.gitignore'), 'utf8')).not.toContain('vendor');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: a.path, encoding: 'utf8' })).toBe('');
    expect(fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8')).toContain('/vendor\n');
    expect(a.events.some((e) => e.kind === 'provision.excluded')).toBe(true);
  });

  it('adds nothing where the .gitignore files above the path read the same in both checkouts', async () => {
    const repo = repoWith('provision:\n  - { path: node_modules, mode: copy }\n');
    const a = await make(repo, 'a');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: a.path, encoding: 'utf8' })).toBe('');
    expect(fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8')).not.toContain('warren');
    expect(a.events.some((e) => e.kind === 'provision.excluded')).toBe(false);
  });
});

describe('cow fallback ladder', () => {
  it('falls back to the best copy when overlay is unavailable, and the event says which and why', async () => {
    const repo = repoWith('provision:\n  - { path: node_modules, mode: cow }\n');
    const shown = await make(repo, 'a', { WARREN_COW: 'off' });
    expect(shown.data.provision[0]).toMatchObject({
      path: 'node_modules',
      requested: 'cow',
      mode: 'copy',
      isolated: true,
      method: 'cp -a',
    });
    const event = shown.events.find((e) => e.kind === 'provision.fallback');
    expect(event).toMatchObject({ level: 'warn', used: 'cp -a', reason: 'overlay disabled by WARREN_COW=off' });
    expect(event?.message).toBe('node_modules: cow fell back to cp -a because overlay disabled by WARREN_COW=off');
    expect(shown.stderr).toContain('cow fell back to cp -a because overlay disabled by WARREN_COW=off');
    expect(treeDigest(path.join(shown.path, 'node_modules'))).toBe(treeDigest(path.join(repo.root, 'node_modules')));
  });
});
