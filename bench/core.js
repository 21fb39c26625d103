// Issue 2 benchmark: the cost of warren's guards around a worktree.
//  1. one `warren new` (no provisioning) against one bare `git worktree add` of the same repository;
//  2. 20 concurrent `warren new` against 20 serialized `git worktree add` (and what 20 parallel
//     bare adds do: some fail).
import fs from 'node:fs';
import path from 'node:path';
import { BIN, machine, makeRepo, median, printTable, run, time, tmp } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

export async function benchCore() {
  const base = tmp();
  const repo = makeRepo(path.join(base, 'repo'));
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);

  // Warm both paths once (page cache, database creation).
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: repo });
  await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: repo, env });

  const bare = [];
  const warren = [];
  for (let i = 0; i < ROUNDS; i++) {
    bare.push((await time(() => run('git', ['worktree', 'add', '-q', '-b', `b${i}`, path.join(worktrees, `b${i}`)], { cwd: repo }))).ms);
    warren.push((await time(() => run(process.execPath, [BIN, 'new', 'feat', `one-${i}`], { cwd: repo, env }))).ms);
  }
  printTable(`one workspace, median of ${ROUNDS} (${machine()})`, [
    { name: 'git worktree add (bare)', ms: median(bare) },
    { name: 'warren new (no provisioning)', ms: median(warren) },
  ], 'git worktree add (bare)');

  const serialized = await time(async () => {
    for (let i = 0; i < 20; i++) await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(worktrees, `s${i}`)], { cwd: repo });
  });
  const parallelBare = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run('git', ['worktree', 'add', '-q', '-b', `p${i}`, path.join(worktrees, `p${i}`)], { cwd: repo }))),
  );
  const bareFailures = parallelBare.result.filter((r) => r.code !== 0).length;
  const concurrent = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run(process.execPath, [BIN, 'new', 'feat', `many-${i}`], { cwd: repo, env }))),
  );
  const warrenFailures = concurrent.result.filter((r) => r.code !== 0).length;
  printTable('20 workspaces', [
    { name: '20 × git worktree add, serialized', ms: serialized.ms },
    { name: '20 × git worktree add, in parallel (unsafe)', ms: parallelBare.ms, note: `${bareFailures}/20 failed` },
    { name: '20 × warren new, in parallel', ms: concurrent.ms, note: `${warrenFailures}/20 failed` },
  ], '20 × git worktree add, serialized');
  fs.rmSync(base, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCore();
