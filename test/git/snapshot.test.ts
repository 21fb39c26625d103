import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotWorktree } from '../../src/git/snapshot.js';
import { makeRepo } from '../helpers/repo.js';
import { QUICK } from '../helpers/tier.js';

/** Same-size edits, FILES a round: the full tier makes hundreds. */
const FILES = 10;
const ROUNDS = QUICK ? 5 : 25;

describe('snapshotWorktree (what `warren diff` and `rm --discard` read)', () => {
  it('sees every same-size edit `git status` sees, made in the second the index was written (racy git)', async () => {
    const names = Array.from({ length: FILES }, (_, f) => `f${f}.js`);
    const repo = makeRepo({ files: Object.fromEntries(names.map((n) => [n, 'export const a = 0\n'])) });
    const index = path.join(repo.root, '.git', 'index');
    const missed: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The index written, and then each file edited without changing its size, all within one
      // second T, a whole second in the past: the copy warren makes is written in a later second.
      const t = Math.floor(Date.now() / 1000) - 5;
      const edit = (value: number) => {
        for (const n of names) {
          fs.writeFileSync(path.join(repo.root, n), `export const a = ${value}\n`);
          fs.utimesSync(path.join(repo.root, n), t, t);
        }
      };
      edit(round % 10);
      repo.git('add', '--', ...names);
      edit((round + 1) % 10);
      fs.utimesSync(index, t, t);
      const { tree, indexTree } = await snapshotWorktree(repo.root, [], path.join(repo.root, '.warren-home'));
      const seen = repo.git('diff', '--name-only', indexTree ?? 'HEAD', tree).split('\n');
      missed.push(...names.filter((n) => !seen.includes(n)).map((n) => `${n} in round ${round}`));
      // git status (asked after: it may rewrite the index) sees every edit.
      const status = repo.git('status', '--porcelain', '-uno').split('\n');
      expect(
        status.map((l) => l.slice(-names[0]!.length)),
        `round ${round}`,
      ).toEqual(names);
      expect(status.every((l) => /^.?M /.test(l))).toBe(true);
    }
    expect(missed).toEqual([]);
  }, 60_000);
});
