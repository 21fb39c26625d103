import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTask, snapshot, writeIn } from '../helpers/land.js';
import { gitIn, makeRepo, tmpDir } from '../helpers/repo.js';

interface LandJson {
  commit: string;
  tree: string;
  excluded: string[];
  exclusions: { path: string; how: string; why: string }[];
  rebased: boolean;
  landed: boolean;
  push: { ok: boolean; remote: string; ref: string } | null;
}
interface ErrJson {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

const POLICY = 'protected: [".env.testing", "**/*.local"]\n';

function repoWithPolicy() {
  return makeRepo({
    files: { 'README.md': '# r\n', 'warren.yaml': POLICY, 'conf/app.local': 'base\n', 'src/a.txt': 'a\n' },
  });
}

describe('warren land', () => {
  it('leaves protected files changed and created out, names them, and lands the rest of the tree', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'a2\n');
    writeIn(ws, 'src/new.txt', 'new\n');
    writeIn(ws, '.env.testing', 'SECRET=1\n');
    writeIn(ws, 'conf/app.local', 'mine\n');
    writeIn(ws, 'deep/dir/x.local', 'created\n');
    fs.rmSync(path.join(ws, 'README.md'));
    expect((await repo.warren('checkpoint', 'T-1', '-m', 'first')).code).toBe(0);
    writeIn(ws, 'src/b.txt', 'b\n');
    expect((await repo.warren('checkpoint', 'T-1', '-m', 'second')).code).toBe(0);

    const r = await repo.warrenJson<LandJson>('land', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    expect([...r.json.excluded].sort()).toEqual(['.env.testing', 'conf/app.local', 'deep/dir/x.local']);
    expect(r.json.exclusions).toContainEqual({ path: 'conf/app.local', how: 'changed', why: 'protected' });
    expect(r.json.exclusions).toContainEqual({ path: '.env.testing', how: 'created', why: 'protected' });
    expect(r.stderr).toContain('left out protected .env.testing');

    // One commit on top of the old base, which is its only parent.
    expect(repo.git('rev-parse', 'main')).toBe(r.json.commit);
    expect(repo.git('rev-list', '--count', 'main')).toBe('2');
    expect(repo.git('log', '-1', '--format=%B', 'main')).toContain('- first\n- second');
    // The landed tree is the task's tree with the protected paths at their base versions.
    const landed = repo.git('ls-tree', '-r', '--name-only', 'main').split('\n');
    expect(landed).toEqual(['conf/app.local', 'src/a.txt', 'src/b.txt', 'src/new.txt', 'warren.yaml']);
    expect(repo.git('show', 'main:conf/app.local')).toBe('base');
    expect(repo.git('show', 'main:src/a.txt')).toBe('a2');
    expect(repo.git('diff', '--name-only', 'main', 'feat/T-1').split('\n').sort()).toEqual([
      '.env.testing',
      'conf/app.local',
      'deep/dir/x.local',
    ]);
    // The main checkout followed, and its index with it; the workspace keeps its copies.
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(repo.root, 'src/new.txt'), 'utf8')).toBe('new\n');
    expect(fs.existsSync(path.join(repo.root, 'README.md'))).toBe(false);
    expect(fs.readFileSync(path.join(ws, '.env.testing'), 'utf8')).toBe('SECRET=1\n');
    expect(fs.readFileSync(path.join(ws, 'conf/app.local'), 'utf8')).toBe('mine\n');
    // Recorded: state, data, and an event naming the exclusions.
    const show = await repo.warrenJson<{
      state: string;
      data: { landed: { commit: string } };
      events: { kind: string; excluded?: unknown }[];
    }>('show', 'T-1');
    expect(show.json.state).toBe('landed');
    expect(show.json.data.landed.commit).toBe(r.json.commit);
    expect(show.json.events.find((e) => e.kind === 'land.excluded')).toBeDefined();
  });

  it('refuses an invalid policy with every ref, index and file unchanged', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'task\n');
    writeIn(ws, '.env.testing', 'x\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    const cases = [
      ['a glob that climbs out of the repository', 'protected: ["../elsewhere"]\n', 'PROTECTED_POLICY_INVALID'],
      ['a negation', 'protected: ["!conf/app.local"]\n', 'PROTECTED_POLICY_INVALID'],
      ['an absolute glob', 'protected: ["/etc/passwd"]\n', 'PROTECTED_POLICY_INVALID'],
      ['a list of the wrong type', 'protected: [".env", 5]\n', 'CONFIG_INVALID'],
      ['a policy that is not YAML', 'protected: [".env"\n', 'CONFIG_INVALID'],
    ] as const;
    for (const [name, policy, code] of cases) {
      // The bad policy as committed on the base and checked out in the main worktree.
      writeIn(repo.root, 'warren.yaml', policy);
      repo.commit(`policy: ${name}`);
      const before = snapshot(repo, ws);
      const r = await repo.warrenJson<ErrJson>('land', 'T-1');
      expect(r.code, name).toBe(code === 'CONFIG_INVALID' ? 2 : 1);
      expect(r.json.error.code, name).toBe(code);
      expect(snapshot(repo, ws), name).toBe(before);
      repo.git('reset', '-q', '--hard', 'HEAD~1');
    }
  });

  it('reads the policy from the base: a task cannot unprotect a file by editing its own warren.yaml', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'warren.yaml', 'protected: []\n');
    writeIn(ws, '.env.testing', 'SECRET\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    const r = await repo.warrenJson<LandJson>('land', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.excluded).toEqual(['.env.testing']);
    expect(repo.git('ls-tree', '--name-only', 'main')).not.toContain('.env.testing');
  });

  it('rebases the squash onto a base that moved, when the changes do not conflict', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'task\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    writeIn(repo.root, 'src/other.txt', 'moved\n');
    const moved = repo.commit('base moved');
    const r = await repo.warrenJson<LandJson>('land', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.rebased).toBe(true);
    expect(repo.git('rev-parse', 'main^')).toBe(moved);
    expect(repo.git('show', 'main:src/a.txt')).toBe('task');
    expect(repo.git('show', 'main:src/other.txt')).toBe('moved');
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('refuses a rebase that conflicts, lists the paths, and moves nothing', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'task\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    writeIn(repo.root, 'src/a.txt', 'base\n');
    repo.commit('base changed a.txt');
    const before = snapshot(repo, ws);
    const r = await repo.warrenJson<ErrJson>('land', 'T-1');
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('LAND_CONFLICT');
    expect(r.json.error.details?.['conflicts']).toEqual(['src/a.txt']);
    expect(snapshot(repo, ws)).toBe(before);
  });

  it('refuses beforehand when the main checkout has uncommitted changes the land would overwrite, and keeps unrelated ones', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'task\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    writeIn(repo.root, 'src/a.txt', 'uncommitted in main\n');
    const before = snapshot(repo, ws);
    const refused = await repo.warrenJson<ErrJson>('land', 'T-1');
    expect(refused.json.error.code).toBe('CHECKOUT_DIRTY');
    expect(refused.json.error.message).toContain('src/a.txt');
    expect(snapshot(repo, ws)).toBe(before);

    // An unrelated change, staged or not, survives the land.
    repo.git('checkout', '--', 'src/a.txt');
    writeIn(repo.root, 'README.md', 'edited, not committed\n');
    writeIn(repo.root, 'staged.txt', 'staged\n');
    repo.git('add', 'staged.txt');
    const r = await repo.warrenJson<LandJson>('land', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    expect(repo.git('diff', '--name-only')).toBe('README.md');
    expect(repo.git('diff', '--cached', '--name-only')).toBe('staged.txt');
    expect(fs.readFileSync(path.join(repo.root, 'src/a.txt'), 'utf8')).toBe('task\n');
  });

  it('refuses uncommitted work in the workspace, and a task with nothing to land', async () => {
    const repo = repoWithPolicy();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, '.env.testing', 'only protected\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    const before = snapshot(repo, ws);
    expect((await repo.warrenJson<ErrJson>('land', 'T-1')).json.error.code).toBe('NOTHING_TO_LAND');
    writeIn(ws, 'src/a.txt', 'not committed\n');
    expect((await repo.warrenJson<ErrJson>('land', 'T-1')).json.error.code).toBe('WORKSPACE_DIRTY');
    fs.writeFileSync(path.join(ws, 'src/a.txt'), 'a\n');
    expect(snapshot(repo, ws)).toBe(before);
  });

  it('pushes the landed base with --push, and the squashed task branch alone with --branch-only', async () => {
    const repo = repoWithPolicy();
    const remote = path.join(tmpDir(), 'remote.git');
    gitIn(path.dirname(remote), 'init', '-q', '--bare', remote);
    repo.git('remote', 'add', 'origin', remote);
    repo.git('push', '-q', 'origin', 'main');

    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'src/a.txt', 'review me\n');
    writeIn(ws, '.env.testing', 'SECRET\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    const mainBefore = repo.git('rev-parse', 'main');
    const review = await repo.warrenJson<LandJson>('land', 'T-1', '--branch-only');
    expect(review.code, review.stdout).toBe(0);
    expect(review.json.landed).toBe(false);
    expect(repo.git('rev-parse', 'main')).toBe(mainBefore);
    expect(gitIn(remote, 'rev-parse', 'refs/heads/feat/T-1')).toBe(review.json.commit);
    expect(gitIn(remote, 'ls-tree', '--name-only', 'feat/T-1')).not.toContain('.env.testing');
    // A second review push replaces the first (the remote still holds what warren pushed).
    writeIn(ws, 'src/a.txt', 'review me again\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    const again = await repo.warrenJson<LandJson>('land', 'T-1', '--branch-only');
    expect(again.json.push?.ok).toBe(true);
    expect(gitIn(remote, 'rev-parse', 'refs/heads/feat/T-1')).toBe(again.json.commit);

    const landed = await repo.warrenJson<LandJson>('land', 'T-1', '--push', 'origin');
    expect(landed.code, landed.stdout).toBe(0);
    expect(landed.json.push).toMatchObject({ ok: true, remote: 'origin', ref: 'refs/heads/main' });
    expect(gitIn(remote, 'rev-parse', 'main')).toBe(landed.json.commit);

    const bad = await repo.warrenJson<ErrJson>('land', 'T-1', '--push', 'nosuchremote');
    expect(bad.json.error.code).toBe('USAGE');

    // Someone else pushed to main meanwhile: the push is rejected, reported, exit 1; the local land stays.
    const other = path.join(tmpDir(), 'other');
    gitIn(path.dirname(other), 'clone', '-q', '-b', 'main', remote, other);
    writeIn(other, 'theirs.txt', 'theirs\n');
    gitIn(other, 'add', '-A');
    gitIn(other, '-c', 'user.name=O', '-c', 'user.email=o@example.invalid', 'commit', '-q', '-m', 'theirs');
    gitIn(other, 'push', '-q', 'origin', 'main');
    const ws2 = await newTask(repo, 'T-2');
    writeIn(ws2, 'mine.txt', 'mine\n');
    expect((await repo.warren('checkpoint', 'T-2')).code).toBe(0);
    const rejected = await repo.warrenJson<LandJson>('land', 'T-2', '--push');
    expect(rejected.code).toBe(1);
    expect(rejected.json.landed).toBe(true);
    expect(rejected.json.push?.ok).toBe(false);
    expect(repo.git('rev-parse', 'main')).toBe(rejected.json.commit);
    expect(gitIn(remote, 'log', '-1', '--format=%s', 'main')).toBe('theirs');
  });

  it('lands 3 tasks at the same time: each is planned again on the tip the others left, and all land, one commit each', async () => {
    const repo = repoWithPolicy();
    const ids = ['C-1', 'C-2', 'C-3'];
    for (const id of ids) {
      const ws = await newTask(repo, id);
      writeIn(ws, `src/${id}.txt`, `${id}\n`);
      expect((await repo.warren('checkpoint', id)).code).toBe(0);
    }
    const before = repo.git('rev-parse', 'main');
    const results = await Promise.all(ids.map((id) => repo.warrenJson<LandJson>('land', id)));
    for (const r of results) expect(r.code, r.stdout).toBe(0);
    // Linear: three commits on top of the old tip, each one of the landed squashes.
    expect(repo.git('rev-list', '--count', `${before}..main`)).toBe('3');
    expect(repo.git('rev-list', '--merges', `${before}..main`)).toBe('');
    expect(repo.git('rev-list', `${before}..main`).split('\n').sort()).toEqual(
      results.map((r) => r.json.commit).sort(),
    );
    expect(repo.git('status', '--porcelain')).toBe('');
    for (const id of ids) expect(fs.readFileSync(path.join(repo.root, `src/${id}.txt`), 'utf8')).toBe(`${id}\n`);
  });

  it('leaves out a provisioned share symlink an agent committed by hand with plain git', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: share }\n',
      },
    });
    const ws = await newTask(repo, 'T-1');
    fs.symlinkSync('/nonexistent/shared/node_modules', path.join(ws, 'node_modules'));
    writeIn(ws, 'src/a.txt', 'work\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-q', '-m', 'by hand');
    expect(gitIn(ws, 'ls-tree', '--name-only', 'HEAD')).toContain('node_modules');
    const r = await repo.warrenJson<LandJson>('land', 'T-1');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.exclusions).toEqual([{ path: 'node_modules', how: 'created', why: 'provisioned' }]);
    expect(repo.git('ls-tree', '-r', '--name-only', 'main').split('\n')).toEqual([
      '.gitignore',
      'src/a.txt',
      'warren.yaml',
    ]);
  });
});
