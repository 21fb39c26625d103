import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WorktreeEntry } from '../../src/git/parse.js';
import type { Task, TaskState } from '../../src/state/types.js';
import { planGc } from '../../src/workspace/gc.js';
import type { Presence } from '../../src/workspace/paths.js';
import { classifyStrays, type ScanInput } from '../../src/workspace/scan.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * `gc` never wedges a live task (issue 12 §4): a workspace folder that is briefly missing (a
 * disk not yet mounted) or replaced by a symlink keeps git's record through `gc`, even while gc
 * prunes other records; once the folder is back the task works with no `git worktree repair`.
 */

interface ScanJson {
  strays: { kind: string; path?: string; id?: string; branch?: string; reason: string }[];
}
interface GcJson {
  removed: { kind: string; path?: string; id?: string; branch?: string }[];
  kept: { kind: string; path: string; reason: string }[];
}

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(res.code, res.stdout).toBe(0);
  return res.json.path;
}

/** A worktree made by hand under the root and then deleted: a stray git lists as prunable, which gc must prune. */
function prunableStray(repo: TestRepo, root: string): string {
  const stray = path.join(root, 'by-hand');
  repo.git('worktree', 'add', '-q', '-b', 'by-hand', stray);
  fs.rmSync(stray, { recursive: true, force: true });
  return stray;
}

describe('gc and a live task whose folder is away', () => {
  it('keeps the records of a folder replaced by a symlink and of a missing one while it prunes a stray; both work again when the folders are back', async () => {
    const repo = makeRepo();
    const a = await newTask(repo, 'A-1');
    const b = await newTask(repo, 'B-1');
    fs.writeFileSync(path.join(a, 'work.txt'), 'uncommitted work');
    const root = path.dirname(a);
    const stray = prunableStray(repo, root);
    const away = tmpDir();
    // A: replaced by a symlink (to an empty folder: the real one is elsewhere). B: missing.
    fs.renameSync(a, path.join(away, 'A-1'));
    fs.mkdirSync(path.join(away, 'empty'));
    fs.symlinkSync(path.join(away, 'empty'), a);
    fs.renameSync(b, path.join(away, 'B-1'));

    const scan = await repo.warrenJson<ScanJson>('scan');
    expect(scan.json.strays).toContainEqual(
      expect.objectContaining({
        kind: 'displaced',
        id: 'A-1',
        reason: expect.stringMatching(/replaced by a symlink/) as string,
      }),
    );
    expect(scan.json.strays).toContainEqual(
      expect.objectContaining({
        kind: 'displaced',
        id: 'B-1',
        reason: expect.stringMatching(/folder is missing.*put the folder back.*warren rm B-1/) as string,
      }),
    );
    expect(scan.json.strays.filter((s) => s.kind === 'prunable').map((s) => s.path)).toEqual([stray]);

    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.code).toBe(0);
    expect(gc.json.removed).toEqual([expect.objectContaining({ kind: 'prunable', path: stray })]);
    expect(
      gc.json.kept
        .filter((k) => k.kind === 'displaced')
        .map((k) => k.path)
        .sort(),
    ).toEqual([a, b]);
    const listed = repo.git('worktree', 'list', '--porcelain');
    expect(listed).toContain(`worktree ${a}\n`);
    expect(listed).toContain(`worktree ${b}\n`);
    expect(listed).not.toContain(stray);
    expect(listed).not.toContain('locked'); // the spare locks are taken off again

    // The folders come back: the tasks work, with no `git worktree repair`.
    fs.rmSync(a);
    fs.renameSync(path.join(away, 'A-1'), a);
    fs.renameSync(path.join(away, 'B-1'), b);
    expect((await repo.warrenJson<ScanJson>('scan')).json.strays).toEqual([]);
    const exec = await repo.warrenJson<{ exitCode: number }>('exec', 'A-1', '--', 'cat', 'work.txt');
    expect(exec.code, exec.stdout).toBe(0);
    expect((await repo.warrenJson('checkpoint', 'A-1', '-m', 'saved')).code).toBe(0);
    expect(repo.git('log', '-1', '--format=%s', 'feat/A-1')).toBe('saved');
    for (const id of ['A-1', 'B-1']) {
      const rm = await repo.warrenJson<{ removed: boolean }>('rm', id);
      expect(rm.code, rm.stdout).toBe(0);
    }
  });

  it('rm of a task whose folder is gone for good forgets it and keeps the branch; a symlink in its place is refused', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'G-1');
    fs.writeFileSync(path.join(ws, 'f.txt'), 'x');
    expect((await repo.warrenJson('checkpoint', 'G-1')).code).toBe(0);
    const away = tmpDir();
    fs.renameSync(ws, path.join(away, 'G-1'));
    fs.symlinkSync(path.join(away, 'G-1'), ws);
    const refused = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('rm', 'G-1');
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toMatch(/replaced by a symlink to .*G-1; warren neither follows nor deletes it/);
    expect(refused.json.error.hint).toMatch(/Put the workspace folder back/);
    expect(fs.readFileSync(path.join(away, 'G-1', 'f.txt'), 'utf8')).toBe('x');

    fs.rmSync(ws);
    const checkpoint = await repo.warrenJson<{ error: { message: string; hint: string } }>('checkpoint', 'G-1');
    expect(checkpoint.json.error.message).toMatch(/is missing .*branch feat\/G-1 still holds every checkpoint/);
    const rm = await repo.warrenJson<{ removed: boolean; folderMissing?: boolean; unlandedCommits: number }>(
      'rm',
      'G-1',
    );
    expect(rm.code, rm.stdout).toBe(0);
    expect(rm.json).toMatchObject({ removed: true, folderMissing: true, unlandedCommits: 1 });
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(ws);
    expect(repo.git('branch', '--list', 'feat/G-1')).toContain('feat/G-1');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
  });

  it('a record git keeps locked with its folder missing is kept and explained, and gc still collects everything else', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'L-1');
    const root = path.dirname(ws);
    const removable = path.join(root, 'usb');
    repo.git('worktree', 'add', '-q', '-b', 'usb', removable);
    repo.git('worktree', 'lock', '--reason', 'on a removable disk', removable);
    fs.rmSync(removable, { recursive: true, force: true });
    const stray = prunableStray(repo, root);
    fs.mkdirSync(path.join(root, 'empty-leftover'));

    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.code, gc.stdout).toBe(0);
    expect(gc.json.removed.map((r) => `${r.kind}:${r.path ?? ''}`).sort()).toEqual([`prunable:${stray}`]);
    // A folder warren did not make is listed, never deleted, even when empty.
    expect(gc.json.kept.find((k) => k.path === path.join(root, 'empty-leftover'))?.reason).toMatch(
      /warren did not make it/,
    );
    expect(fs.existsSync(path.join(root, 'empty-leftover'))).toBe(true);
    const kept = gc.json.kept.find((k) => k.path === removable);
    expect(kept?.reason).toMatch(/locked \("on a removable disk"\) and its folder is missing/);
    expect(kept?.reason).toMatch(/git worktree unlock/);
    expect(kept?.reason).not.toMatch(/Install git|ENOENT/);
    expect(repo.git('worktree', 'list', '--porcelain')).toContain(`worktree ${removable}\n`);
  });
});

describe('classifyStrays and planGc on plain data', () => {
  const task = (id: string, state: TaskState): Task => ({
    project: 'p',
    id,
    type: 'feat',
    branch: `feat/${id}`,
    path: `/root/${id}`,
    base: 'main',
    baseCommit: 'c',
    state,
    createdAt: '',
    updatedAt: '',
    data: {},
  });
  const wt = (p: string, prunable: string | null): WorktreeEntry => ({
    path: p,
    head: 'c',
    branch: null,
    bare: false,
    detached: false,
    locked: null,
    prunable,
  });
  const input = (
    tasks: Task[],
    worktrees: WorktreeEntry[],
    presence: [string, Presence][],
    entries: string[] = [],
  ): ScanInput => ({
    root: '/root',
    tasks,
    worktrees,
    entries,
    owned: new Set(entries),
    mounts: [],
    busy: new Set(),
    leftoverBranches: [],
    presence: new Map(presence),
  });

  it('a live task with a record is displaced whether its folder is missing, replaced or unlinked; never prunable', () => {
    const tasks = [task('a', 'ready'), task('b', 'setup_failed'), task('c', 'landed')];
    const strays = classifyStrays(
      input(
        tasks,
        [wt('/root/a', 'gone'), wt('/root/b', 'gone'), wt('/root/c', 'gitdir file points to non-existent location')],
        [
          ['a', { kind: 'missing' }],
          ['b', { kind: 'replaced', what: 'a symlink to /x' }],
          ['c', { kind: 'folder' }],
        ],
        ['/root/b', '/root/c'],
      ),
    );
    expect(strays.map((s) => `${s.kind}:${s.id ?? ''}`)).toEqual(['displaced:a', 'displaced:b', 'displaced:c']);
    expect(strays[2]?.reason).toMatch(/git worktree repair \/root\/c/);
  });

  it('a task on its way out (a dead new, removing) or with no record is vanished or prunable as before', () => {
    const tasks = [task('d', 'creating'), task('e', 'removing'), task('f', 'ready')];
    const strays = classifyStrays(
      input(
        tasks,
        [wt('/root/d', 'gone'), wt('/root/e', 'gone')],
        [
          ['d', { kind: 'missing' }],
          ['e', { kind: 'missing' }],
          ['f', { kind: 'missing' }],
        ],
      ),
    );
    expect(strays.map((s) => `${s.kind}:${s.id ?? ''}`).sort()).toEqual([
      'prunable:d',
      'prunable:e',
      'vanished:d',
      'vanished:e',
      'vanished:f',
    ]);
  });

  it('gc keeps a displaced task and hands the live paths to the prune as the ones to spare', () => {
    const stray = (kind: 'displaced' | 'prunable', p: string) => ({ kind, path: p, reason: 'r' });
    const facts = [stray('displaced', '/root/a'), stray('prunable', '/root/x')].map((s) => ({
      stray: s,
      task: null,
      uncommitted: 0,
      unlandedCommits: 0,
      empty: false,
      presence: { kind: 'folder' } as Presence,
      unreadable: null,
    }));
    const spare = new Set(['/root/a']);
    const plan = planGc(facts, spare);
    expect(plan.kept).toEqual([{ kind: 'displaced', path: '/root/a', reason: 'r' }]);
    expect(plan.actions).toEqual([expect.objectContaining({ kind: 'prune', spare })]);
    const unreadable = planGc([
      { ...facts[1]!, stray: { kind: 'unclaimed', path: '/root/y', reason: 'r' }, unreadable: 'boom' },
    ]);
    expect(unreadable.actions).toEqual([]);
    expect(unreadable.kept[0]?.reason).toMatch(/could not read it \(boom\)/);
  });
});
