import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { startCli } from '../helpers/procs.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * The machine refusing warren's writes is said as what it is — a full disk, a read-only file
 * system, a state database another process keeps locked — naming the file and what to do, and
 * nothing is lost: never "internal error (a bug)" with a stack trace.
 */

const noMount = unavailable(import.meta.filename, 'tmpfs-mount');

interface Err {
  error: { code: string; message: string; hint?: string };
}

/** Another process's write lock on warren's state, held until `release`. */
function holdLock(home: string): { release: () => void } {
  const db = new Database(path.join(home, 'state.db'));
  db.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

describe('a state database locked by another process', () => {
  it('says at once that it waits, then goes on when the lock is let go', async () => {
    const repo = makeRepo();
    expect((await repo.warren('list')).code).toBe(0);
    const lock = holdLock(repo.home);
    const run = startCli(['list'], { cwd: repo.root, home: repo.home });
    let stderr = '';
    run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 20_000;
    while (!stderr.includes('is locked by another process') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(stderr).toContain(`the state database ${path.join(repo.home, 'state.db')} is locked by another process`);
    expect(stderr).toMatch(/waiting up to 30 s/);
    lock.release();
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
  });

  it('gives up after WARREN_STATE_TIMEOUT with STATE_LOCKED, naming the file and how to find the holder; nothing changed', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    const lock = holdLock(repo.home);
    try {
      const run = startCli(['--json', 'rm', 'a'], {
        cwd: repo.root,
        home: repo.home,
        env: { WARREN_STATE_TIMEOUT: '2s' },
      });
      const done = await run.done;
      expect(done.code).toBe(1);
      const err = (JSON.parse(done.stdout) as Err).error;
      expect(err.code).toBe('STATE_LOCKED');
      expect(err.message).toContain(path.join(repo.home, 'state.db'));
      expect(err.message).toContain('Nothing was changed');
      expect(err.hint).toContain('fuser');
      expect(done.stderr).toMatch(/waiting up to 2 s/);
    } finally {
      lock.release();
    }
    // The task is as it was.
    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json).toEqual([expect.objectContaining({ id: 'a', state: 'ready' })]);
  });
});

describe.skipIf(noMount !== null)('WARREN_HOME on a full or read-only file system', () => {
  /** A repository whose WARREN_HOME is a small tmpfs of its own (the workspaces go there too). */
  async function onTmpfs(): Promise<TestRepo> {
    const repo = makeRepo({ trusted: false });
    fs.mkdirSync(repo.home, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', repo.home]);
    onTestFinished(() => {
      execFileSync('sh', ['-c', 'grep -q " $1 " /proc/mounts && umount -l "$1" || true', 'sh', repo.home]);
    });
    return repo;
  }

  /** Fills the file system holding `dir` to the last byte; returns how to free it. */
  function fill(dir: string): () => void {
    const filler = path.join(dir, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd ends with ENOSPC: the disk is full
    }
    return () => fs.rmSync(filler, { force: true });
  }

  it('a full disk: new and land say DISK_FULL naming the file, nothing is lost, and both work once there is room', async () => {
    const repo = await onTmpfs();
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    const ws = (await repo.warrenJson<{ path: string }>('path', 'a')).json.path;
    fs.writeFileSync(path.join(ws, 'work.txt'), 'work\n');
    expect((await repo.warren('checkpoint', 'a', '-m', 'work')).code).toBe(0);
    const mainBefore = repo.git('rev-parse', 'main');
    const free = fill(repo.home);

    for (const args of [
      ['new', 'feat', 'b'],
      ['land', 'a'],
    ]) {
      const r = await repo.warrenJson<Err>(...args);
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(1);
      expect(r.json.error.code, r.json.error.message).toBe('DISK_FULL');
      expect(r.json.error.message).toContain(repo.home);
      expect(r.json.error.message).toContain('Nothing was lost');
      expect(r.json.error.hint).toContain('df -h');
      expect(r.stderr).not.toContain('internal error');
    }
    expect(repo.git('rev-parse', 'main')).toBe(mainBefore);
    const human = await repo.warren('new', 'feat', 'c');
    expect(human.stderr).toMatch(/^warren: the disk holding .* is full/);
    expect(human.stderr).not.toMatch(/\n\s+at /); // no stack trace

    free();
    const landed = await repo.warrenJson<{ state: string }>('land', 'a');
    expect(landed.code, landed.stderr).toBe(0);
    expect(fs.readFileSync(path.join(repo.root, 'work.txt'), 'utf8')).toBe('work\n');
    expect((await repo.warren('new', 'feat', 'b')).code).toBe(0);
    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json.map((t) => `${t.id}:${t.state}`).sort()).toEqual(['a:landed', 'b:ready']);
  });

  it('a read-only file system: commands say READ_ONLY (or that the state cannot be opened), naming it; nothing is lost', async () => {
    const repo = await onTmpfs();
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    execFileSync('mount', ['-o', 'remount,ro', repo.home]);
    for (const args of [['list'], ['new', 'feat', 'b'], ['rm', 'a']]) {
      const r = await repo.warrenJson<Err>(...args);
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(1);
      expect(['READ_ONLY', 'STATE_UNAVAILABLE']).toContain(r.json.error.code);
      expect(r.json.error.message).toContain(repo.home);
      expect(r.stderr).not.toContain('internal error');
    }
    execFileSync('mount', ['-o', 'remount,rw', repo.home]);
    const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
    expect(list.json).toEqual([expect.objectContaining({ id: 'a', state: 'ready' })]);
    expect((await repo.warren('rm', 'a')).code).toBe(0);
  });
});
