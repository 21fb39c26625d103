import { describe, expect, it } from 'vitest';
import { parseBatchCheckIds, parseStatusZ, parseWorktreeList } from '../src/git/parse.js';
import { parseMountInfo } from '../src/system/mounts.js';
import { classifyGitStderr, isTransientGitFailure } from '../src/git/errors.js';

describe('parseWorktreeList', () => {
  it('reads main, linked, detached, locked and prunable entries from -z porcelain', () => {
    const out = [
      'worktree /repo',
      'HEAD 1111111111111111111111111111111111111111',
      'branch refs/heads/main',
      '',
      'worktree /ws/a b',
      'HEAD 2222222222222222222222222222222222222222',
      'branch refs/heads/feat/T-1',
      'locked initializing',
      '',
      'worktree /ws/gone',
      'HEAD 3333333333333333333333333333333333333333',
      'detached',
      'prunable gitdir file points to non-existent location',
      '',
      'worktree /ws/lock-no-reason',
      'HEAD 4444444444444444444444444444444444444444',
      'branch refs/heads/x',
      'locked',
      '',
      '',
    ].join('\0');
    const entries = parseWorktreeList(out);
    expect(entries).toHaveLength(4);
    expect(entries[0]).toMatchObject({
      path: '/repo',
      branch: 'refs/heads/main',
      locked: null,
      prunable: null,
      detached: false,
    });
    expect(entries[1]).toMatchObject({ path: '/ws/a b', branch: 'refs/heads/feat/T-1', locked: 'initializing' });
    expect(entries[2]).toMatchObject({
      path: '/ws/gone',
      branch: null,
      detached: true,
      prunable: 'gitdir file points to non-existent location',
    });
    expect(entries[3]).toMatchObject({ locked: '' });
  });

  it('keeps a newline inside a path intact', () => {
    const entries = parseWorktreeList('worktree /ws/we\nird\0HEAD abc\0branch refs/heads/y\0\0');
    expect(entries[0]?.path).toBe('/ws/we\nird');
  });
});

describe('parseStatusZ', () => {
  it('reads modified, untracked and renamed entries', () => {
    const out = ' M src/a.ts\0?? new file.txt\0R  to.txt\0from.txt\0D  gone\0';
    expect(parseStatusZ(out)).toEqual([
      { code: ' M', path: 'src/a.ts' },
      { code: '??', path: 'new file.txt' },
      { code: 'R ', path: 'to.txt', from: 'from.txt' },
      { code: 'D ', path: 'gone' },
    ]);
  });
  it('returns nothing for a clean tree', () => {
    expect(parseStatusZ('')).toEqual([]);
  });
});

describe('parseBatchCheckIds', () => {
  it('an id per question, null where git said missing or ambiguous; a count that does not match throws', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(64);
    const out = `${a}\nrefs/heads/gone^{commit} missing\n${b}\ndead^{commit} ambiguous\n`;
    expect(parseBatchCheckIds(out, 4)).toEqual([a, null, b, null]);
    expect(() => parseBatchCheckIds(out, 3)).toThrow(/4 answers to 3 questions/);
    expect(parseBatchCheckIds('', 0)).toEqual([]);
  });
});

describe('parseMountInfo', () => {
  it('reads mount points, unescaping octal spaces', () => {
    const text =
      '36 35 98:0 / / rw,noatime master:1 - ext4 /dev/vda rw\n' +
      '80 36 0:50 / /home/u/.warren/worktrees/p-1/T\\0401/node_modules rw,relatime shared:2 - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n';
    const mounts = parseMountInfo(text);
    expect(mounts).toHaveLength(2);
    expect(mounts[1]).toMatchObject({
      mountPoint: '/home/u/.warren/worktrees/p-1/T 1/node_modules',
      fsType: 'overlay',
      source: 'overlay',
    });
  });
});

describe('classifyGitStderr', () => {
  it.each([
    ["fatal: Unable to create '/r/.git/index.lock': File exists.", 'GIT_LOCKED'],
    ["fatal: a branch named 'feat/x' already exists", 'GIT_BRANCH_EXISTS'],
    ["fatal: 'feat/x' is already checked out at '/w'", 'GIT_WORKTREE_EXISTS'],
    // What `git worktree add` says when its path is taken: a path in the way, not a branch.
    ["fatal: '/home/u/.warren/worktrees/p/T-1' already exists", 'GIT_PATH_EXISTS'],
    ["fatal: '/w' contains modified or untracked files, use --force to delete it", 'GIT_DIRTY'],
    ['fatal: invalid reference: nope', 'GIT_UNKNOWN_REF'],
    ['fatal: something else', 'GIT_FAILED'],
  ])('%s → %s', (stderr, code) => {
    expect(classifyGitStderr(stderr)).toBe(code);
  });
  it('marks lock contention and half-written worktrees as transient', () => {
    expect(isTransientGitFailure('fatal: failed to read /r/.git/worktrees/x/commondir: Success')).toBe(true);
    expect(isTransientGitFailure('fatal: invalid reference: x')).toBe(false);
  });
});
