import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  acquireWaiting,
  isHolderAlive,
  procStartTime,
  readHolder,
  tryAcquire,
  type LockHolder,
} from '../../src/util/lockfile.js';
import { makeRepo, refsAndWorktrees, tmpDir } from '../helpers/repo.js';

function projectLockDir(home: string, repoRoot: string): string {
  // The lock directory is named by the project key; find it via a first command.
  const dir = path.join(home, 'locks');
  const [key] = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  return path.join(dir, key ?? path.basename(repoRoot));
}

function holderFor(pid: number, purpose = 'test'): LockHolder {
  return {
    pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    procStart: procStartTime(pid),
    purpose,
    token: `t-${pid}`,
  };
}

describe('per-task locks', () => {
  it('a live holder makes a second warren fail at once with LOCK_HELD naming it; nothing is created', async () => {
    const repo = makeRepo();
    await repo.warren('new', 'feat', 'warmup'); // creates the project's lock directory
    const lockDir = projectLockDir(repo.home, repo.root);
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = sleeper.pid ?? 0;
      fs.writeFileSync(path.join(lockDir, 'L-1.lock'), JSON.stringify(holderFor(pid, 'someone else')));
      const before = refsAndWorktrees(repo.root);
      const started = Date.now();
      const res = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'L-1');
      expect(Date.now() - started).toBeLessThan(20_000); // at once, not after a wait (a lock wait is 120 s; the slack is for a loaded machine)
      expect(res.code).toBe(1);
      expect(res.json.error.code).toBe('LOCK_HELD');
      expect(res.json.error.message).toContain(`pid ${pid}`);
      expect(res.json.error.message).toContain('someone else');
      expect(refsAndWorktrees(repo.root)).toBe(before);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it("a dead holder's lock is taken over, and the takeover is an event", async () => {
    const repo = makeRepo();
    await repo.warren('new', 'feat', 'warmup');
    const lockDir = projectLockDir(repo.home, repo.root);
    const dead = spawnSync('true');
    fs.writeFileSync(path.join(lockDir, 'L-2.lock'), JSON.stringify(holderFor(dead.pid ?? 999_999, 'crashed run')));
    const res = await repo.warrenJson<{ state: string }>('new', 'feat', 'L-2');
    expect(res.code).toBe(0);
    expect(res.json.state).toBe('ready');
    const show = await repo.warrenJson<{ events: { kind: string; level: string; message: string }[] }>('show', 'L-2');
    expect(show.json.events).toContainEqual(expect.objectContaining({ kind: 'lock.takeover', level: 'warn' }));
    expect(fs.existsSync(path.join(lockDir, 'L-2.lock'))).toBe(false); // released after the command
  });
});

describe('lockfile primitive', () => {
  it('refuses a second holder in the same process and frees on release', () => {
    const file = path.join(tmpDir(), 'x.lock');
    const first = tryAcquire(file, 'one');
    expect(first.ok).toBe(true);
    const second = tryAcquire(file, 'two');
    expect(second).toMatchObject({ ok: false, holder: { pid: process.pid, purpose: 'one' } });
    if (first.ok) first.lock.release();
    expect(fs.existsSync(file)).toBe(false);
    const third = tryAcquire(file, 'three');
    expect(third.ok).toBe(true);
    if (third.ok) third.lock.release();
  });

  it('treats a reused pid (same pid, another start time) as dead', () => {
    const me = holderFor(process.pid);
    expect(isHolderAlive(me)).toBe(true);
    expect(isHolderAlive({ ...me, procStart: '1' })).toBe(false);
    expect(isHolderAlive({ ...me, host: 'another-host' })).toBe(true);
  });

  it('does not release a lock someone else now holds', () => {
    const file = path.join(tmpDir(), 'y.lock');
    const mine = tryAcquire(file, 'mine');
    expect(mine.ok).toBe(true);
    fs.writeFileSync(file, JSON.stringify(holderFor(process.pid, 'theirs')));
    if (mine.ok) mine.lock.release();
    expect(readHolder(file)?.purpose).toBe('theirs');
  });
});

describe('waiting for a lock within one process', () => {
  it('waiters take the lock one at a time in the order they asked; one that gives up does not block those behind it', async () => {
    const file = path.join(tmpDir(), 'repo.lock');
    const order: string[] = [];
    let holding = 0;
    let most = 0;
    const take = async (name: string, waitMs: number, holdMs: number): Promise<boolean> => {
      const got = await acquireWaiting(file, name, waitMs);
      if (!got.ok) {
        order.push(`${name} gave up`);
        return false;
      }
      holding++;
      most = Math.max(most, holding);
      order.push(name);
      expect(readHolder(file)?.purpose).toBe(name);
      await new Promise((r) => setTimeout(r, holdMs));
      holding--;
      got.lock.release();
      return true;
    };
    const results = await Promise.all([
      take('a', 5_000, 300),
      take('b', 5_000, 20),
      take('impatient', 50, 20),
      take('c', 5_000, 20),
      take('d', 5_000, 20),
    ]);
    expect(results).toEqual([true, true, false, true, true]);
    expect(most).toBe(1);
    expect(order).toEqual(['a', 'impatient gave up', 'b', 'c', 'd']);
    expect(fs.existsSync(file)).toBe(false);
    // The queue is empty again: the next waiter takes the lock at once.
    const again = await acquireWaiting(file, 'again', 1_000);
    expect(again.ok).toBe(true);
    if (again.ok) again.lock.release();
  });
});
