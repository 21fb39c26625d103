import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, refsAndWorktrees, runWarren } from '../helpers/repo.js';

interface NewJson {
  id: string;
  type: string;
  branch: string;
  path: string;
  base: string;
  state: string;
}

function worktreeRoot(home: string): string {
  const dir = path.join(home, 'worktrees');
  const [project] = fs.readdirSync(dir);
  return path.join(dir, project ?? '');
}

describe('warren new', () => {
  it('creates branch TYPE/ID, a worktree under WARREN_HOME, the metadata file and a ready row', async () => {
    const repo = makeRepo();
    const { code, json } = await repo.warrenJson<NewJson>('new', 'feat', 'T-1');
    expect(code).toBe(0);
    expect(json).toMatchObject({ id: 'T-1', type: 'feat', branch: 'feat/T-1', base: 'main', state: 'ready' });
    expect(json.path.startsWith(path.join(repo.home, 'worktrees'))).toBe(true);
    expect(fs.readFileSync(path.join(json.path, 'README.md'), 'utf8')).toBe('# test\n');
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(repo.git('-C', json.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('feat/T-1');
    const meta = JSON.parse(fs.readFileSync(`${json.path}.warren.json`, 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({ taskId: 'T-1', branch: 'feat/T-1', path: json.path });
    // Outside the repository, so nothing that globs the main checkout walks into it.
    expect(json.path.startsWith(repo.root)).toBe(false);

    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json).toEqual([
      expect.objectContaining({ id: 'T-1', type: 'feat', branch: 'feat/T-1', path: json.path, state: 'ready' }),
    ]);
    const show = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'T-1');
    expect(show.json.events.map((e) => e.kind)).toContain('task.created');
    const human = await repo.warren('list');
    expect(human.stdout).toMatch(/^ID\s+TYPE\s+STATE/m);
  });

  it('refuses a second task with the same ID', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'T-1')).code).toBe(0);
    const again = await repo.warrenJson<{ error: { code: string } }>('new', 'fix', 'T-1');
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('TASK_EXISTS');
  });

  it('keeps two repositories with the same folder name apart in one WARREN_HOME, each with its own T-1', async () => {
    const a = makeRepo({ name: 'app' });
    const b = makeRepo({ name: 'app' });
    const inA = JSON.parse(
      (await runWarren(['--json', 'new', 'feat', 'T-1'], { cwd: a.root, home: a.home })).stdout,
    ) as NewJson;
    const inB = JSON.parse(
      (await runWarren(['--json', 'new', 'feat', 'T-1'], { cwd: b.root, home: a.home })).stdout,
    ) as NewJson;
    expect(inA.state).toBe('ready');
    expect(inB.state).toBe('ready');
    expect(path.dirname(inA.path)).not.toBe(path.dirname(inB.path));
    expect(path.basename(path.dirname(inA.path))).toMatch(/^app-[0-9a-f]{10}$/);
    const listB = JSON.parse((await runWarren(['--json', 'list'], { cwd: b.root, home: a.home })).stdout) as NewJson[];
    expect(listB.map((t) => t.path)).toEqual([inB.path]);
  });

  it('branches from --base and records it', async () => {
    const repo = makeRepo();
    repo.git('branch', 'release');
    repo.write('later.txt', 'x');
    repo.commit('later on main');
    const { json } = await repo.warrenJson<NewJson>('new', 'fix', 'R-1', '--base', 'release');
    expect(json.base).toBe('release');
    expect(fs.existsSync(path.join(json.path, 'later.txt'))).toBe(false);
  });

  it('refuses an unknown base and a detached main worktree with nothing created', async () => {
    const repo = makeRepo();
    const before = refsAndWorktrees(repo.root);
    const unknown = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'B-1', '--base', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.code).toBe('BASE_UNKNOWN');
    expect(refsAndWorktrees(repo.root)).toBe(before);
    repo.git('checkout', '-q', '--detach');
    const detachedBefore = refsAndWorktrees(repo.root);
    const detached = await repo.warrenJson<{ error: { code: string; hint: string } }>('new', 'feat', 'B-2');
    expect(detached.json.error.code).toBe('BASE_UNKNOWN');
    expect(detached.json.error.hint).toMatch(/--base/);
    expect(refsAndWorktrees(repo.root)).toBe(detachedBefore);
  });

  it('refuses an invalid warren.yaml naming the key, exit 2, nothing created', async () => {
    const repo = makeRepo({
      files: { 'warren.yaml': 'provison:\n  - { path: node_modules, mode: cow }\nsandbox: docker\n' },
    });
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'C-1');
    expect(res.code).toBe(2);
    expect(res.json.error.code).toBe('CONFIG_INVALID');
    expect(res.json.error.message).toContain('unknown key "provison"');
    expect(res.json.error.message).toContain('sandbox');
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
  });

  it('keeps a workspace root configured inside the repository out of git via .git/info/exclude', async () => {
    const repo = makeRepo({ files: { 'warren.yaml': 'worktree_root: .worktrees\n', '.gitignore': 'dist/\n' } });
    const { json } = await repo.warrenJson<NewJson>('new', 'feat', 'In-1');
    expect(json.path).toBe(path.join(repo.root, '.worktrees', 'In-1'));
    expect(fs.readFileSync(path.join(repo.root, '.git', 'info', 'exclude'), 'utf8')).toContain('/.worktrees/');
    expect(fs.readFileSync(path.join(repo.root, '.gitignore'), 'utf8')).toBe('dist/\n');
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('never writes outside --json stdout as anything but one JSON document', async () => {
    const repo = makeRepo();
    const res = await repo.warren('--json', 'new', 'feat', 'J-1');
    expect(() => JSON.parse(res.stdout) as unknown).not.toThrow();
    const usage = await repo.warren('--json', 'new', 'feat');
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ error: { code: 'USAGE' } });
  });

  it('uses a worktree root that exists already, but refuses a pre-existing directory at the task path', async () => {
    const repo = makeRepo();
    await repo.warren('new', 'feat', 'X-0');
    const root = worktreeRoot(repo.home);
    fs.mkdirSync(path.join(root, 'X-1'));
    fs.writeFileSync(path.join(root, 'X-1', 'keep.txt'), 'mine');
    const res = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'X-1');
    expect(res.json.error.code).toBe('WORKSPACE_EXISTS');
    expect(fs.readFileSync(path.join(root, 'X-1', 'keep.txt'), 'utf8')).toBe('mine');
    expect(() => repo.git('rev-parse', '--verify', 'refs/heads/feat/X-1')).toThrow();
  });

  it('refuses a branch that exists, saying whether it holds work of its own, and what to do', async () => {
    const repo = makeRepo();
    repo.git('branch', 'feat/left');
    const empty = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
      'new',
      'feat',
      'left',
    );
    expect(empty.code).toBe(1);
    expect(empty.json.error).toMatchObject({ code: 'BRANCH_EXISTS' });
    expect(empty.json.error.message).toContain('holds no commit of its own');
    expect(empty.json.error.hint).toContain('git branch -D feat/left');

    repo.git('switch', '-q', '-c', 'feat/work');
    repo.write('w.txt', 'work\n');
    repo.commit('real work');
    repo.git('switch', '-q', 'main');
    const held = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
      'new',
      'feat',
      'work',
    );
    expect(held.json.error.message).toMatch(/holds 1 commit\(s\) on no other ref, newest [0-9a-f]{12} real work/);
    expect(held.json.error.hint).not.toContain('branch -D');
  });
});
