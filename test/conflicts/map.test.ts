import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { refreshConflicts } from '../../src/conflicts/map.js';
import { BASE_SIDE, type ConflictMap, type PairResult } from '../../src/conflicts/types.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { createTask } from '../../src/workspace/create.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { gitIn, makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * The conflict map on real repositories, each case checked against what a real `git merge` of
 * the same two commits says (in a scratch worktree of its own).
 */

const FN = (body: string): string =>
  [
    'function total(items) {',
    `  ${body}`,
    '}',
    '',
    ...Array.from({ length: 30 }, (_, i) => `// line ${i}`),
    'end',
    '',
  ].join('\n');

async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

async function task(ctx: ProjectContext, id: string, files: Record<string, string | null>, commit = true) {
  const t = await createTask(ctx, { type: 'feat', id });
  edit(t.path, files);
  if (commit) await checkpointTask(ctx, id, { message: `${id}'s work` });
  return t.path;
}

function edit(dir: string, files: Record<string, string | null>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    if (content === null) fs.rmSync(file);
    else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    }
  }
}

/** What `git merge` says of two commits: the unmerged paths, or [] when it merges. */
function realMerge(repo: TestRepo, a: string, b: string): string[] {
  const dir = path.join(tmpDir('warren-merge-'), 'wt');
  repo.git('worktree', 'add', '--quiet', '--detach', dir, a);
  try {
    try {
      gitIn(dir, 'merge', '--no-ff', '--no-commit', '--quiet', b);
      return [];
    } catch {
      return gitIn(dir, 'diff', '--name-only', '--diff-filter=U').split('\n').filter(Boolean).sort();
    }
  } finally {
    repo.git('worktree', 'remove', '--force', dir);
  }
}

function pairOf(map: ConflictMap, a: string, b: string): PairResult {
  const p = map.pairs.find((x) => (x.a === a && x.b === b) || (x.a === b && x.b === a));
  if (!p) throw new Error(`no pair ${a} ${b}`);
  return p;
}

/** The map agrees with a real merge on every pair. */
function agreesWithGit(repo: TestRepo, map: ConflictMap): void {
  for (const p of map.pairs) {
    const said = p.files.map((f) => f.path).sort();
    expect(said, `${p.a} × ${p.b}`).toEqual(realMerge(repo, p.aCommit, p.bCommit));
  }
}

describe('the conflict map', () => {
  it('two tasks editing the same function conflict, with the hunks of each side; same file, distant hunks, merge', async () => {
    const repo = makeRepo({ files: { 'total.js': FN('return 0;') } });
    const ctx = await project(repo);
    await task(ctx, 'a', { 'total.js': FN('return items.length;') });
    await task(ctx, 'b', { 'total.js': FN('return items.reduce((s, i) => s + i, 0);') });
    await task(ctx, 'c', { 'total.js': FN('return 0;').replace('end', 'end of c') });
    const map = await refreshConflicts(ctx);
    agreesWithGit(repo, map);
    const ab = pairOf(map, 'a', 'b');
    expect(ab.conflict).toBe(true);
    expect(ab.files[0]?.type).toBe('CONFLICT (contents)');
    expect(ab.files[0]?.hunks).toEqual([
      { line: 2, ours: ['  return items.length;'], base: null, theirs: ['  return items.reduce((s, i) => s + i, 0);'] },
    ]);
    const ac = pairOf(map, 'a', 'c');
    expect(ac.conflict).toBe(false);
    expect(ac.overlap).toEqual(['total.js']); // a clean overlap, told apart from a conflict
    expect(pairOf(map, 'a', BASE_SIDE).conflict).toBe(false);
    const events = ctx.store.taskEvents(ctx.key, 'b').filter((e) => e.kind === 'conflict.started');
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ other: 'a', paths: ['total.js'] })]);
  });

  it('a rename against an edit of the renamed file merges, as git says', async () => {
    const repo = makeRepo({ files: { 'old.js': FN('return 0;') } });
    const ctx = await project(repo);
    const a = await task(ctx, 'a', {}, false);
    gitIn(a, 'mv', 'old.js', 'new.js');
    await checkpointTask(ctx, 'a');
    await task(ctx, 'b', { 'old.js': FN('return 1;') });
    await task(ctx, 'c', { 'old.js': null });
    const map = await refreshConflicts(ctx);
    agreesWithGit(repo, map);
    expect(pairOf(map, 'a', 'b').conflict).toBe(false);
    const ac = pairOf(map, 'a', 'c'); // renamed by one, deleted by the other
    expect(ac.conflict).toBe(true);
    expect(ac.files[0]?.type).toMatch(/rename\/delete/);
  });

  it("sees uncommitted-only edits without touching the agent's index", async () => {
    const repo = makeRepo({ files: { 'total.js': FN('return 0;') } });
    const ctx = await project(repo);
    const a = await task(ctx, 'a', { 'total.js': FN('return 1;'), 'new.txt': 'untracked\n' }, false);
    const b = await task(ctx, 'b', { 'total.js': FN('return 2;') }, false);
    gitIn(b, 'add', 'total.js'); // staged, not committed
    const index = (dir: string): Buffer =>
      fs.readFileSync(gitIn(dir, 'rev-parse', '--path-format=absolute', '--git-path', 'index'));
    // `git status` refreshes an index's stat data: read each index after it.
    const state = (): unknown[] => [
      gitIn(a, 'status', '--porcelain'),
      gitIn(b, 'status', '--porcelain'),
      index(a),
      index(b),
    ];
    const before = state();
    const map = await refreshConflicts(ctx);
    expect(state()).toEqual(before);
    agreesWithGit(repo, map);
    expect(map.tasks.map((t) => t.uncommitted)).toEqual([true, true]);
    expect(pairOf(map, 'a', 'b').conflict).toBe(true);
    // The snapshot is the workspace's work: the untracked file is in it.
    const snap = map.tasks.find((t) => t.id === 'a')?.commit ?? '';
    expect(repo.git('show', `${snap}:new.txt`)).toBe('untracked');
  });

  it('a base that moved under both: each conflicts with it, and the map is merged again only where a commit changed', async () => {
    const repo = makeRepo({ files: { 'total.js': FN('return 0;'), 'other.txt': 'x\n' } });
    const ctx = await project(repo);
    await task(ctx, 'a', { 'total.js': FN('return 1;') });
    await task(ctx, 'b', { 'total.js': FN('return 1;').replace('end', 'end b') });
    const first = await refreshConflicts(ctx);
    expect(first.pairs.every((p) => !p.conflict)).toBe(true);
    repo.write('total.js', FN('return 42;'));
    repo.commit('the base moves');
    const second = await refreshConflicts(ctx);
    agreesWithGit(repo, second);
    expect(pairOf(second, 'a', BASE_SIDE).conflict).toBe(true);
    expect(pairOf(second, 'b', BASE_SIDE).conflict).toBe(true);
    expect(pairOf(second, 'a', 'b').conflict).toBe(false);
    expect([second.merged, second.reused]).toEqual([2, 1]); // the two base pairs; a × b kept
    const third = await refreshConflicts(ctx, { snapshot: [] });
    expect([third.merged, third.snapshots]).toEqual([0, 0]);
    // One task's edit: only its pairs are merged again.
    const a = ctx.store.getTask(ctx.key, 'a')?.path ?? '';
    edit(a, { 'total.js': FN('return 42;') });
    const fourth = await refreshConflicts(ctx, { snapshot: ['a'] });
    expect([fourth.merged, fourth.snapshots]).toEqual([2, 1]);
    expect(pairOf(fourth, 'a', BASE_SIDE).conflict).toBe(false);
    const ended = ctx.store.taskEvents(ctx.key, 'a').filter((e) => e.kind === 'conflict.ended');
    expect(ended.map((e) => e.data)).toEqual([{ other: BASE_SIDE, why: 'merges' }]);
  });
});
