import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

interface ScanJson {
  strays: { kind: string; path?: string; id?: string; branch?: string; reason: string }[];
}
interface GcJson {
  removed: { kind: string; path?: string; id?: string; branch?: string }[];
  kept: { kind: string; path: string; reason: string }[];
}

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(res.code).toBe(0);
  return res.json.path;
}

/** Records paths in warren's ledger, as `warren new` does before it makes them. */
function madeByWarren(repo: TestRepo, ...paths: string[]): void {
  const store = openStore(repo.home);
  const project = store.listProjects()[0]?.key ?? '';
  for (const p of paths) store.recordMadePath({ path: p, kind: 'workspace', project, taskId: null });
  store.close();
}

describe('scan and gc', () => {
  it('a live task whose folder is gone is displaced: gc keeps both records (the folder may come back); rm forgets it and keeps the branch', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'V-1');
    fs.rmSync(ws, { recursive: true, force: true });
    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'displaced', id: 'V-1', path: ws })]);
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed).toEqual([]);
    expect(gc.json.kept).toEqual([expect.objectContaining({ kind: 'displaced', path: ws })]);
    expect(repo.git('worktree', 'list', '--porcelain')).toContain(ws);
    expect((await repo.warrenJson('rm', 'V-1')).code).toBe(0);
    expect((await repo.warrenJson<ScanJson>('scan')).json.strays).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/V-1')).toContain('feat/V-1');
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(ws);
  });

  it('a branch warren made whose task is gone is an orphan-branch: gc deletes it when it holds nothing of its own, keeps it (saying why) when it does, and the ID is free again', async () => {
    const repo = makeRepo();
    for (const id of ['O-1', 'O-2']) await newTask(repo, id);
    const ws2 = (await repo.warrenJson<{ path: string }>('path', 'O-2')).json.path;
    fs.writeFileSync(path.join(ws2, 'work.txt'), 'work\n');
    expect((await repo.warren('checkpoint', 'O-2', '-m', 'work')).code).toBe(0);
    // What a `new` killed inside `git worktree add` leaves once its record is gone: the branch, and
    // warren's record of making it (its worktree and row gone).
    const store = openStore(repo.home);
    const project = store.listProjects()[0]?.key ?? '';
    for (const id of ['O-1', 'O-2']) {
      repo.git('worktree', 'remove', '--force', (await repo.warrenJson<{ path: string }>('path', id)).json.path);
      store.deleteTask(project, id);
    }
    store.close();
    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(scan.json.strays.map((s) => `${s.kind}:${s.branch}`).sort()).toEqual([
      'orphan-branch:feat/O-1',
      'orphan-branch:feat/O-2',
    ]);
    expect(scan.json.strays[0]?.reason).toMatch(/branch warren made for task O-\d, which is gone/);
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed).toEqual([expect.objectContaining({ kind: 'orphan-branch', branch: 'feat/O-1' })]);
    expect(gc.json.kept).toContainEqual(
      expect.objectContaining({
        kind: 'orphan-branch',
        reason: expect.stringMatching(/1 commit\(s\) on no other ref/),
      }),
    );
    expect(repo.git('branch', '--list', 'feat/O-1')).toBe('');
    expect(repo.git('branch', '--list', 'feat/O-2')).toContain('feat/O-2');
    expect((await repo.warren('new', 'feat', 'O-1')).code).toBe(0);
  });

  it('a row whose folder is gone and that git has no record of is vanished; gc forgets the row and keeps the branch', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'V-2');
    fs.rmSync(ws, { recursive: true, force: true });
    repo.git('worktree', 'prune');
    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'vanished', id: 'V-2', path: ws })]);
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed.map((r) => r.kind)).toEqual(['vanished']);
    expect((await repo.warrenJson<ScanJson>('scan')).json.strays).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/V-2')).toContain('feat/V-2');
  });

  it('finds a stranded directory git does not list; gc keeps one with files and says why, removes an empty one', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'K-1');
    const root = path.dirname(ws);
    // Directories warren made (its ledger says so) that git no longer lists.
    madeByWarren(repo, path.join(root, 'leftover'), path.join(root, 'empty'));
    fs.mkdirSync(path.join(root, 'leftover'));
    fs.writeFileSync(path.join(root, 'leftover', 'notes.txt'), 'maybe precious');
    fs.mkdirSync(path.join(root, 'empty'));
    const scan = await repo.warrenJson<ScanJson>('scan');
    const kinds = scan.json.strays.map((s) => `${s.kind}:${path.basename(s.path ?? '')}`).sort();
    expect(kinds).toEqual(['stranded:empty', 'stranded:leftover']);
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed).toEqual([expect.objectContaining({ kind: 'stranded', path: path.join(root, 'empty') })]);
    expect(gc.json.kept).toEqual([
      expect.objectContaining({
        kind: 'stranded',
        path: path.join(root, 'leftover'),
        reason: expect.stringMatching(/cannot prove/) as string,
      }),
    ]);
    expect(fs.readFileSync(path.join(root, 'leftover', 'notes.txt'), 'utf8')).toBe('maybe precious');
    const human = await repo.warren('gc');
    expect(human.stdout).toMatch(/^kept\s+stranded/m);
  });

  it('finds an unclaimed worktree under the root; gc removes it only when clean and its commits live elsewhere', async () => {
    const repo = makeRepo();
    await newTask(repo, 'C-1');
    // Workspaces warren made whose rows are gone: git lists them, no task claims them.
    const clean = await newTask(repo, 'by-hand');
    const dirty = await newTask(repo, 'by-hand-dirty');
    const store = openStore(repo.home);
    const project = store.listProjects()[0]?.key ?? '';
    for (const id of ['by-hand', 'by-hand-dirty']) store.deleteTask(project, id);
    store.close();
    fs.writeFileSync(path.join(dirty, 'wip.txt'), 'unsaved');
    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(
      scan.json.strays
        .filter((s) => s.kind === 'unclaimed')
        .map((s) => s.path)
        .sort(),
    ).toEqual([clean, dirty]);
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed).toEqual([expect.objectContaining({ kind: 'unclaimed', path: clean })]);
    expect(gc.json.kept).toEqual([
      expect.objectContaining({
        kind: 'unclaimed',
        path: dirty,
        reason: expect.stringMatching(/uncommitted/) as string,
      }),
    ]);
    expect(fs.readFileSync(path.join(dirty, 'wip.txt'), 'utf8')).toBe('unsaved');
  });

  it('finds what a killed warren new leaves: a worktree locked "initializing", its branch and a creating row; gc clears them', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'ok');
    const root = path.dirname(ws);
    // Reproduce the leftovers of a process killed inside `git worktree add`: git leaves the
    // worktree locked with reason "initializing", the branch exists, warren's row says creating.
    const half = path.join(root, 'K-9');
    madeByWarren(repo, half); // recorded before `git worktree add`, as warren new does
    repo.git('worktree', 'add', '-q', '--lock', '--reason', 'initializing', '-b', 'feat/K-9', half);
    const store = openStore(repo.home);
    const project = store.listProjects()[0]?.key ?? '';
    const base = repo.git('rev-parse', 'main');
    store.insertTask({
      project,
      id: 'K-9',
      type: 'feat',
      branch: 'feat/K-9',
      path: half,
      base: 'main',
      baseCommit: base,
      state: 'creating',
      data: {},
    });
    // And one whose worktree never appeared: only a branch and a row.
    repo.git('branch', 'feat/K-8');
    store.insertTask({
      project,
      id: 'K-8',
      type: 'feat',
      branch: 'feat/K-8',
      path: path.join(root, 'K-8'),
      base: 'main',
      baseCommit: base,
      state: 'creating',
      data: {},
    });
    store.close();

    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(scan.json.strays).toContainEqual(
      expect.objectContaining({
        kind: 'unclaimed',
        path: half,
        id: 'K-9',
        reason: expect.stringMatching(/initializing/) as string,
      }),
    );
    expect(scan.json.strays).toContainEqual(
      expect.objectContaining({ kind: 'orphan-branch', branch: 'feat/K-8', id: 'K-8' }),
    );
    expect(scan.json.strays).toContainEqual(expect.objectContaining({ kind: 'vanished', id: 'K-8' }));

    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.kept).toEqual([]);
    expect(fs.existsSync(half)).toBe(false);
    expect(repo.git('branch', '--list', 'feat/K-8')).toBe('');
    expect((await repo.warrenJson<ScanJson>('scan')).json.strays).toEqual([]);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['ok']);
  });

  it('reports nothing for a healthy fleet', async () => {
    const repo = makeRepo();
    await newTask(repo, 'H-1');
    await newTask(repo, 'H-2');
    const scan = await repo.warren('scan');
    expect(scan.stdout).toMatch(/no strays/);
  });
});
