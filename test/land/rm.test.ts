import { describe, expect, it } from 'vitest';
import { newTask, writeIn } from '../helpers/land.js';
import { makeRepo } from '../helpers/repo.js';

describe('rm after land', () => {
  it('removes a squash-landed task without force and deletes its branch', async () => {
    const repo = makeRepo({ files: { 'warren.yaml': 'protected: ["*.local"]\n', 'README.md': '# r\n' } });
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'a.txt', 'work\n');
    writeIn(ws, 'my.local', 'kept out\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    // Before landing, the branch's work is nowhere else: --delete-branch refuses.
    const early = await repo.warrenJson<{ error: { code: string } }>('rm', 'T-1', '--delete-branch');
    expect(early.json.error.code).toBe('BRANCH_UNLANDED');
    expect((await repo.warren('land', 'T-1')).code).toBe(0);
    // The squash is not an ancestor: only the tree comparison knows the work is on main.
    expect(() => repo.git('merge-base', '--is-ancestor', 'feat/T-1', 'main')).toThrow();
    // Base moves on after the land, and later work rewrites the task's file: still landed.
    writeIn(repo.root, 'a.txt', 'superseded by later work\n');
    repo.commit('later');
    const r = await repo.warrenJson<{ removed: boolean; branchDeleted: boolean }>('rm', 'T-1', '--delete-branch');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json).toMatchObject({ removed: true, branchDeleted: true });
    expect(repo.git('branch', '--list', 'feat/T-1')).toBe('');
  });

  it('removes a landed task without --delete-branch and keeps the branch', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-2');
    writeIn(ws, 'a.txt', 'work\n');
    expect((await repo.warren('checkpoint', 'T-2')).code).toBe(0);
    expect((await repo.warren('land', 'T-2')).code).toBe(0);
    const r = await repo.warrenJson<{ removed: boolean; branchDeleted: boolean }>('rm', 'T-2');
    expect(r.code).toBe(0);
    expect(r.json.branchDeleted).toBe(false);
    expect(repo.git('branch', '--list', 'feat/T-2')).toContain('feat/T-2');
  });

  it('does not count work committed after the land as landed', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-3');
    writeIn(ws, 'a.txt', 'work\n');
    expect((await repo.warren('checkpoint', 'T-3')).code).toBe(0);
    expect((await repo.warren('land', 'T-3')).code).toBe(0);
    writeIn(ws, 'b.txt', 'more work after landing\n');
    expect((await repo.warren('checkpoint', 'T-3')).code).toBe(0);
    const r = await repo.warrenJson<{ error: { code: string } }>('rm', 'T-3', '--delete-branch');
    expect(r.json.error.code).toBe('BRANCH_UNLANDED');
    expect(repo.git('branch', '--list', 'feat/T-3')).toContain('feat/T-3');
  });

  it('knows a task is landed when the squash left the base history but its content is there (landed by hand)', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-4');
    writeIn(ws, 'a.txt', 'work\n');
    expect((await repo.warren('checkpoint', 'T-4')).code).toBe(0);
    expect((await repo.warren('land', 'T-4')).code).toBe(0);
    // Someone rewrites main: the squash is gone from its history, the same content is committed again.
    repo.git('reset', '-q', '--hard', 'HEAD~1');
    writeIn(repo.root, 'a.txt', 'work\n');
    repo.commit('same work, recommitted');
    const r = await repo.warrenJson<{ branchDeleted: boolean }>('rm', 'T-4', '--delete-branch');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.branchDeleted).toBe(true);
  });
});
