import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { prefetchFor } from '../../src/cli/prefetch.js';
import { isWarrenError } from '../../src/errors.js';
import { openProject } from '../../src/lifecycle.js';
import { Store } from '../../src/state/store.js';
import { createTask } from '../../src/workspace/create.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { unmountUnder } from '../helpers/tree.js';

/**
 * `warren new` run from the command line reads its base's and branch's facts while its code
 * loads (src/cli/prefetch.ts), before its task lock. Each case moves something between that
 * read and the task's creation, and checks what the task was made from, or what was refused.
 */

async function project(repo: TestRepo) {
  const store = new Store(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

describe('branch facts read before the task lock', () => {
  it('are taken when they let the task go ahead: the task starts where the base was when the command began', async () => {
    const repo = makeRepo();
    const before = repo.git('rev-parse', 'HEAD');
    await prefetchFor(['new', 'feat', 'early'], repo.root);
    repo.git('commit', '-q', '--allow-empty', '-m', 'after the read');
    const after = repo.git('rev-parse', 'HEAD');
    const ctx = await project(repo);

    const task = await createTask(ctx, { type: 'feat', id: 'early' });
    expect(task.baseCommit).toBe(before);
    // Taken once: the next task reads the base again.
    const next = await createTask(ctx, { type: 'feat', id: 'next' });
    expect(next.baseCommit).toBe(after);
  });

  it('are not taken by a command that asks about another branch', async () => {
    const repo = makeRepo();
    await prefetchFor(['new', 'feat', 'guessed'], repo.root);
    repo.git('commit', '-q', '--allow-empty', '-m', 'moves main');
    const ctx = await project(repo);
    const task = await createTask(ctx, { type: 'feat', id: 'asked' });
    expect(task.baseCommit).toBe(repo.git('rev-parse', 'main'));
  });

  /** The facts read, then someone else's branch made under the task's name before its add. */
  async function branchMadeAfterTheRead(repo: TestRepo) {
    await prefetchFor(['new', 'feat', 'late'], repo.root);
    repo.git('commit', '-q', '--allow-empty', '-m', 'someone else’s work');
    repo.git('branch', 'feat/late');
    const theirs = repo.git('rev-parse', 'feat/late');
    repo.git('reset', '-q', '--hard', 'HEAD~1');
    const ctx = await project(repo);
    const err = await createTask(ctx, { type: 'feat', id: 'late' }).catch((e: unknown) => e);
    expect(isWarrenError(err, 'CREATE_FAILED'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/branch feat\/late was made by something else .* it is left as it is/);
    // Their branch, at their commit; no task, no worktree.
    expect(repo.git('rev-parse', 'feat/late')).toBe(theirs);
    expect(ctx.store.getTask(ctx.key, 'late')).toBeNull();
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('/late');
  }

  it('a branch made after the read meets git’s refusal, and is left as it is', async () => {
    await branchMadeAfterTheRead(makeRepo());
  });

  it.skipIf(unavailable(import.meta.filename, 'overlay-root') !== null)('the same with `checkout: cow`: the copy-on-write checkout and the plain add it falls back to leave that branch as it is', async () => {
    const repo = makeRepo({ files: { 'a.txt': 'a\n', 'warren.yaml': 'checkout: cow\n' } });
    onTestFinished(() => unmountUnder(path.dirname(repo.root)));
    await branchMadeAfterTheRead(repo);
  });

  it('an answer that would refuse is not taken: the facts are read again under the lock', async () => {
    const repo = makeRepo();
    repo.git('branch', 'feat/gone');
    await prefetchFor(['new', 'feat', 'gone'], repo.root);
    repo.git('branch', '-D', 'feat/gone');
    const ctx = await project(repo);
    const task = await createTask(ctx, { type: 'feat', id: 'gone' });
    expect(task.state).toBe('ready');
    expect(fs.existsSync(task.path)).toBe(true);
  });
});
