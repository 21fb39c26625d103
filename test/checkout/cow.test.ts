import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { fuseMountsTouching, nobodyRepo, shellAsNobody } from '../helpers/nobody.js';
import { gitIn, makeRepo, runCli, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, unmountUnder } from '../helpers/tree.js';

/**
 * `checkout: cow`: a workspace is an overlay of the base commit's shared snapshot, and git must
 * behave in it exactly as in a `git worktree add` one. Every scenario runs the same git commands
 * in a cow workspace and in a plain worktree of the same commit and compares what git says.
 */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noFuse = unavailable(import.meta.filename, 'fuse-overlayfs');

interface Shown {
  path: string;
  data: { checkout?: { mode: string; commit: string; lower: string; upper: string; work: string; fuse?: boolean } };
  events: { kind: string; level: string; message: string }[];
}

function files(n: number): Record<string, string> {
  const out: Record<string, string> = { '.gitignore': 'node_modules/\n', 'warren.yaml': 'checkout: cow\n' };
  for (let i = 0; i < n; i++) out[`src/d${i % 7}/f${i}.txt`] = `line ${i}\n`;
  return out;
}

function cowRepo(extraYaml = ''): TestRepo {
  const repo = makeRepo({ files: { ...files(60), 'warren.yaml': `checkout: cow\n${extraYaml}` } });
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return repo;
}

function mountedAt(p: string): string | null {
  const line = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === p);
  return line ? (line.split(' - ')[1]?.split(' ')[0] ?? null) : null;
}

async function newTask(
  repo: TestRepo,
  id: string,
  env: Record<string, string> = {},
): Promise<{ path: string; stderr: string }> {
  const r = await runCli(['--json', 'new', 'feat', id, '--no-sync'], { cwd: repo.root, home: repo.home, env });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { path: (JSON.parse(r.stdout) as { path: string }).path, stderr: r.stderr };
}

async function show(repo: TestRepo, id: string): Promise<Shown> {
  const r = await repo.warrenJson<Shown>('show', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
}

/** Runs each git command in `ws` and returns what git printed (exit code included), with the workspace path masked. */
function script(ws: string, steps: readonly (readonly string[] | ((ws: string) => void))[]): string[] {
  const out: string[] = [];
  for (const step of steps) {
    if (typeof step === 'function') {
      step(ws);
      continue;
    }
    let text: string;
    try {
      text = `0 ${execFileSync('git', step, { cwd: ws, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C', GIT_EDITOR: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] })}`;
    } catch (err) {
      const e = err as { status: number; stdout: string; stderr: string };
      text = `${e.status} ${e.stdout}${e.stderr}`;
    }
    out.push(`$ git ${step.join(' ')}\n${text.replaceAll(ws, '<ws>').replace(/\b[0-9a-f]{7,40}\b/g, '<sha>')}`);
  }
  return out;
}

const write = (rel: string, content: string) => (ws: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), content);
};

describe.skipIf(noOverlay !== null)('checkout: cow (root, kernel overlay)', () => {
  it('git behaves as in a plain worktree: status, diff, add, commit, checkout of another branch, rebase, stash', async () => {
    const repo = cowRepo();
    // Another branch and a moved base, for checkout and rebase.
    repo.git('branch', 'other');
    repo.git('checkout', '-q', 'other');
    repo.write('src/d1/f1.txt', 'other\n');
    repo.write('only-on-other.txt', 'x\n');
    repo.commit('other');
    repo.git('checkout', '-q', 'main');
    const base = repo.git('rev-parse', 'main');

    const made = await newTask(repo, 'a');
    const ws = made.path;
    const shown = await show(repo, 'a');
    expect(shown.data.checkout).toMatchObject({ mode: 'cow', commit: base });
    expect(mountedAt(ws)).toBe('overlay');
    expect(shown.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['checkout.snapshot', 'checkout.cow']));
    expect(fs.readFileSync(path.join(shown.data.checkout?.upper ?? '', '.git'), 'utf8')).toMatch(/^gitdir: /);
    expect(gitIn(ws, 'config', '--worktree', 'core.checkStat')).toBe('minimal');
    expect(fs.readFileSync(path.join(repo.root, '.git/config'), 'utf8')).not.toMatch(/checkstat/i); // the main checkout's own policy is untouched

    // The same commands in a plain worktree of the same commit.
    const plain = path.join(path.dirname(repo.root), 'plain');
    repo.git('worktree', 'add', '-q', '-b', 'feat/plain', plain, base);
    repo.git('commit', '-q', '--allow-empty', '-m', 'base moves'); // for the rebase
    const steps = [
      ['status', '--porcelain=v1', '--untracked-files=all'],
      write('src/d2/f2.txt', 'changed\n'),
      write('new.txt', 'new\n'),
      ['status', '--porcelain=v1', '--untracked-files=all'],
      ['diff'],
      ['add', '-A'],
      ['diff', '--cached', '--stat'],
      ['commit', '-q', '-m', 'work'],
      ['status', '--porcelain=v1'],
      ['checkout', '-q', 'other'],
      ['status', '--porcelain=v1'],
      ['ls-files', 'only-on-other.txt'],
      ['checkout', '-q', '-'],
      ['rebase', '-q', 'main'],
      ['log', '--format=%s', '-3'],
      write('src/d3/f3.txt', 'stashed\n'),
      ['stash', '-q'],
      ['status', '--porcelain=v1'],
      ['stash', 'pop', '-q'],
      ['status', '--porcelain=v1'],
      ['diff', '--stat'],
      ['stash', '-q'],
      ['status', '--porcelain=v1'],
    ] as const;
    const inCow = script(ws, steps);
    const inPlain = script(plain, steps);
    expect(inCow).toEqual(inPlain.map((s) => s.replaceAll('feat/plain', 'feat/a')));
    expect(inCow.join('\n')).toContain(' M src/d2/f2.txt');
    expect(fs.readFileSync(path.join(ws, 'src/d1/f1.txt'), 'utf8')).toBe('line 1\n');
    // The snapshot is untouched by all of it; the changes are in the task's layer.
    expect(fs.readFileSync(path.join(shown.data.checkout?.lower ?? '', 'src/d2/f2.txt'), 'utf8')).toBe('line 2\n');
    expect(fs.readFileSync(path.join(shown.data.checkout?.upper ?? '', 'src/d2/f2.txt'), 'utf8')).toBe('changed\n');

    // rm through warren: unmount, then git's record, the folder and the layer; never through the mount.
    const rm = await repo.warren('rm', 'a');
    expect(rm.code, rm.stderr).toBe(0);
    expect(mountedAt(ws)).toBeNull();
    expect(fs.existsSync(ws)).toBe(false);
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(ws);
    expect(fs.existsSync(path.dirname(shown.data.checkout?.upper ?? ''))).toBe(false);
    expect(repo.git('log', '--format=%s', '-1', 'feat/a')).toBe('work'); // the branch keeps the work
  });

  it('rm refuses while the workspace has uncommitted changes; a lost mount is mounted again on next use', async () => {
    const repo = cowRepo();
    const ws = (await newTask(repo, 'a')).path;
    fs.writeFileSync(path.join(ws, 'src/d0/f0.txt'), 'mine\n');
    const refused = await repo.warren('rm', 'a');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('M src/d0/f0.txt');
    expect(mountedAt(ws)).toBe('overlay');

    // A reboot: the mount is gone; the folder holds only .git.
    execFileSync('umount', [ws]);
    expect(fs.readdirSync(ws)).toEqual(['.git']);
    const ran = await repo.warrenJson<{ exitCode: number }>('exec', 'a', '--', 'git', 'status', '--porcelain');
    expect(ran.code, ran.stderr).toBe(0);
    expect(mountedAt(ws)).toBe('overlay');
    expect(fs.readFileSync(path.join(ws, 'src/d0/f0.txt'), 'utf8')).toBe('mine\n');
    expect((await show(repo, 'a')).events.map((e) => e.kind)).toContain('checkout.remount');
    // rm also mounts it again before judging the workspace (else every file would look deleted).
    execFileSync('umount', [ws]);
    const stillRefused = await repo.warren('rm', 'a');
    expect(stillRefused.stderr).toContain('1 uncommitted change(s)');
    gitIn(ws, 'checkout', '--', '.');
    expect((await repo.warren('rm', 'a')).code).toBe(0);
    expect(fs.existsSync(ws)).toBe(false);
  });

  it('rm --discard saves what is in the overlay before taking it off; restore brings it back', async () => {
    const repo = cowRepo();
    const ws = (await newTask(repo, 'a')).path;
    fs.writeFileSync(path.join(ws, 'src/d0/f0.txt'), 'changed\n');
    fs.writeFileSync(path.join(ws, 'untracked.txt'), 'new\n');
    const discarded = await repo.warren('rm', 'a', '--discard');
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(mountedAt(ws)).toBeNull();
    expect(fs.existsSync(ws)).toBe(false);
    const restored = await repo.warren('restore', 'a');
    expect(restored.code, restored.stderr).toBe(0);
    expect(fs.readFileSync(path.join(ws, 'src/d0/f0.txt'), 'utf8')).toBe('changed\n');
    expect(fs.readFileSync(path.join(ws, 'untracked.txt'), 'utf8')).toBe('new\n');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('M src/d0/f0.txt\n?? untracked.txt');
  });

  it('a new base builds its snapshot from the previous one (changed paths only); gc deletes unused snapshots but the newest', async () => {
    const repo = cowRepo();
    await newTask(repo, 'a');
    const first = (await show(repo, 'a')).data.checkout;
    repo.write('src/d0/f0.txt', 'moved\n');
    fs.rmSync(path.join(repo.root, 'src/d1/f1.txt'));
    repo.write('added/file.txt', 'added\n');
    const second = repo.commit('base moves');
    const b = await newTask(repo, 'b');
    const shown = await show(repo, 'b');
    const made = shown.events.find((e) => e.kind === 'checkout.snapshot');
    expect(made?.message).toMatch(new RegExp(`from ${first?.commit.slice(0, 12)}'s, 3 changed paths written`));
    expect(shown.data.checkout?.commit).toBe(second);
    expect(fs.readFileSync(path.join(b.path, 'src/d0/f0.txt'), 'utf8')).toBe('moved\n');
    expect(fs.existsSync(path.join(b.path, 'src/d1/f1.txt'))).toBe(false);
    expect(gitIn(b.path, 'status', '--porcelain')).toBe('');
    // The first snapshot is as it was (hard links are never written through).
    expect(fs.readFileSync(path.join(first?.lower ?? '', 'src/d0/f0.txt'), 'utf8')).toBe('line 0\n');
    expect(fs.existsSync(path.join(first?.lower ?? '', 'src/d1/f1.txt'))).toBe(true);

    // While a uses the first snapshot, gc keeps it; once a is gone, it goes. b's (the newest) stays.
    let gc = await repo.warrenJson<{ removed: { kind: string; path: string }[] }>('gc');
    expect(gc.json.removed.filter((r) => r.kind === 'checkout_snapshot')).toEqual([]);
    expect((await repo.warren('rm', 'a')).code).toBe(0);
    gc = await repo.warrenJson<{ removed: { kind: string; path: string }[] }>('gc');
    expect(gc.json.removed).toContainEqual(
      expect.objectContaining({ kind: 'checkout_snapshot', path: path.dirname(first?.lower ?? '') }),
    );
    expect(fs.existsSync(shown.data.checkout?.lower ?? '')).toBe(true);
    expect((await repo.warren('rm', 'b')).code).toBe(0);
  });

  it('a cow node_modules inside a cow checkout: both mounted, git ignores it, rm takes off the inner one first', async () => {
    const repo = makeRepo({
      files: {
        ...files(30),
        'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
        'warren.yaml': 'checkout: cow\nprovision:\n  - { path: node_modules, mode: cow }\n',
      },
    });
    onTestFinished(() => unmountUnder(path.dirname(repo.root)));
    makeNodeModules(repo.root);
    const ws = (await newTask(repo, 'a')).path;
    expect(mountedAt(ws)).toBe('overlay');
    expect(mountedAt(path.join(ws, 'node_modules'))).toBe('overlay');
    expect(fs.readFileSync(path.join(ws, 'node_modules/left-pad/index.js'), 'utf8')).toContain('padStart');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('');
    fs.writeFileSync(path.join(ws, 'node_modules/left-pad/index.js'), 'patched\n');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(repo.root, 'node_modules/left-pad/index.js'), 'utf8')).toContain('padStart');
    // A reboot takes both: exec mounts the checkout, then the layer inside it.
    execFileSync('umount', [path.join(ws, 'node_modules')]);
    execFileSync('umount', [ws]);
    const ran = await repo.warrenJson('exec', 'a', '--', 'cat', 'node_modules/left-pad/index.js');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain('patched');
    expect((await repo.warren('rm', 'a')).code).toBe(0);
    expect(mountedAt(path.join(ws, 'node_modules'))).toBeNull();
    expect(mountedAt(ws)).toBeNull();
    expect(fs.existsSync(ws)).toBe(false);
    expect(fs.readFileSync(path.join(repo.root, 'node_modules/left-pad/index.js'), 'utf8')).toContain('padStart');
  });

  it('land, through the merge queue whose integration workspace is a cow checkout too', async () => {
    // The gate passes only where its workspace is an overlay mount.
    const repo = cowRepo(
      'verify:\n  - { id: on-overlay, run: "grep -q \\" $(pwd) .* - overlay \\" /proc/self/mountinfo" }\n',
    );
    const ws = (await newTask(repo, 'a')).path;
    fs.writeFileSync(path.join(ws, 'feature.txt'), 'feature\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-q', '-m', 'feature');
    const landed = await repo.warrenJson<{ state: string }>('land', 'a');
    expect(landed.code, landed.stdout + landed.stderr).toBe(0);
    expect(repo.git('show', 'main:feature.txt')).toBe('feature');
    // No integration workspace, mount or layer is left behind.
    const root = path.dirname(ws);
    expect(fs.readdirSync(root).filter((n) => !n.startsWith('a') && !n.startsWith('.'))).toEqual([]);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(`${root}/.`);
    expect((await repo.warren('rm', 'a')).code).toBe(0);
  });

  it('falls back to git worktree add, saying why; checkout: auto stays git below its size', async () => {
    const repo = cowRepo();
    const made = await newTask(repo, 'off', { WARREN_COW: 'off' });
    expect(made.stderr).toContain(
      'checkout: cow fell back to git worktree add because overlay disabled by WARREN_COW=off',
    );
    expect(mountedAt(made.path)).toBeNull();
    expect((await show(repo, 'off')).data.checkout).toBeUndefined();
    expect(gitIn(made.path, 'status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(made.path, 'src/d0/f0.txt'), 'utf8')).toBe('line 0\n');
    expect((await repo.warren('rm', 'off')).code).toBe(0);

    repo.write('warren.yaml', 'checkout: auto\n');
    repo.commit('auto');
    const small = await newTask(repo, 'small');
    expect(small.stderr).not.toContain('fell back');
    expect(mountedAt(small.path)).toBeNull();
  });

  it('a warren killed right after mounting is undone by the next command: unmounted first, then removed', async () => {
    const repo = cowRepo();
    const killed = await runCli(['new', 'feat', 'k', '--no-sync'], {
      cwd: repo.root,
      home: repo.home,
      env: { WARREN_FAULT: 'new:worktree-added' },
    });
    expect(killed.code).not.toBe(0);
    const ws = path.join(path.dirname(repo.root), 'warren-home');
    const mounted = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.includes(`${ws}/worktrees/`));
    expect(mounted).toHaveLength(1);
    const list = await repo.warrenJson<unknown[]>('list');
    expect(list.code, list.stderr).toBe(0);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(`${ws}/worktrees/`);
    expect(repo.git('branch', '--list', 'feat/k')).toBe('');
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('/k\n');
    expect((await newTask(repo, 'k')).path).toContain('/k');
  });

  it('gc: the mount of a task whose record is gone comes off if it is clean, and is kept with its changes if not', async () => {
    const repo = cowRepo();
    const clean = (await newTask(repo, 'clean')).path;
    const dirty = (await newTask(repo, 'dirty')).path;
    fs.writeFileSync(path.join(dirty, 'src/d0/f0.txt'), 'unsaved work\n');
    const db = new Database(path.join(repo.home, 'state.db'));
    db.prepare("DELETE FROM tasks WHERE id IN ('clean', 'dirty')").run();
    db.close();
    const gc = await repo.warrenJson<{
      removed: { kind: string; path: string }[];
      kept: { kind: string; path: string; reason: string }[];
    }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed).toContainEqual(expect.objectContaining({ kind: 'checkout_mount', path: clean }));
    expect(mountedAt(clean)).toBeNull();
    expect(fs.existsSync(clean)).toBe(false);
    expect(gc.json.kept).toContainEqual(
      expect.objectContaining({
        kind: 'checkout_mount',
        path: dirty,
        reason: expect.stringContaining('uncommitted changes'),
      }),
    );
    expect(mountedAt(dirty)).toBe('overlay');
    expect(fs.readFileSync(path.join(dirty, 'src/d0/f0.txt'), 'utf8')).toBe('unsaved work\n');
  });
});

describe.skipIf(noFuse !== null)('checkout: cow as an unprivileged user (fuse-overlayfs)', () => {
  it('a plain shell sees the checkout; git behaves (status, diff, add, commit, stash, checkout); rm unmounts with fusermount', () => {
    const repo = nobodyRepo((root) => {
      for (const [rel, content] of Object.entries(files(40))) {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), content);
      }
    });
    repo.git('branch', 'other');
    const ws = repo.json<{ path: string }>(['new', 'feat', 'a']).path;
    const shown = repo.json<Shown>(['show', 'a']);
    expect(shown.data.checkout).toMatchObject({ mode: 'cow', fuse: true });
    expect(fuseMountsTouching(repo.base)).toEqual([ws]);
    const run = (cmd: string) => {
      const r = shellAsNobody(ws, `export HOME=${repo.home}; ${cmd}`);
      expect(r.code, `${cmd}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    expect(run('ls src')).toBe('d0\nd1\nd2\nd3\nd4\nd5\nd6\n');
    expect(run('git status --porcelain')).toBe('');
    run('echo changed > src/d2/f2.txt && echo new > new.txt');
    expect(run('git status --porcelain')).toBe(' M src/d2/f2.txt\n?? new.txt\n');
    expect(run('git diff --stat')).toContain('src/d2/f2.txt | 2 +-');
    run('git add -A && git commit -q -m work');
    expect(run('git status --porcelain')).toBe('');
    run('echo stashed > src/d3/f3.txt && git stash -q');
    expect(run('git status --porcelain')).toBe('');
    run('git stash pop -q && git checkout -q -- . && git checkout -q other && git checkout -q -');
    expect(run('git log --format=%s -1')).toBe('work\n');
    const rm = repo.warren(['rm', 'a']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(fuseMountsTouching(repo.base)).toEqual([]);
    expect(fs.existsSync(ws)).toBe(false);
    expect(fs.readFileSync(path.join(shown.data.checkout?.lower ?? '', 'src/d2/f2.txt'), 'utf8')).toBe('line 2\n');
  });

  it('a cow node_modules inside a fuse-overlayfs checkout falls back to a copy, saying why; both seen from a plain shell', () => {
    const repo = nobodyRepo((root) => {
      fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
      fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
      fs.writeFileSync(
        path.join(root, 'warren.yaml'),
        'checkout: cow\nprovision:\n  - { path: node_modules, mode: cow }\n',
      );
      makeNodeModules(root);
    });
    const made = repo.warren(['--json', 'new', 'feat', 'a']);
    expect(made.code, made.stderr).toBe(0);
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    expect(made.stderr).toContain('node_modules: cow fell back to cp -a because mounting fuse-overlayfs failed');
    expect(made.stderr).toContain('the workspace is itself a fuse-overlayfs checkout');
    const seen = shellAsNobody(ws, 'cat node_modules/left-pad/index.js && git status --porcelain');
    expect(seen.code, seen.stderr).toBe(0);
    expect(seen.stdout).toBe('module.exports = (s, n) => String(s).padStart(n);\n');
    expect(repo.warren(['rm', 'a']).code).toBe(0);
    expect(fuseMountsTouching(repo.base)).toEqual([]);
  });
});
