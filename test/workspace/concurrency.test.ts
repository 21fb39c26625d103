import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_OUTSIDE_LOCK_MIN_FILES } from '../../src/workspace/worktree-add.js';
import { gitIn, makeRepo } from '../helpers/repo.js';

describe('concurrency', () => {
  // Measured here: 20 parallel bare `git worktree add` fail 10–31% of the time. warren serializes
  // worktree add under one repository lock and relies on WAL + busy_timeout for the database.
  it('12 warren new processes started at once on one repository all end ready on 12 distinct branches', async () => {
    const repo = makeRepo();
    const ids = Array.from({ length: 12 }, (_, i) => `P-${i + 1}`);
    const results = await Promise.all(
      ids.map((id) => repo.warrenJson<{ state: string; branch: string; path: string }>('new', 'feat', id)),
    );
    for (const res of results) {
      // A wait for the state database's write lock, said and then taken, is not a failure (a loaded machine makes one likely).
      const failures = res.stderr.replace(
        /^warren: the state database .* is locked by another process; waiting up to .*$/gm,
        '',
      );
      expect(failures).not.toMatch(/locked|SQLITE_BUSY|index\.lock/i);
      expect(res.code).toBe(0);
      expect(res.json.state).toBe('ready');
    }
    expect(new Set(results.map((r) => r.json.branch)).size).toBe(12);
    expect(new Set(results.map((r) => r.json.path)).size).toBe(12);
    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json.map((t) => t.id).sort()).toEqual([...ids].sort());
    expect(list.json.every((t) => t.state === 'ready')).toBe(true);
    const worktrees = repo
      .git('worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '));
    expect(worktrees).toHaveLength(13);
    expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);

    // And removing them all at once.
    const removed = await Promise.all(
      ids.map((id) => repo.warrenJson<{ removed: boolean }>('rm', id, '--delete-branch')),
    );
    expect(removed.map((r) => r.code)).toEqual(ids.map(() => 0));
    expect(
      repo
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
    ).toHaveLength(1);
    expect(repo.git('branch', '--list', 'feat/*')).toBe('');
  }, 180_000);

  it('two processes racing for the same ID: exactly one wins, the other is refused cleanly', async () => {
    const repo = makeRepo();
    const results = await Promise.all(
      [1, 2, 3].map(() => repo.warrenJson<{ error?: { code: string } }>('new', 'feat', 'SAME')),
    );
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 1, 1]);
    for (const r of results.filter((r) => r.code === 1))
      expect(['LOCK_HELD', 'TASK_EXISTS']).toContain(r.json.error?.code);
    expect(repo.git('branch', '--list', 'feat/SAME')).toContain('feat/SAME');
  });
});

describe('a large repository: the files are written outside the repository lock', () => {
  // At CHECKOUT_OUTSIDE_LOCK_MIN_FILES tracked files or more, only `git worktree add
  // --no-checkout` runs under the lock; the checkout follows outside it. The workspace must be
  // exactly what `git worktree add` makes; the post-checkout hook runs in neither (it would run
  // on the host, in the workspace), and `new` says so.
  function bigRepo(files: number) {
    const tree: Record<string, string> = {};
    for (let i = 0; i < files; i++) tree[`src/d${i % 20}/f${i}.txt`] = `file ${i}\n`;
    const repo = makeRepo({ files: tree });
    const hook = path.join(repo.root, '.git', 'hooks', 'post-checkout');
    fs.writeFileSync(hook, '#!/bin/sh\necho "$1 $2 $3" >> "$(git rev-parse --git-dir)/post-checkout-ran"\n', {
      mode: 0o755,
    });
    return repo;
  }

  it.each([
    { label: 'below the threshold (one git worktree add)', files: 20 },
    {
      label: 'at the threshold (no-checkout under the lock, checkout outside)',
      files: CHECKOUT_OUTSIDE_LOCK_MIN_FILES,
    },
  ])(
    '$label: every file, a clean status, no post-checkout hook run (an event says so); 4 at once all ready',
    async ({ files }) => {
      const repo = bigRepo(files);
      const head = repo.git('rev-parse', 'HEAD');
      const ids = ['a', 'b', 'c', 'd'];
      const results = await Promise.all(
        ids.map((id) => repo.warrenJson<{ state: string; path: string }>('new', 'feat', id)),
      );
      for (const r of results) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.json.state).toBe('ready');
        const ws = r.json.path;
        expect(gitIn(ws, 'ls-files').split('\n').filter(Boolean)).toHaveLength(files);
        expect(fs.readFileSync(path.join(ws, 'src/d0/f0.txt'), 'utf8')).toBe('file 0\n');
        expect(gitIn(ws, 'status', '--porcelain')).toBe('');
        const gitDir = gitIn(ws, 'rev-parse', '--absolute-git-dir');
        expect(fs.existsSync(path.join(gitDir, 'post-checkout-ran'))).toBe(false);
        expect(gitIn(ws, 'rev-parse', 'HEAD')).toBe(head);
      }
      // Each creation recorded how long it waited for the repository lock and held it.
      const shown = await repo.warrenJson<{
        events: { kind: string; repoLock?: { waitedMs: number; heldMs: number } }[];
      }>('show', 'a');
      const created = shown.json.events.find((e) => e.kind === 'task.created');
      expect(created?.repoLock?.heldMs).toBeGreaterThanOrEqual(0);
      expect(shown.json.events.filter((e) => e.kind === 'task.hook_not_run')).toHaveLength(1);
    },
    180_000,
  );
});
