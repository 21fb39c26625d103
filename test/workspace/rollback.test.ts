import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { LIFECYCLE, openProject } from '../../src/composition.js';
import { openStore } from '../../src/composition.js';
import type { Store } from '../../src/state/store.js';
import { readMounts, mountsUnder } from '../../src/system/mounts.js';
import { createTask } from '../../src/workspace/create.js';
import type { CreateStep, Lifecycle } from '../../src/workspace/types.js';
import { gitIn, makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * The central promise of `warren new`: a failure at any step undoes everything the steps before
 * it made. In process, with the real lifecycle and a failing step put after each of its steps
 * in turn — possible because the steps are a list handed in, not a global.
 */

const injected = (after: string): CreateStep => ({
  name: `fail after ${after}`,
  run: () => Promise.reject(new Error(`injected failure after ${after}`)),
});

function repoWithEverything(): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'cache/\nshared/\n',
      'warren.yaml': [
        'provision:',
        '  - { path: cache, mode: copy }',
        '  - { path: shared, mode: share }',
        'setup:',
        '  - { id: mark, run: "touch .setup-ran" }',
        '',
      ].join('\n'),
    },
  });
  repo.write('cache/a.txt', 'cached\n');
  repo.write('shared/b.txt', 'shared\n');
  return repo;
}

/** Everything a task leaves anywhere: refs, worktrees, files beside the workspace, rows. */
function traces(repo: TestRepo, store: Store, project: string, id: string): Record<string, unknown> {
  const home = repo.home;
  const exists = (p: string) => fs.existsSync(p);
  return {
    branch: gitIn(repo.root, 'branch', '--list', `feat/${id}`),
    worktrees: gitIn(repo.root, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ') && l.includes(`/${id}`)),
    row: store.getTask(project, id),
    ports: (
      store.db.prepare('SELECT COUNT(*) AS n FROM ports WHERE project = ? AND task_id = ?').get(project, id) as {
        n: number;
      }
    ).n,
    workspace: exists(path.join(home, 'worktrees', project, id)),
    meta: exists(path.join(home, 'worktrees', project, `${id}.warren.json`)),
    manifests: exists(path.join(home, 'provision', project, id)),
    layers: exists(path.join(home, 'overlays', project, id)),
    lock: exists(path.join(home, 'locks', project, `${id}.lock`)),
    mounts: mountsUnder(readMounts(), path.join(home, 'worktrees', project)).length,
    excludeBlock: fs.readFileSync(path.join(repo.root, '.git', 'info', 'exclude'), 'utf8').includes('# >>> warren'),
  };
}

const CLEAN = {
  branch: '',
  worktrees: [],
  row: null,
  ports: 0,
  workspace: false,
  meta: false,
  manifests: false,
  layers: false,
  lock: false,
  mounts: 0,
  excludeBlock: false,
};

describe('rollback of `warren new`, after each step', () => {
  const names = LIFECYCLE.create.map((s) => s.name);
  // Position 0: right after the worktree and its metadata exist; position i: after the i-th step.
  const positions = [{ after: 'the worktree', at: 0 }, ...names.map((name, i) => ({ after: name, at: i + 1 }))];

  it.each(positions)('a failure after $after undoes everything made before it', async ({ after, at }) => {
    const repo = repoWithEverything();
    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    const steps = [...LIFECYCLE.create];
    steps.splice(at, 0, injected(after));
    ctx.lifecycle = { ...LIFECYCLE, create: steps } satisfies Lifecycle;

    const err = await createTask(ctx, { type: 'feat', id: 'rb' }).catch((e: unknown) => e);
    expect(isWarrenError(err, 'CREATE_FAILED'), String(err)).toBe(true);
    expect((err as Error).message).toContain(`injected failure after ${after}`);
    expect((err as Error).message).toMatch(/Undone: .*task record deleted/);
    expect(traces(repo, store, ctx.key, 'rb')).toEqual(CLEAN);
    // The main checkout's provisioned sources are untouched.
    expect(fs.readFileSync(path.join(repo.root, 'cache', 'a.txt'), 'utf8')).toBe('cached\n');
    expect(fs.readFileSync(path.join(repo.root, 'shared', 'b.txt'), 'utf8')).toBe('shared\n');
    expect(gitIn(repo.root, 'status', '--porcelain')).toBe('');

    // And the same task can then be made, whole.
    ctx.lifecycle = LIFECYCLE;
    const task = await createTask(ctx, { type: 'feat', id: 'rb' });
    expect(task.state).toBe('ready');
    expect(fs.existsSync(path.join(task.path, '.setup-ran'))).toBe(true);
    expect(fs.readFileSync(path.join(task.path, 'cache', 'a.txt'), 'utf8')).toBe('cached\n');
  });

  it.skipIf(process.getuid?.() !== 0)(
    'never deletes through a mount it did not make: the workspace is kept and named',
    async () => {
      const repo = makeRepo();
      const store = openStore(repo.home);
      onTestFinished(() => store.close());
      const ctx = await openProject(repo.root, { store });
      const outside = tmpDir('warren-outside-');
      fs.writeFileSync(path.join(outside, 'precious.txt'), 'keep me\n');
      let mountPoint = '';
      // A step that bind-mounts a folder from outside into the workspace, then fails.
      const mountThenFail: CreateStep = {
        name: 'mount then fail',
        run: async (_ctx, task) => {
          mountPoint = path.join(task.path, 'mnt');
          fs.mkdirSync(mountPoint);
          execFileSync('mount', ['--bind', outside, mountPoint]);
          throw new Error('failed with a mount inside');
        },
      };
      onTestFinished(() => {
        if (mountPoint && mountsUnder(readMounts(), mountPoint).length > 0) execFileSync('umount', [mountPoint]);
      });
      ctx.lifecycle = { ...LIFECYCLE, create: [mountThenFail] };
      const err = await createTask(ctx, { type: 'feat', id: 'mnt' }).catch((e: unknown) => e);
      expect(isWarrenError(err, 'CREATE_FAILED')).toBe(true);
      expect((err as Error).message).toContain('still mounted inside');
      // Nothing was deleted through the mount; the workspace and its row stay for scan and gc.
      expect(fs.readFileSync(path.join(outside, 'precious.txt'), 'utf8')).toBe('keep me\n');
      expect(fs.existsSync(mountPoint)).toBe(true);
      expect(store.getTask(ctx.key, 'mnt')?.state).toBe('creating');
    },
  );
});
