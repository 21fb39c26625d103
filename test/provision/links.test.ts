import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, runWarren, type TestRepo } from '../helpers/repo.js';
import { unmountUnder } from '../helpers/tree.js';

/**
 * A symlink is a door: an ignored link in the main checkout that points outside the repository
 * must not stay a link in the workspace, in any mode that says "isolated". Links that stay
 * inside are kept verbatim. VCS metadata and nested worktrees are never copied.
 */

interface OutsideLink {
  path: string;
  target: string;
  action: string;
}
interface Shown {
  path: string;
  data: {
    provision: {
      path: string;
      mode: string;
      isolated: boolean;
      outsideLinks?: OutsideLink[];
      stripped?: { path: string; why: string }[];
    }[];
    provisionSkips: { path: string; reason: string; detail: string }[];
  };
  events: { kind: string; level: string; message: string }[];
}

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

/**
 * A main checkout whose ignored `.env` and `vendor/` hold links of every kind, beside an
 * `outside/` folder that is not in any repository.
 */
function doorRepo(mode: string): { repo: TestRepo; outside: string } {
  const repo = makeRepo({
    files: {
      '.gitignore': '.env\nvendor/\n',
      'README.md': 'readme\n',
      'vendor.lock': 'v1\n',
      'warren.yaml': `provision:\n  - { path: .env, mode: copy }\n  - { path: vendor, mode: ${mode} }\n`,
    },
  });
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  const outside = path.join(path.dirname(repo.root), 'outside');
  fs.mkdirSync(path.join(outside, 'shared'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'secret.env'), 'SECRET=1\n');
  fs.writeFileSync(path.join(outside, 'shared/lib.js'), 'outside lib\n');
  fs.writeFileSync(path.join(outside, 'note.txt'), 'outside note\n');
  const v = path.join(repo.root, 'vendor');
  fs.mkdirSync(path.join(v, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(v, 'lib/a.js'), 'inside\n');
  fs.symlinkSync(path.join(outside, 'secret.env'), path.join(repo.root, '.env'));
  fs.symlinkSync('lib/a.js', path.join(v, 'inner')); // relative, inside: kept
  fs.symlinkSync('../README.md', path.join(v, 'readme')); // relative, into the workspace's tracked files: kept
  fs.symlinkSync(path.join(outside, 'shared'), path.join(v, 'shared')); // absolute folder outside: copied in
  fs.symlinkSync('../../outside/note.txt', path.join(v, 'up')); // relative, climbs out: copied in
  fs.symlinkSync('/nonexistent/warren-test/x', path.join(v, 'gone')); // dangling, outside: removed
  fs.symlinkSync(path.join(repo.root, 'vendor.lock'), path.join(v, 'lock')); // absolute into the main checkout: re-pointed
  return { repo, outside };
}

async function make(repo: TestRepo, id: string): Promise<Shown & { stderr: string }> {
  const made = await runWarren(['--json', 'new', 'feat', id], { cwd: repo.root, home: repo.home });
  expect(made.code, made.stdout + made.stderr).toBe(0);
  const shown = await repo.warrenJson<Shown>('show', id, '--events', '100');
  return { ...shown.json, stderr: made.stderr };
}

async function expectContained(
  repo: TestRepo,
  outside: string,
  shown: Shown & { stderr: string },
  mode: string,
): Promise<void> {
  const ws = shown.path;
  const env = path.join(ws, '.env');
  const vendor = path.join(ws, 'vendor');
  // Materialised: a plain file or folder, not a link; a write stays in the workspace.
  expect(fs.lstatSync(env).isFile()).toBe(true);
  fs.writeFileSync(env, 'SECRET=changed by the task\n');
  expect(fs.readFileSync(path.join(outside, 'secret.env'), 'utf8')).toBe('SECRET=1\n');
  expect(fs.lstatSync(path.join(vendor, 'shared')).isDirectory()).toBe(true);
  fs.writeFileSync(path.join(vendor, 'shared/lib.js'), 'changed\n');
  fs.writeFileSync(path.join(vendor, 'shared/new.js'), 'new\n');
  expect(fs.readFileSync(path.join(outside, 'shared/lib.js'), 'utf8')).toBe('outside lib\n');
  expect(fs.existsSync(path.join(outside, 'shared/new.js'))).toBe(false);
  expect(fs.lstatSync(path.join(vendor, 'up')).isFile()).toBe(true);
  fs.writeFileSync(path.join(vendor, 'up'), 'changed\n');
  expect(fs.readFileSync(path.join(outside, 'note.txt'), 'utf8')).toBe('outside note\n');
  // Removed: nothing to copy, and a write through it would have made a file outside.
  expect(fs.lstatSync(path.join(vendor, 'gone'), { throwIfNoEntry: false })).toBeUndefined();
  // Re-pointed: the same place in the workspace (the branch's file), relative.
  expect(fs.readlinkSync(path.join(vendor, 'lock'))).toBe('../vendor.lock');
  fs.writeFileSync(path.join(vendor, 'lock'), 'v2 in the task\n');
  expect(fs.readFileSync(path.join(repo.root, 'vendor.lock'), 'utf8')).toBe('v1\n');
  // Kept verbatim.
  expect(fs.readlinkSync(path.join(vendor, 'inner'))).toBe('lib/a.js');
  expect(fs.readlinkSync(path.join(vendor, 'readme'))).toBe('../README.md');

  const records = Object.fromEntries(shown.data.provision.map((r) => [r.path, r]));
  expect(records['.env']).toMatchObject({
    mode: 'copy',
    isolated: true,
    outsideLinks: [{ path: '.env', target: path.join(outside, 'secret.env'), action: 'materialised' }],
  });
  const actions = Object.fromEntries((records.vendor?.outsideLinks ?? []).map((l) => [l.path, l.action]));
  expect(actions).toEqual({
    'vendor/shared': 'materialised',
    'vendor/up': 'materialised',
    'vendor/gone': 'removed',
    'vendor/lock': 'repointed',
  });
  expect(records.vendor?.mode).toBe(mode);
  const warnings = shown.events.filter((e) => e.kind === 'provision.outside_links');
  expect(warnings.every((e) => e.level === 'warn')).toBe(true);
  expect(warnings.map((e) => e.message).join('\n')).toMatch(
    /vendor\/gone -> \/nonexistent\/warren-test\/x removed: its target does not resolve/,
  );
  expect(shown.stderr).toContain('.env: 1 symlink(s) pointed outside the workspace');
  // audit says what was verified and done.
  const audit = await repo.warren('audit', 'a');
  expect(audit.stdout).toMatch(
    /vendor: .*isolated.*4 symlink\(s\) pointed outside: 2 copied in, 1 re-pointed, 1 removed/,
  );
}

describe('a symlink that leads outside is never a door', () => {
  it('copy: materialises links out (within the budget), re-points links into the main checkout, removes dangling ones, keeps inside links', async () => {
    const { repo, outside } = doorRepo('copy');
    const shown = await make(repo, 'a');
    await expectContained(repo, outside, shown, 'copy');
    // status lists the task's own writes, and says nothing changed outside.
    const status = await repo.warren('status', 'a');
    expect(status.stdout).toContain('.env (copy): 1 change(s)');
  });

  it('hardlink: the same; a link out is never hard-linked to the outside file', async () => {
    const { repo, outside } = doorRepo('hardlink');
    const shown = await make(repo, 'a');
    await expectContained(repo, outside, shown, 'hardlink');
  });

  it.skipIf(noOverlay !== null)(
    'cow: the snapshot (the shared lower layer) is contained before any workspace mounts it',
    async () => {
      const { repo, outside } = doorRepo('cow');
      const shown = await make(repo, 'a');
      await expectContained(repo, outside, shown, 'cow');
      // A second workspace from the same snapshot says the same, and sees the outside as it was.
      const b = await make(repo, 'b');
      expect(b.data.provision.find((r) => r.path === 'vendor')?.outsideLinks).toHaveLength(4);
      expect(fs.readFileSync(path.join(b.path, 'vendor/shared/lib.js'), 'utf8')).toBe('outside lib\n');
      expect(b.events.some((e) => e.kind === 'provision.outside_links' && e.level === 'warn')).toBe(true);
    },
  );

  it('removes a link whose copy would go over the budget, and says so', async () => {
    const { repo, outside } = doorRepo('copy');
    fs.writeFileSync(path.join(outside, 'shared/big.bin'), Buffer.alloc(64 * 1024));
    repo.write('warren.yaml', 'provision_budget: { bytes: 32 KiB }\nprovision:\n  - { path: vendor, mode: copy }\n');
    const shown = await make(repo, 'a');
    const links = shown.data.provision[0]?.outsideLinks ?? [];
    expect(links.find((l) => l.path === 'vendor/shared')).toMatchObject({ action: 'removed' });
    expect(fs.lstatSync(path.join(shown.path, 'vendor/shared'), { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe('VCS metadata and nested worktrees are never copied', () => {
  it('skips a linked worktree and .hg/.jj folders matched by .worktreeinclude, and strips a .git from a copied path', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': '.worktrees/\ncache/\ntools/\ndeep/\n',
        '.worktreeinclude': '.worktrees/\ncache/\n',
        'warren.yaml': 'provision:\n  - { path: tools, mode: copy }\n  - { path: deep/cache/data.json, mode: copy }\n',
      },
    });
    repo.git('worktree', 'add', '-q', '-b', 'other', '.worktrees/other');
    repo.write('cache/a.txt', 'a\n');
    repo.write('cache/.hg/store/x', 'hg\n');
    repo.write('cache/.jj/repo', '/elsewhere\n');
    repo.write('tools/bin/t', 'tool\n');
    repo.write('tools/.git', 'gitdir: /elsewhere/.git/worktrees/x\n');
    repo.write('deep/cache/data.json', '{}\n');
    const shown = await make(repo, 'a');
    const ws = shown.path;
    expect(fs.existsSync(path.join(ws, '.worktrees'))).toBe(false);
    expect(fs.readFileSync(path.join(ws, 'cache/a.txt'), 'utf8')).toBe('a\n');
    expect(fs.existsSync(path.join(ws, 'cache/.hg'))).toBe(false);
    expect(fs.existsSync(path.join(ws, 'cache/.jj'))).toBe(false);
    expect(fs.readFileSync(path.join(ws, 'tools/bin/t'), 'utf8')).toBe('tool\n');
    expect(fs.existsSync(path.join(ws, 'tools/.git'))).toBe(false);
    // A listed file whose folders the branch lacks: made, not a failure.
    expect(fs.readFileSync(path.join(ws, 'deep/cache/data.json'), 'utf8')).toBe('{}\n');
    const skips = Object.fromEntries(shown.data.provisionSkips.map((s) => [s.path, s.reason]));
    expect(skips).toMatchObject({ '.worktrees/other': 'vcs', 'cache/.hg': 'vcs', 'cache/.jj': 'vcs' });
    expect(shown.data.provision.find((r) => r.path === 'tools')?.stripped).toEqual([
      { path: 'tools/.git', why: 'version-control metadata' },
    ]);
    expect(shown.events.find((e) => e.kind === 'provision.stripped')).toMatchObject({ level: 'warn' });
    // Commits in the workspace never reach the other worktree's branch.
    expect(repo.git('rev-parse', 'other')).toBe(repo.git('rev-parse', 'main'));
  });
});
