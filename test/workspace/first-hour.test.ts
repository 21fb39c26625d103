import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { lockTask } from '../../src/workspace/locks.js';
import { gitIn, makeRepo, refsAndWorktrees, runCli, tmpDir } from '../helpers/repo.js';

/** Issue 31: the refusals a new user meets in the first hour say what is really the matter. */

interface Refusal {
  error: { code: string; message: string; hint?: string };
}

describe('refusals that name the real cause', () => {
  it('a repository with no commits says it has none yet, not that the base is unknown', async () => {
    const root = path.join(tmpDir(), 'empty');
    fs.mkdirSync(root);
    gitIn(root, 'init', '-q', '-b', 'main');
    const home = path.join(path.dirname(root), 'home');
    const r = await runCli(['--json', 'new', 'feat', 'first'], { cwd: root, home });
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout) as Refusal;
    expect(error.code).toBe('BASE_UNKNOWN');
    expect(error.message).toMatch(/^this repository has no commits yet, so there is no "main" to branch from/);
    expect(error.hint).toMatch(/git commit --allow-empty/);
    expect(fs.readdirSync(root)).toEqual(['.git']);
  });

  it('an ID that exists and is busy says it exists, not who holds its lock', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'busy')).code).toBe(0);
    const ctx = await openProject(repo.root, { store: () => openStore(repo.home) });
    const held = lockTask(ctx, 'busy', 'a long exec');
    try {
      // Another process: this one holds the lock.
      const again = await runCli(['--json', 'new', 'feat', 'busy'], { cwd: repo.root, home: repo.home });
      expect(again.code).toBe(1);
      const { error } = JSON.parse(again.stdout) as Refusal;
      expect(error.code).toBe('TASK_EXISTS');
      expect(error.message).toMatch(/^task busy already exists/);
    } finally {
      held.release();
      ctx.store.close();
    }
  });

  it('ctrl-c early in `new` undoes what it made and says so; the next command has nothing to repair', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: copy }\n',
      },
    });
    fs.mkdirSync(path.join(repo.root, 'node_modules', 'dep'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, 'node_modules', 'dep', 'index.js'), 'x\n');
    const before = refsAndWorktrees(repo.root);
    // SIGINT to itself right after provisioning: a ctrl-c at that moment.
    const r = await runCli(['new', 'feat', 'cut'], {
      cwd: repo.root,
      home: repo.home,
      env: { WARREN_FAULT: 'new:after-provision:SIGINT' },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('warren: interrupted: undoing what `new cut` made so far');
    expect(r.stderr).toMatch(/creating task cut failed: interrupted \(ctrl-c\)\. Undone: .*worktree .* removed/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
    const next = await repo.warren('list');
    expect(next.stderr).toBe('');
    expect(next.stdout).not.toContain('cut');
    expect((await repo.warren('new', 'feat', 'cut')).code).toBe(0);
  });
});

describe('warren show', () => {
  it('lists no "no task X" refusals from before the task existed', async () => {
    const repo = makeRepo();
    expect((await repo.warren('show', 'later')).code).toBe(2);
    expect((await repo.warren('new', 'feat', 'later')).code).toBe(0);
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'later');
    expect(shown.json.events.map((e) => e.kind)).toContain('task.created');
    expect(shown.json.events.filter((e) => e.kind === 'refused')).toEqual([]);
  });
});
