import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { moveIn, startStaging, stagingDir } from '../../src/provision/modes/staging.js';
import { BIN, gitIn, makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, treeDigest } from '../helpers/tree.js';

/**
 * `new` starts the copy of each `copy` and `hardlink` path while git makes the worktree, in a
 * staging folder of the task's own, and moves it in (src/provision/modes/staging.ts).
 */

function repoWith(yaml: string): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\ncache/\n',
      'package-lock.json': '{"lockfileVersion":3}\n',
      'warren.yaml': yaml,
    },
  });
  makeNodeModules(repo.root);
  repo.write('cache/data.txt', 'cached\n');
  return repo;
}

const BOTH = 'provision:\n  - { path: node_modules, mode: hardlink }\n  - { path: cache, mode: copy }\n';

/** The task's provisioning folder under WARREN_HOME (where the staging folder is). */
function provisionDir(repo: TestRepo, id: string): string {
  const projects = path.join(repo.home, 'provision');
  const key = fs.existsSync(projects) ? (fs.readdirSync(projects)[0] ?? '') : '';
  return path.join(projects, key, id);
}

/** Where under `dir` a copy of the provisioned trees is (a `data.txt` or `left-pad`), by lstat. */
function copiesIn(dir: string): string[] {
  const found: string[] = [];
  const visit = (at: string): void => {
    for (const d of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, d.name);
      if (d.name === 'data.txt' || d.name === 'left-pad') found.push(full);
      else if (d.isDirectory()) visit(full);
    }
  };
  visit(dir);
  return found;
}

function workspaceOf(repo: TestRepo, id: string): string {
  const root = path.join(repo.home, 'worktrees');
  return path.join(root, fs.readdirSync(root)[0] ?? '', id);
}

describe('staging: the copies started before the workspace exists', () => {
  it('makes each copy beside the workspace root, moves in what is taken, and deletes the rest on close', async () => {
    const repo = repoWith(BOTH);
    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    fs.mkdirSync(ctx.root, { recursive: true });
    const staging = startStaging(ctx, 't1', [
      { path: 'node_modules', mode: 'hardlink', from: 'warren.yaml' },
      { path: 'cache', mode: 'copy', from: 'warren.yaml' },
    ]);
    expect(staging).not.toBeNull();
    const linked = staging?.take('node_modules');
    expect(linked?.at.startsWith(stagingDir(ctx, 't1'))).toBe(true);
    expect(await linked?.made).toEqual({ linked: null, filled: 0, filledBytes: 0, failed: [] });
    expect(staging?.take('node_modules')).toBeNull(); // taken once
    const dst = path.join(ctx.root, 'ws', 'node_modules');
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    if (linked) moveIn(linked, dst);
    expect(treeDigest(dst)).toBe(treeDigest(path.join(repo.root, 'node_modules')));
    // Hard links: the same files as the main checkout's.
    expect(fs.statSync(path.join(dst, 'left-pad/index.js')).ino).toBe(
      fs.statSync(path.join(repo.root, 'node_modules/left-pad/index.js')).ino,
    );
    // `cache` was never taken: close waits for its cp and deletes it with the folder.
    await staging?.close();
    expect(fs.existsSync(stagingDir(ctx, 't1'))).toBe(false);
    expect(fs.existsSync(path.dirname(stagingDir(ctx, 't1')))).toBe(false);
    expect(fs.readFileSync(path.join(repo.root, 'cache/data.txt'), 'utf8')).toBe('cached\n');
  });

  it("`new` moves the copies in and leaves no staging folder; a path the branch has keeps the branch's", async () => {
    const repo = repoWith(BOTH);
    // A base whose tree tracks cache/: the workspace has it, so the staged copy is dropped.
    repo.git('checkout', '-q', '-b', 'tracked');
    fs.writeFileSync(path.join(repo.root, 'cache/data.txt'), "the branch's\n");
    repo.git('add', '-f', 'cache/data.txt');
    repo.git('commit', '-q', '-m', 'track cache');
    repo.git('checkout', '-q', 'main');
    repo.write('cache/data.txt', 'cached\n');

    const made = await repo.warren('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);
    const ws = workspaceOf(repo, 'a');
    expect(treeDigest(path.join(ws, 'node_modules'))).toBe(treeDigest(path.join(repo.root, 'node_modules')));
    expect(fs.readFileSync(path.join(ws, 'cache/data.txt'), 'utf8')).toBe('cached\n');
    expect(fs.existsSync(path.join(provisionDir(repo, 'a'), 'staging'))).toBe(false);

    const other = await repo.warren('new', 'feat', 'b', '--base', 'tracked');
    expect(other.code, other.stderr).toBe(0);
    const wsB = workspaceOf(repo, 'b');
    expect(fs.readFileSync(path.join(wsB, 'cache/data.txt'), 'utf8')).toBe("the branch's\n");
    expect(gitIn(wsB, 'status', '--porcelain')).toBe('');
    expect(fs.existsSync(path.join(provisionDir(repo, 'b'), 'staging'))).toBe(false);
  });

  it('a `new` killed while its copies were staged is undone by the next command, staging folder and all', () => {
    const repo = repoWith(BOTH);
    for (const step of ['row-inserted', 'worktree-added', 'meta-written']) {
      const crashed = spawnSync(process.execPath, [BIN, 'new', 'feat', 'k'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home, WARREN_FAULT: `new:${step}` },
        encoding: 'utf8',
      });
      expect(crashed.signal, `${step}: ${crashed.stderr}`).toBe('SIGKILL');
      const scan = spawnSync(process.execPath, [BIN, 'scan'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home },
        encoding: 'utf8',
      });
      expect(scan.status, scan.stderr).toBe(0);
      expect(fs.existsSync(provisionDir(repo, 'k')), `${step}: the task's provisioning folder`).toBe(false);
      expect(copiesIn(repo.home), `${step}: a copy left in WARREN_HOME`).toEqual([]);
      expect(gitIn(repo.root, 'branch', '--list', 'feat/k')).toBe('');
    }
    const again = spawnSync(process.execPath, [BIN, 'new', 'feat', 'k'], {
      cwd: repo.root,
      env: { ...process.env, WARREN_HOME: repo.home },
      encoding: 'utf8',
    });
    expect(again.status, again.stderr).toBe(0);
    expect(fs.readFileSync(path.join(workspaceOf(repo, 'k'), 'cache/data.txt'), 'utf8')).toBe('cached\n');
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a workspace root on another file system: nothing is staged, each path is copied into the workspace',
    async () => {
      const repo = repoWith(BOTH);
      const root = tmpDir('warren-staging-root-');
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', root]);
      onTestFinished(() => void spawnSync('umount', ['-l', root]));
      const made = spawnSync(process.execPath, [BIN, '--json', 'new', 'feat', 'x'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home, WARREN_WORKTREE_ROOT: root },
        encoding: 'utf8',
      });
      expect(made.status, made.stderr).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      expect(ws.startsWith(root)).toBe(true);
      expect(fs.readFileSync(path.join(ws, 'cache/data.txt'), 'utf8')).toBe('cached\n');
      // Across file systems the kernel links nothing: the fill pass copied every file.
      expect(treeDigest(path.join(ws, 'node_modules'))).toBe(treeDigest(path.join(repo.root, 'node_modules')));
      expect(fs.existsSync(path.join(provisionDir(repo, 'x'), 'staging'))).toBe(false);
      const rm = spawnSync(process.execPath, [BIN, 'rm', 'x'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home, WARREN_WORKTREE_ROOT: root },
        encoding: 'utf8',
      });
      expect(rm.status, rm.stderr).toBe(0);
    },
  );
});
