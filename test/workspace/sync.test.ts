import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitIn, makeRepo, refsAndWorktrees, type TestRepo } from '../helpers/repo.js';

/** A repository cloned from a bare "origin", and a second clone to push upstream changes from. */
function withOrigin(): { repo: TestRepo; other: string } {
  const repo = makeRepo();
  const originDir = path.join(path.dirname(repo.root), 'origin.git');
  execFileSync('git', ['clone', '-q', '--bare', repo.root, originDir]);
  repo.git('remote', 'add', 'origin', originDir);
  repo.git('fetch', '-q', 'origin');
  repo.git('branch', '-q', '--set-upstream-to=origin/main', 'main');
  const other = path.join(path.dirname(repo.root), 'other');
  execFileSync('git', ['clone', '-q', originDir, other]);
  gitIn(other, 'config', 'user.name', 'Other');
  gitIn(other, 'config', 'user.email', 'other@example.invalid');
  return { repo, other };
}

function pushUpstream(other: string, file: string): string {
  fs.writeFileSync(path.join(other, file), file);
  gitIn(other, 'add', '-A');
  gitIn(other, 'commit', '-q', '-m', `upstream ${file}`);
  gitIn(other, 'push', '-q', 'origin', 'main');
  return gitIn(other, 'rev-parse', 'HEAD');
}

describe('base sync', () => {
  it('fetches and fast-forwards a checked-out base before branching', async () => {
    const { repo, other } = withOrigin();
    const upstream = pushUpstream(other, 'up.txt');
    const res = await repo.warrenJson<{ path: string; state: string }>('new', 'feat', 'S-1');
    expect(res.code).toBe(0);
    expect(repo.git('rev-parse', 'main')).toBe(upstream);
    expect(fs.existsSync(path.join(repo.root, 'up.txt'))).toBe(true); // the main checkout followed
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fs.existsSync(path.join(res.json.path, 'up.txt'))).toBe(true);
  });

  it('fast-forwards a base that is not checked out by compare-and-swap', async () => {
    const { repo, other } = withOrigin();
    repo.git('checkout', '-q', '-b', 'work');
    const upstream = pushUpstream(other, 'cas.txt');
    const res = await repo.warrenJson<{ baseCommit: string }>('new', 'feat', 'S-2', '--base', 'main');
    expect(res.code).toBe(0);
    expect(res.json.baseCommit).toBe(upstream);
    expect(repo.git('rev-parse', 'main')).toBe(upstream);
  });

  it('refuses a diverged base loudly and creates nothing; --no-sync branches from the local base', async () => {
    const { repo, other } = withOrigin();
    pushUpstream(other, 'theirs.txt');
    repo.write('mine.txt', 'mine');
    const local = repo.commit('local only');
    repo.git('fetch', '-q', 'origin');
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('new', 'feat', 'S-3');
    expect(res.code).toBe(1);
    expect(res.json.error.code).toBe('BASE_DIVERGED');
    expect(res.json.error.message).toMatch(/has diverged from refs\/remotes\/origin\/main/);
    expect(res.json.error.hint).toMatch(/--no-sync/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);

    const noSync = await repo.warrenJson<{ baseCommit: string }>('new', 'feat', 'S-3', '--no-sync');
    expect(noSync.code).toBe(0);
    expect(noSync.json.baseCommit).toBe(local);
  });

  it('is a no-op for a repository with no remote', async () => {
    const repo = makeRepo();
    const res = await repo.warrenJson<{ state: string }>('new', 'feat', 'S-4');
    expect(res.json.state).toBe('ready');
  });
});
