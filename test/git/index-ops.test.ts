import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settleInterruptedMove } from '../../src/git/index-ops.js';
import { makeRepo } from '../helpers/repo.js';

/**
 * A move of the main checkout (`read-tree -m -u from to`) killed half way: git writes the files
 * first and the index last. The repair puts back exactly what the move wrote, and nothing of
 * anyone else's.
 */
describe('settleInterruptedMove', () => {
  function twoCommits() {
    const repo = makeRepo({
      files: { 'keep.txt': 'keep\n', 'mod.txt': 'old\n', 'gone.txt': 'gone\n' },
      trusted: false,
    });
    const from = repo.git('rev-parse', 'HEAD');
    repo.git('checkout', '-q', '-b', 'next');
    repo.write('added.txt', 'added\n');
    repo.write('mod.txt', 'new\n');
    fs.rmSync(path.join(repo.root, 'gone.txt'));
    const to = repo.commit('next');
    repo.git('checkout', '-q', 'main');
    return { repo, from, to };
  }

  it('files written, index not: each file the move wrote is put back, and the checkout is clean', async () => {
    const { repo, from, to } = twoCommits();
    // What git had written when it was killed: the files of `to`, the index still `from`'s.
    repo.write('added.txt', 'added\n');
    repo.write('mod.txt', 'new\n');
    fs.rmSync(path.join(repo.root, 'gone.txt'));
    const got = await settleInterruptedMove(repo.root, from, to);
    expect(got).toEqual({ got: 'files', putBack: expect.arrayContaining(['added.txt', 'mod.txt', 'gone.txt']) });
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(repo.root, 'mod.txt'), 'utf8')).toBe('old\n');
  });

  it('a file with other content is an edit of someone else: left as it is', async () => {
    const { repo, from, to } = twoCommits();
    repo.write('added.txt', 'added\n');
    repo.write('mod.txt', 'my own edit\n');
    const got = await settleInterruptedMove(repo.root, from, to);
    expect(got).toEqual({ got: 'files', putBack: ['added.txt'] });
    expect(fs.readFileSync(path.join(repo.root, 'mod.txt'), 'utf8')).toBe('my own edit\n');
    expect(fs.existsSync(path.join(repo.root, 'gone.txt'))).toBe(true);
  });

  it('the index written too: says so (the caller moves the whole checkout back)', async () => {
    const { repo, from, to } = twoCommits();
    repo.git('read-tree', '-m', '-u', from, to);
    expect(await settleInterruptedMove(repo.root, from, to)).toEqual({ got: 'index' });
  });

  it('waits for a git still writing (its index.lock), then reads where it got', async () => {
    const { repo, from, to } = twoCommits();
    const lock = path.join(repo.root, '.git', 'index.lock');
    fs.writeFileSync(lock, '');
    // The git holding it finishes (one synchronous step: nothing of the repair runs in between).
    setTimeout(() => {
      fs.rmSync(lock);
      repo.git('read-tree', '-m', '-u', from, to);
    }, 300);
    expect(await settleInterruptedMove(repo.root, from, to)).toEqual({ got: 'index' });
  });
});
