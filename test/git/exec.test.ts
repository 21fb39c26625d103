import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWarrenError, WarrenError } from '../../src/errors.js';
import { git, gitEnv } from '../../src/git/exec.js';
import { pinWorktree } from '../../src/git/worktree.js';
import { makeRepo, tmpDir } from '../helpers/repo.js';
import { assertNoLinks, oddEntries } from '../../src/git/git-dir-links.js';

/** A zombie is dead: killed, merely not yet reaped (PID 1 here may never reap orphans). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('the git seam', () => {
  it('kills the whole process group on timeout, including what git started', async () => {
    const repo = makeRepo();
    const pidFile = path.join(tmpDir(), 'pid');
    // An alias that starts a long-lived grandchild which records its pid.
    const started = Date.now();
    const err = await git(['-c', `alias.slow=!sh -c 'echo $$ > ${pidFile}; exec sleep 30'`, 'slow'], {
      cwd: repo.root,
      // 2 s: git and the alias's shell have started and written the pid, also on a loaded machine.
      timeoutMs: 2000,
    }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(isWarrenError(err, 'GIT_TIMEOUT')).toBe(true);
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    expect(pid).toBeGreaterThan(0);
    // SIGKILL to the group is synchronous in the kernel; give the reaper a moment.
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
  });

  it('turns a failure into a WarrenError with argv, exit code, stderr and a stable code', async () => {
    const repo = makeRepo();
    const err = await git(['rev-parse', '--verify', 'no-such-ref'], { cwd: repo.root }).catch((e: unknown) => e);
    expect(isWarrenError(err)).toBe(true);
    if (isWarrenError(err)) {
      expect(err.details).toMatchObject({ argv: ['git', 'rev-parse', '--verify', 'no-such-ref'], exitCode: 128 });
      expect(String(err.details?.stderr)).toMatch(/Needed a single revision/);
    }
  });

  it('runs with a fixed environment and ignores a GIT_DIR that would redirect it', async () => {
    const env = gitEnv();
    expect(env).toMatchObject({ LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat' });
    const repo = makeRepo();
    const other = makeRepo();
    process.env.GIT_DIR = path.join(other.root, '.git');
    try {
      const res = await git(['rev-parse', '--show-toplevel'], { cwd: repo.root });
      expect(res.stdout.trim()).toBe(repo.root);
    } finally {
      delete process.env.GIT_DIR;
    }
  });

  it('passes arguments as argv, never through a shell', async () => {
    const repo = makeRepo();
    const res = await git(['check-ref-format', '--branch', 'feat/$(touch pwned)'], {
      cwd: repo.root,
      allowFailure: true,
    });
    expect(res.exitCode).not.toBe(0);
    expect(fs.existsSync(path.join(repo.root, 'pwned'))).toBe(false);
  });

  it('runs no hook in a pinned workspace, nor when told to: not reference-transaction, not post-checkout, not pre-commit', async () => {
    const repo = makeRepo();
    const ran = path.join(tmpDir('warren-hooks-'), 'ran');
    for (const hook of ['reference-transaction', 'post-checkout', 'pre-commit', 'post-commit'])
      fs.writeFileSync(path.join(repo.root, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> ${ran}\n`, {
        mode: 0o755,
      });
    const ws = path.join(path.dirname(repo.root), 'ws');
    await git(['worktree', 'add', '-q', '-b', 'feat/x', ws], { cwd: repo.root, noHooks: true });
    const wt = await pinWorktree(
      repo.git('rev-parse', '--path-format=absolute', '--git-common-dir'),
      path.join(repo.root, '.git', 'hooks'),
      ws,
    );
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
    await git(['add', 'a.txt'], { cwd: wt });
    await git(['commit', '-q', '-m', 'a'], { cwd: wt });
    await git(['checkout', '-q', '-b', 'feat/y'], { cwd: wt });
    expect(fs.existsSync(ran), fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8') : '').toBe(false);
    // The same call in the main checkout, hooks on: they run (the test would see them).
    await git(['update-ref', 'refs/heads/z', 'HEAD'], { cwd: repo.root });
    expect(fs.readFileSync(ran, 'utf8')).toContain('reference-transaction');
  });
});

/** A worktree's private git directory as git makes it, then with what an agent could leave there. */
function gitDir(): string {
  const dir = tmpDir('warren-gitdir-');
  fs.mkdirSync(path.join(dir, 'logs'));
  for (const f of ['HEAD', 'ORIG_HEAD', 'index', 'commondir', 'gitdir', 'COMMIT_EDITMSG', 'logs/HEAD'])
    fs.writeFileSync(path.join(dir, f), 'x\n');
  return dir;
}

describe('links in a git directory', () => {
  it('finds none where git made only files and folders', () => {
    expect(oddEntries(gitDir())).toEqual([]);
  });

  it('finds every link (at any depth, dangling or not, to a file or a folder) and a fifo, following none', () => {
    const dir = gitDir();
    const outside = tmpDir('warren-outside-');
    fs.rmSync(path.join(dir, 'COMMIT_EDITMSG'));
    fs.symlinkSync('/etc/passwd', path.join(dir, 'COMMIT_EDITMSG'));
    fs.rmSync(path.join(dir, 'logs/HEAD'));
    fs.symlinkSync(path.join(outside, 'missing'), path.join(dir, 'logs/HEAD'));
    fs.mkdirSync(path.join(dir, 'logs/refs/bisect'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'logs/refs/bisect/x'));
    fs.writeFileSync(path.join(outside, 'inner'), 'not to be walked\n');
    execFileSync('mkfifo', [path.join(dir, 'MERGE_MSG')]);
    expect(oddEntries(dir).sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: path.join(dir, 'COMMIT_EDITMSG'), what: 'a link to /etc/passwd' },
      { path: path.join(dir, 'MERGE_MSG'), what: 'a fifo' },
      { path: path.join(dir, 'logs/HEAD'), what: `a link to ${path.join(outside, 'missing')}` },
      { path: path.join(dir, 'logs/refs/bisect/x'), what: `a link to ${outside}` },
    ]);
  });

  it('refuses with WORKSPACE_TAMPERED, naming the link and its removal, nothing changed', () => {
    const dir = gitDir();
    fs.rmSync(path.join(dir, 'COMMIT_EDITMSG'));
    fs.symlinkSync('/etc/passwd', path.join(dir, 'COMMIT_EDITMSG'));
    let thrown: unknown;
    try {
      assertNoLinks('/ws', dir);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(WarrenError);
    const err = thrown as WarrenError;
    expect(err.code).toBe('WORKSPACE_TAMPERED');
    expect(err.message).toContain(`${dir}/COMMIT_EDITMSG is a link to /etc/passwd`);
    expect(err.message).toContain('nothing was changed');
    expect(err.hint).toContain(`rm ${dir}/COMMIT_EDITMSG`);
  });
});
