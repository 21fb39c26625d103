import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, refsAndWorktrees, type TestRepo } from '../helpers/repo.js';

interface Err {
  error: { code: string; message: string; hint?: string };
}

async function newTask(repo: TestRepo, id: string, type = 'feat'): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', type, id);
  expect(res.code).toBe(0);
  return res.json.path;
}

function commitIn(ws: string, file: string, content: string, message: string): void {
  fs.writeFileSync(path.join(ws, file), content);
  execFileSync('git', ['add', '-A'], { cwd: ws });
  execFileSync('git', ['commit', '-q', '-m', message], { cwd: ws });
}

const noChattr = unavailable(import.meta.filename, 'chattr');
const noMount = unavailable(import.meta.filename, 'tmpfs-mount');

describe('warren rm', () => {
  it('removes a clean workspace: git forgets it, the directory and metadata are gone, the branch is kept', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'R-1');
    const res = await repo.warrenJson<{ removed: boolean; branchDeleted: boolean; unlandedCommits: number }>(
      'rm',
      'R-1',
    );
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ removed: true, branchDeleted: false, unlandedCommits: 0 });
    expect(fs.existsSync(ws)).toBe(false);
    expect(fs.existsSync(`${ws}.warren.json`)).toBe(false);
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(ws);
    expect(repo.git('branch', '--list', 'feat/R-1')).toContain('feat/R-1');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
  });

  it('refuses a dirty workspace, naming what would be lost, and leaves every file intact', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'D-1');
    fs.writeFileSync(path.join(ws, 'README.md'), 'edited\n');
    fs.mkdirSync(path.join(ws, 'deep', 'er'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'deep', 'er', 'new.txt'), 'untracked\n');
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<Err>('rm', 'D-1');
    expect(res.code).toBe(1);
    expect(res.json.error.code).toBe('WORKSPACE_DIRTY');
    expect(res.json.error.message).toContain('README.md');
    expect(res.json.error.message).toContain('deep/er/new.txt');
    expect(res.json.error.message).toMatch(/Nothing was removed/);
    expect(fs.readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('edited\n');
    expect(fs.readFileSync(path.join(ws, 'deep', 'er', 'new.txt'), 'utf8')).toBe('untracked\n');
    expect(refsAndWorktrees(repo.root)).toBe(before);
    const human = await repo.warren('rm', 'D-1');
    expect(human.stderr).toMatch(/hint: Commit them/);
    expect((await repo.warrenJson<{ state: string }>('show', 'D-1')).json.state).toBe('ready');
  });

  it('keeps an unlanded branch and says how many commits it holds; --delete-branch refuses it and removes nothing', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'U-1');
    commitIn(ws, 'work.txt', 'work\n', 'do the work');
    const before = refsAndWorktrees(repo.root);
    const refused = await repo.warrenJson<Err>('rm', 'U-1', '--delete-branch');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('BRANCH_UNLANDED');
    expect(refused.json.error.message).toContain('do the work');
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(path.join(ws, 'work.txt'))).toBe(true);

    const kept = await repo.warren('rm', 'U-1');
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/kept branch feat\/U-1 \(1 commit\(s\) not on the base\)/);
    expect(repo.git('log', '--format=%s', '-1', 'feat/U-1')).toBe('do the work');
  });

  it('--delete-branch deletes a branch whose work is on the base or on another ref', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'M-1');
    commitIn(ws, 'a.txt', 'a\n', 'merged work');
    repo.git('merge', '-q', '--ff-only', 'feat/M-1');
    const res = await repo.warrenJson<{ branchDeleted: boolean }>('rm', 'M-1', '--delete-branch');
    expect(res.code).toBe(0);
    expect(res.json.branchDeleted).toBe(true);
    expect(repo.git('branch', '--list', 'feat/M-1')).toBe('');

    const ws2 = await newTask(repo, 'M-2');
    commitIn(ws2, 'b.txt', 'b\n', 'tagged work');
    repo.git('tag', 'keep-b', 'feat/M-2');
    const res2 = await repo.warrenJson<{ branchDeleted: boolean }>('rm', 'M-2', '--delete-branch');
    expect(res2.json.branchDeleted).toBe(true);
    expect(repo.git('log', '--format=%s', '-1', 'keep-b')).toBe('tagged work');
  });

  it('refuses an unknown task', async () => {
    const repo = makeRepo();
    const res = await repo.warrenJson<Err>('rm', 'nope');
    expect(res.code).toBe(2);
    expect(res.json.error.code).toBe('TASK_NOT_FOUND');
  });

  it('refuses when the metadata file, the row and git disagree, naming which', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'O-1');
    const metaFile = `${ws}.warren.json`;
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(metaFile, JSON.stringify({ ...meta, branch: 'feat/other' }));
    const res = await repo.warrenJson<Err>('rm', 'O-1');
    expect(res.json.error.code).toBe('OWNERSHIP_MISMATCH');
    expect(res.json.error.message).toContain('metadata file names branch feat/other');
    expect(fs.existsSync(ws)).toBe(true);

    fs.writeFileSync(metaFile, JSON.stringify(meta));
    execFileSync('git', ['checkout', '-q', '-b', 'elsewhere'], { cwd: ws });
    // Another branch checked out is the workspace's state, not disagreeing records: named, with how to switch back.
    const res2 = await repo.warrenJson<Err>('rm', 'O-1');
    expect(res2.json.error.code).toBe('TASK_STATE');
    expect(res2.json.error.message).toContain(
      `task O-1's workspace ${ws} has branch elsewhere checked out, not feat/O-1`,
    );
    expect(fs.existsSync(ws)).toBe(true);
  });

  it('refuses to follow a workspace or a root replaced by a symlink', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'S-1');
    const victim = path.join(path.dirname(repo.root), 'victim');
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'precious.txt'), 'keep me');
    // The workspace directory is swapped for a symlink to someone else's folder.
    const moved = `${ws}.moved`;
    fs.renameSync(ws, moved);
    fs.symlinkSync(victim, ws);
    const res = await repo.warrenJson<Err>('rm', 'S-1');
    expect(res.code).toBe(1);
    expect(res.json.error.code).toBe('PATH_ESCAPE');
    expect(fs.readFileSync(path.join(victim, 'precious.txt'), 'utf8')).toBe('keep me');
    fs.rmSync(ws);
    fs.renameSync(moved, ws);

    // The whole workspace root is swapped for a symlink.
    const root = path.dirname(ws);
    const realRoot = `${root}.real`;
    fs.renameSync(root, realRoot);
    fs.symlinkSync(realRoot, root);
    const res2 = await repo.warrenJson<Err>('rm', 'S-1');
    expect(res2.json.error.code).toBe('PATH_ESCAPE');
    const created = await repo.warrenJson<Err>('new', 'feat', 'S-2');
    expect(created.json.error.code).toBe('PATH_ESCAPE');
    expect(fs.existsSync(path.join(realRoot, 'S-1', 'README.md'))).toBe(true);
    expect(repo.git('branch', '--list', 'feat/S-2')).toBe('');
  });

  it.skipIf(noChattr !== null)(
    'reports an undeletable file (chattr +i) as remove_failed, scan finds it, and rm finishes once fixed',
    async () => {
      const repo = makeRepo({ files: { '.gitignore': 'build/\n', 'README.md': 'x\n' } });
      const ws = await newTask(repo, 'I-1');
      fs.mkdirSync(path.join(ws, 'build'));
      const stuck = path.join(ws, 'build', 'stuck.bin');
      fs.writeFileSync(stuck, 'immutable');
      execFileSync('chattr', ['+i', stuck]);
      try {
        const res = await repo.warrenJson<Err>('rm', 'I-1');
        expect(res.code).toBe(1);
        expect(res.json.error.code).toBe('REMOVE_INCOMPLETE');
        expect(res.json.error.message).toContain(stuck);
        expect(res.json.error.message).toMatch(/immutable/);
        expect((await repo.warrenJson<{ state: string }>('show', 'I-1')).json.state).toBe('remove_failed');
        const scan = await repo.warrenJson<{ strays: { kind: string; id?: string; path?: string }[] }>('scan');
        expect(scan.json.strays).toContainEqual(expect.objectContaining({ kind: 'stranded', id: 'I-1', path: ws }));
        // The branch is untouched.
        expect(repo.git('branch', '--list', 'feat/I-1')).toContain('feat/I-1');
      } finally {
        execFileSync('chattr', ['-i', stuck]);
      }
      const again = await repo.warrenJson<{ removed: boolean }>('rm', 'I-1');
      expect(again.code).toBe(0);
      expect(fs.existsSync(ws)).toBe(false);
      expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);
    },
  );

  it.skipIf(noMount !== null)(
    'refuses to remove a workspace with a mount inside and leaves the mounted files intact',
    async () => {
      const repo = makeRepo();
      const ws = await newTask(repo, 'MT-1');
      const mnt = path.join(ws, 'mnt');
      fs.mkdirSync(mnt);
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', mnt]);
      try {
        fs.writeFileSync(path.join(mnt, 'data.txt'), 'mounted data');
        const res = await repo.warrenJson<Err>('rm', 'MT-1');
        expect(res.code).toBe(1);
        expect(res.json.error.code).toBe('WORKSPACE_MOUNTED');
        expect(res.json.error.message).toContain(mnt);
        expect(fs.readFileSync(path.join(mnt, 'data.txt'), 'utf8')).toBe('mounted data');
        const scan = await repo.warrenJson<{ strays: { kind: string; id?: string }[] }>('scan');
        expect(scan.json.strays).toContainEqual(expect.objectContaining({ kind: 'mounted', id: 'MT-1' }));
        const gc = await repo.warrenJson<{ kept: { kind: string }[] }>('gc');
        expect(gc.json.kept).toContainEqual(expect.objectContaining({ kind: 'mounted' }));
        expect(fs.readFileSync(path.join(mnt, 'data.txt'), 'utf8')).toBe('mounted data');
      } finally {
        execFileSync('umount', [mnt]);
      }
    },
  );
});

describe('refusals are events', () => {
  it('records a refusal against the task it concerns', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'E-1');
    fs.writeFileSync(path.join(ws, 'dirty.txt'), 'x');
    expect((await repo.warren('rm', 'E-1')).code).toBe(1);
    const show = await repo.warrenJson<{ events: { kind: string; level: string; code?: string }[] }>('show', 'E-1');
    expect(show.json.events).toContainEqual(
      expect.objectContaining({ kind: 'refused', level: 'warn', code: 'WORKSPACE_DIRTY' }),
    );
  });
});
