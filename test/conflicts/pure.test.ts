import { describe, expect, it } from 'vitest';
import { parseMergeTreeZ } from '../../src/git/merge-tree.js';
import { parseConflictHunks } from '../../src/conflicts/hunks.js';
import { conflictsOf, conflictLine } from '../../src/conflicts/view.js';
import { mayConflict } from '../../src/conflicts/compute.js';
import type { PairResult } from '../../src/conflicts/types.js';

const TREE = '09a0d701867135877b842771eea96fd100609858';

describe('parseMergeTreeZ', () => {
  it('reads a clean merge: the tree, no unmerged path, the messages', () => {
    const out = `${TREE}\0\x001\0f.txt\0Auto-merging\0Auto-merging f.txt\n\0`;
    expect(parseMergeTreeZ(out, true)).toEqual({
      clean: true,
      tree: TREE,
      conflicted: [],
      messages: [{ paths: ['f.txt'], type: 'Auto-merging', text: 'Auto-merging f.txt' }],
    });
  });

  it('reads a conflicted merge: each unmerged path once, messages naming several paths', () => {
    const out =
      `${TREE}\0f.txt\0f.txt\0a b.txt\0\0` +
      `1\0f.txt\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in f.txt\n\0` +
      `2\0a b.txt\0c.txt\0CONFLICT (rename/delete)\0CONFLICT (rename/delete): a b.txt renamed to c.txt\n\0`;
    const r = parseMergeTreeZ(out, false);
    expect(r.conflicted).toEqual(['f.txt', 'a b.txt']);
    expect(r.messages[1]).toEqual({
      paths: ['a b.txt', 'c.txt'],
      type: 'CONFLICT (rename/delete)',
      text: 'CONFLICT (rename/delete): a b.txt renamed to c.txt',
    });
  });

  it('refuses output that does not start with a tree id', () => {
    expect(() => parseMergeTreeZ('fatal: nope\0', true)).toThrow(/not a tree id/);
  });
});

describe('parseConflictHunks', () => {
  it('reads both sides and the line of each hunk', () => {
    const text = 'a\n<<<<<<< x\nB1\n=======\nB2\nB3\n>>>>>>> y\nc\n<<<<<<< x\n=======\nnew\n>>>>>>> y\n';
    expect(parseConflictHunks(text)).toEqual([
      { line: 2, ours: ['B1'], base: null, theirs: ['B2', 'B3'] },
      { line: 9, ours: [], base: null, theirs: ['new'] },
    ]);
  });

  it('reads the merge base of a diff3 hunk', () => {
    const text = '<<<<<<< x\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> y\n';
    expect(parseConflictHunks(text)).toEqual([{ line: 1, ours: ['B1'], base: ['b'], theirs: ['B2'] }]);
  });

  it('finds nothing in a file without markers, or with an unterminated one', () => {
    expect(parseConflictHunks('plain\ntext\n')).toEqual([]);
    expect(parseConflictHunks('<<<<<<< x\nonly ours\n')).toEqual([]);
  });
});

describe('conflictsOf', () => {
  const pair = (a: string, b: string, conflict: boolean, paths: string[]): PairResult => ({
    a,
    b,
    aCommit: 'x',
    bCommit: 'y',
    conflict,
    files: paths.map((path) => ({ path, type: 'CONFLICT (contents)', message: '', hunks: [] })),
    overlap: [],
    computedAt: '',
  });
  it("lists a task's conflicting pairs, its base first, and nothing of clean pairs or of other tasks", () => {
    const pairs = [
      pair('a', 'b', true, ['f.ts']),
      pair('a', 'c', false, []),
      pair('b', 'c', true, ['g.ts']),
      pair('a', '@base', true, ['h.ts']),
    ];
    const a = conflictsOf(pairs, 'a');
    expect(a.with).toEqual([
      { other: '@base', paths: ['h.ts'] },
      { other: 'b', paths: ['f.ts'] },
    ]);
    expect(conflictLine(a)).toBe('its base (h.ts), b (f.ts)');
    expect(conflictsOf(pairs, 'c').with).toEqual([{ other: 'b', paths: ['g.ts'] }]);
  });
});

describe('mayConflict', () => {
  it.each([
    [['a.txt'], ['a.txt'], true],
    [['a.txt'], ['b.txt'], false],
    [['d'], ['d/x.txt'], true], // a file against a folder
    [['d/x.txt'], ['d'], true],
    [['d/x.txt'], ['d/y.txt'], false],
    [['dx/y'], ['d/y'], false],
    [[], ['a'], false],
  ])('%j against %j: %s', (a, b, expected) => {
    expect(mayConflict(a, b)).toBe(expected);
  });
});
