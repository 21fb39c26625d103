import { describe, expect, it } from 'vitest';
import { makeRepo } from '../helpers/repo.js';

describe('concurrency', () => {
  // Measured here: 20 parallel bare `git worktree add` fail 10–31% of the time. warren serializes
  // worktree add under one repository lock and relies on WAL + busy_timeout for the database.
  it('12 warren new processes started at once on one repository all end ready on 12 distinct branches', async () => {
    const repo = makeRepo();
    const ids = Array.from({ length: 12 }, (_, i) => `P-${i + 1}`);
    const results = await Promise.all(ids.map((id) => repo.warrenJson<{ state: string; branch: string; path: string }>('new', 'feat', id)));
    for (const res of results) {
      expect(res.stderr).not.toMatch(/locked|SQLITE_BUSY|index\.lock/i);
      expect(res.code).toBe(0);
      expect(res.json.state).toBe('ready');
    }
    expect(new Set(results.map((r) => r.json.branch)).size).toBe(12);
    expect(new Set(results.map((r) => r.json.path)).size).toBe(12);
    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json.map((t) => t.id).sort()).toEqual([...ids].sort());
    expect(list.json.every((t) => t.state === 'ready')).toBe(true);
    const worktrees = repo.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));
    expect(worktrees).toHaveLength(13);
    expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);

    // And removing them all at once.
    const removed = await Promise.all(ids.map((id) => repo.warrenJson<{ removed: boolean }>('rm', id, '--delete-branch')));
    expect(removed.map((r) => r.code)).toEqual(ids.map(() => 0));
    expect(repo.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toHaveLength(1);
    expect(repo.git('branch', '--list', 'feat/*')).toBe('');
  }, 180_000);

  it('two processes racing for the same ID: exactly one wins, the other is refused cleanly', async () => {
    const repo = makeRepo();
    const results = await Promise.all([1, 2, 3].map(() => repo.warrenJson<{ error?: { code: string } }>('new', 'feat', 'SAME')));
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 1, 1]);
    for (const r of results.filter((r) => r.code === 1)) expect(['LOCK_HELD', 'TASK_EXISTS']).toContain(r.json.error?.code);
    expect(repo.git('branch', '--list', 'feat/SAME')).toContain('feat/SAME');
  });
});
