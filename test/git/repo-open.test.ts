import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { isValidBranchName } from '../../src/git/refname.js';
import { commitsNotOn, isAncestor, mergeBase } from '../../src/git/history.js';
import { branchFacts, revParse, revParseMany, treeOf } from '../../src/git/refs.js';
import { changedNames, fileAt, touchedPaths } from '../../src/git/trees.js';
import { resolveRepository } from '../../src/git/repo.js';
import { checkExecArgv } from '../../src/cli/exec-argv.js';
import { makeRepo, tmpDir, gitIn } from '../helpers/repo.js';

/** git's own answer, the reference isValidBranchName is held to. */
function gitAccepts(name: string): boolean {
  const r = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8', cwd: tmpDir() });
  return r.status === 0 && r.stdout.trim() === name;
}

describe('branch names without a git process', () => {
  // One or more names per rule of git-check-ref-format(1), plus names that pass.
  const names = [
    'feat/ok',
    'fix/T-123',
    'a/b.c',
    'x/a_b',
    'chore/1',
    'feat/v1.2.3',
    'feat/@x',
    'feat/a@b',
    'feat/a{b}',
    'feat/ü',
    'feat/a+b',
    'feat/.hidden',
    'feat/a.lock',
    'feat/a.lock/b',
    'feat/a..b',
    'feat/a.',
    'feat/',
    '/feat/a',
    'feat//a',
    'feat/a@{b',
    '@',
    'HEAD',
    '-feat/a',
    'feat/a b',
    'feat/a~1',
    'feat/a^',
    'feat/a:b',
    'feat/a?',
    'feat/a*',
    'feat/a[b',
    'feat/a\\b',
    'feat/a\x01',
    'feat/a\x7f',
    'feat/a\tb',
    'feat/.',
    'feat/..',
    '.feat/a',
    'feat.lock/a',
    'feat/lock',
    'feat/a.locked',
    '',
  ];
  it.each(names)('agrees with git check-ref-format --branch on %j', (name) => {
    expect(isValidBranchName(name)).toBe(gitAccepts(name));
  });
});

describe('opening a repository in one git call', () => {
  it('reads the main worktree HEAD and hooks folder with the repository', async () => {
    const repo = makeRepo();
    fs.mkdirSync(path.join(repo.root, 'sub'));
    const opened = await resolveRepository(path.join(repo.root, 'sub'));
    expect(opened.root).toBe(fs.realpathSync(repo.root));
    expect(opened.main).toEqual({ head: 'refs/heads/main', hooksDir: path.join(opened.commonDir, 'hooks') });
  });

  it('says detached, and leaves the facts out where they would be another worktree’s or cannot be read', async () => {
    const repo = makeRepo();
    repo.git('checkout', '-q', '--detach');
    expect((await resolveRepository(repo.root)).main?.head).toBeNull();
    repo.git('checkout', '-q', 'main');

    // From a linked worktree: its HEAD is not the main worktree's.
    const linked = path.join(tmpDir(), 'linked');
    repo.git('worktree', 'add', '-q', '-b', 'other', linked);
    const fromLinked = await resolveRepository(linked);
    expect(fromLinked.root).toBe(fs.realpathSync(repo.root));
    expect(fromLinked.main).toBeUndefined();

    // An unborn HEAD: the minimal call still finds the repository.
    const empty = path.join(tmpDir(), 'empty');
    fs.mkdirSync(empty);
    gitIn(empty, 'init', '-q', '-b', 'main');
    const unborn = await resolveRepository(empty);
    expect(unborn.root).toBe(fs.realpathSync(empty));
    expect(unborn.main).toBeUndefined();
  });

  it('still refuses a bare repository and a folder outside any repository', async () => {
    const bare = path.join(tmpDir(), 'bare.git');
    spawnSync('git', ['init', '-q', '--bare', bare]);
    const e1 = await resolveRepository(bare).catch((e: unknown) => e);
    expect(isWarrenError(e1, 'NOT_A_REPO') && e1.message).toMatch(/bare repository/);
    const e2 = await resolveRepository(tmpDir()).catch((e: unknown) => e);
    expect(isWarrenError(e2, 'NOT_A_REPO') && e2.message).toMatch(/not inside a git repository/);
  });

  it('reports core.hooksPath as git resolves it', async () => {
    const repo = makeRepo();
    repo.git('config', 'core.hooksPath', '.husky/_');
    expect((await resolveRepository(repo.root)).main?.hooksDir).toBe(path.join(fs.realpathSync(repo.root), '.husky/_'));
  });
});

describe("exec's check of its command line (src/cli/exec-argv.ts)", () => {
  it("reads exec's own words after global options, wherever they are, a repository named like a command included", () => {
    expect(() => checkExecArgv(['--repo', 'exec', 'exec', 't', 'ls', '-la'])).toThrow(/would read "-la"/);
    expect(() => checkExecArgv(['--repo', 'exec', 'list', '-la'])).not.toThrow();
    expect(() => checkExecArgv(['--json', 'exec', 't', 'ls', '--', '-la'])).not.toThrow();
    expect(() => checkExecArgv(['--repo=exec', '--json', 'exec', 't', 'ls', '-la'])).toThrow(/would read "-la"/);
  });
});

describe('branch facts in one for-each-ref', () => {
  it('gives each existing branch its commit and upstream, and leaves out missing and merely-prefixed names', async () => {
    const repo = makeRepo();
    const head = repo.git('rev-parse', 'HEAD');
    repo.git('branch', 'feat/a/b');
    const remote = makeRepo({ name: 'remote' });
    repo.git('remote', 'add', 'origin', remote.root);
    repo.git('fetch', '-q', 'origin');
    repo.git('branch', '-q', '--set-upstream-to=origin/main', 'main');
    const facts = await branchFacts(await resolveRepository(repo.root), ['main', 'feat/a', 'nope']);
    expect([...facts.keys()]).toEqual(['main']);
    expect(facts.get('main')).toEqual({
      commit: head,
      upstream: { remote: 'origin', remoteRef: 'refs/heads/main', trackingRef: 'refs/remotes/origin/main' },
    });
  });

  it('callers at once share calls: each gets exactly its own branches, and what is asked during a call is read by a later one', async () => {
    const repo = makeRepo();
    const opened = await resolveRepository(repo.root);
    for (const b of ['a', 'b', 'c', 'd']) repo.git('branch', b);
    const head = repo.git('rev-parse', 'HEAD');
    const trace = path.join(tmpDir(), 'trace');
    const before = process.env.GIT_TRACE;
    process.env.GIT_TRACE = trace;
    try {
      const asked = [['main', 'a'], ['b'], ['c', 'nope'], ['d', 'a'], ['nope']];
      const answers = await Promise.all(asked.map((branches) => branchFacts(opened, branches)));
      answers.forEach((facts, i) => {
        const want = (asked[i] ?? []).filter((b) => b !== 'nope');
        expect([...facts.keys()].sort()).toEqual(want.sort());
        for (const b of want) expect(facts.get(b)?.commit).toBe(head);
      });
      const calls = () =>
        fs
          .readFileSync(trace, 'utf8')
          .split('\n')
          .filter((l) => l.includes('built-in: git for-each-ref')).length;
      // The first asker's call, then one for everything asked while it ran.
      expect(calls()).toBe(2);
      // Asked after those ended: read afresh, so a branch made meanwhile is seen.
      repo.git('branch', 'e');
      expect((await branchFacts(opened, ['e'])).get('e')?.commit).toBe(head);
      expect(calls()).toBe(3);
    } finally {
      if (before === undefined) delete process.env.GIT_TRACE;
      else process.env.GIT_TRACE = before;
    }
  });
});

/**
 * Answers about objects named by their full ids are asked of git once (src/git/object-answers.ts).
 * Seen without mocking anything: once git cannot be started (PATH empty), a question asked before
 * is still answered, and one that names a ref that moves is asked of git — and fails.
 */

async function twoCommits() {
  const repo = makeRepo({ files: { 'a.txt': 'a\n', 'warren.yaml': 'verify: []\n' }, trusted: false });
  const first = repo.git('rev-parse', 'HEAD');
  repo.write('b.txt', 'b\n');
  const second = repo.commit('second');
  return { repo, r: await resolveRepository(repo.root), first, second };
}

function withoutGit(): void {
  process.env.PATH = '';
}

async function gitNotFound(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return isWarrenError(err) ? err.code : String(err);
  }
}

describe('answers about objects', () => {
  const PATH = process.env.PATH;
  afterEach(() => {
    process.env.PATH = PATH;
  });

  it('are remembered: asked again with no git to start, they are the same', async () => {
    const { r, first, second } = await twoCommits();
    const ask = async () => ({
      tree: await treeOf(r, second),
      base: await mergeBase(r, first, second),
      ancestor: await isAncestor(r, first, second),
      notAncestor: await isAncestor(r, second, first),
      log: await commitsNotOn(r, second, [first]),
      touched: await touchedPaths(r, first, second),
      names: await changedNames(r, first, second),
      file: await fileAt(r, second, 'warren.yaml'),
      missing: await fileAt(r, second, 'nowhere.txt'),
      commit: await revParse(r, second),
    });
    const fresh = await ask();
    expect(fresh).toMatchObject({
      base: first,
      ancestor: true,
      notAncestor: false,
      names: ['b.txt'],
      file: 'verify: []\n',
      missing: null,
      commit: second,
    });
    withoutGit();
    expect(await ask()).toEqual(fresh);
  });

  it('names that move are asked of git every time', async () => {
    const { r, second } = await twoCommits();
    expect(await revParse(r, 'refs/heads/main')).toBe(second);
    expect(await treeOf(r, second)).toMatch(/^[0-9a-f]{40}$/);
    withoutGit();
    expect(await gitNotFound(revParse(r, 'refs/heads/main'))).toBe('GIT_NOT_FOUND');
    expect(await gitNotFound(treeOf(r, 'main'))).toBe('GIT_NOT_FOUND');
    // An abbreviated id can come to name another object: asked each time too.
    expect(await gitNotFound(treeOf(r, second.slice(0, 12)))).toBe('GIT_NOT_FOUND');
  });

  it('a failure is not remembered: an id git lacks is asked again', async () => {
    const { r } = await twoCommits();
    const later = '1'.repeat(40);
    expect(await revParse(r, later)).toBeNull();
    withoutGit();
    expect(await gitNotFound(revParse(r, later))).toBe('GIT_NOT_FOUND');
  });

  it('is kept per repository: the same question of another repository is asked of git', async () => {
    const one = await twoCommits();
    const other = makeRepo({ trusted: false });
    const r2 = await resolveRepository(other.root);
    await treeOf(one.r, one.second);
    withoutGit();
    expect(await gitNotFound(treeOf(r2, one.second))).toBe('GIT_NOT_FOUND');
  });
});

describe('several revisions in one git call', () => {
  it('answers as revParse answers each: branches, ids, a tag peeled, and null for what names no commit', async () => {
    const repo = makeRepo({ trusted: false });
    const r = await resolveRepository(repo.root);
    const first = repo.git('rev-parse', 'HEAD');
    repo.git('tag', '-a', '-m', 'a tag', 'v1');
    repo.write('b.txt', 'b\n');
    const second = repo.commit('second');
    const tree = repo.git('rev-parse', 'HEAD^{tree}');
    const revs = ['refs/heads/main', first, 'refs/tags/v1', 'refs/heads/nope', tree, 'HEAD~1', '-main'] as const;
    const one = await Promise.all(revs.map((rev) => revParse(r, rev)));
    expect(one).toEqual([second, first, first, null, null, first, null]);
    const env = process.env.GIT_TRACE;
    const trace = path.join(tmpDir(), 'trace');
    process.env.GIT_TRACE = trace;
    try {
      expect(await revParseMany(r, revs)).toEqual(one);
    } finally {
      if (env === undefined) delete process.env.GIT_TRACE;
      else process.env.GIT_TRACE = env;
    }
    // One git for all seven.
    expect(fs.readFileSync(trace, 'utf8').match(/trace: built-in: git /g)).toHaveLength(1);
  });
});
