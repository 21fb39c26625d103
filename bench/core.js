// Issue 2 benchmark: the cost of warren's guards around a worktree.
//  1. one `warren new` (no provisioning) against one bare `git worktree add` of the same repository,
//     and its distance from the floor under any Node command line (Node start-up + the bare add);
//  2. 20 workspaces at once against 20 serialized `git worktree add` (and what 20 parallel
//     bare adds do: some fail): 20 `warren new` processes, 20 `createTask` calls in one running
//     process (the library), and 20 requests to one running `warren serve`; with what the
//     repository lock cost each (waited for, held: recorded in each task.created event) and the
//     CPU the 20 processes used (what bounds them on a machine with few cores), beside the floor
//     of 20 processes (each starts Node, then makes its worktree with a bare add under a lock);
//  3. the same 20 `warren new` on a repository of BENCH_LARGE_FILES (5,000) tracked files, where
//     only `git worktree add --no-checkout` runs under the lock and the checkouts run beside
//     each other (src/workspace/create.ts), against 20 serialized bare adds of that repository.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { BIN, machine, makeRepo, median, printTable, run, startServe, time, tmp } from './lib.js';

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

  // Interleaved, so that a slow moment of the machine falls on every case alike.
  const bare = [];
  const warren = [];
  const nodeStart = [];
  for (let i = 0; i < ROUNDS; i++) {
    nodeStart.push((await time(() => run(process.execPath, ['-e', '0']))).ms);
    bare.push((await time(() => run('git', ['worktree', 'add', '-q', '-b', `b${i}`, path.join(worktrees, `b${i}`)], { cwd: repo }))).ms);
    warren.push((await time(() => run(process.execPath, [BIN, 'new', 'feat', `one-${i}`], { cwd: repo, env }))).ms);
  }
  // The floor under any Node command line that makes a worktree: Node's start-up plus the bare add.
  const floor = median(nodeStart) + median(bare);
  printTable(`one workspace, median of ${ROUNDS} (${machine()})`, [
    { name: 'git worktree add (bare)', ms: median(bare) },
    { name: 'node -e 0 (Node start-up alone)', ms: median(nodeStart) },
    { name: 'floor: node -e 0 + bare add', ms: floor },
    { name: 'warren new (no provisioning)', ms: median(warren), note: `${(median(warren) - floor).toFixed(0)} ms above the floor` },
  ], 'git worktree add (bare)');

  const serialized = await time(async () => {
    for (let i = 0; i < 20; i++) await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(worktrees, `s${i}`)], { cwd: repo });
  });
  const parallelBare = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run('git', ['worktree', 'add', '-q', '-b', `p${i}`, path.join(worktrees, `p${i}`)], { cwd: repo }))),
  );
  const bareFailures = parallelBare.result.filter((r) => r.code !== 0).length;
  // The floor under 20 command-line processes at once: each starts Node and then makes its
  // worktree with a bare add, the adds one at a time (flock, as warren's lock would).
  const lockFile = path.join(base, 'floor.lock');
  const nodeFloor = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run('sh', ['-c', `"$0" -e 0 && flock "$1" git worktree add -q -b "$2" "$3"`, process.execPath, lockFile, `n${i}`, path.join(worktrees, `n${i}`)], { cwd: repo }))),
  );
  const floorFailures = nodeFloor.result.filter((r) => r.code !== 0).length;
  const cpuBefore = childCpuMs();
  const concurrent = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run(process.execPath, [BIN, 'new', 'feat', `many-${i}`], { cwd: repo, env }))),
  );
  const cliCpu = childCpuMs() - cpuBefore;
  const warrenFailures = concurrent.result.filter((r) => r.code !== 0).length;

  // The same 20 without a Node process each: in one running process (an orchestrator embedding
  // warren), and asked of one running `warren serve` over HTTP.
  process.env.WARREN_HOME = env.WARREN_HOME;
  const lib = await import('../dist/index.js');
  const store = new lib.Store();
  const ctx = await lib.openProject(repo, { store });
  const library = await time(() => Promise.allSettled(Array.from({ length: 20 }, (_, i) => lib.createTask(ctx, { type: 'feat', id: `lib-${i}` }))));
  const libraryFailures = library.result.filter((r) => r.status === 'rejected').length;
  store.close();
  const server = await startServe(repo, env);
  const served = await time(() =>
    Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${server.url}api/actions/new`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-warren-token': server.token },
          body: JSON.stringify({ project: server.project, options: { type: 'feat', id: `srv-${i}` } }),
        });
        await res.text();
        return res.ok;
      }),
    ),
  );
  await server.stop();
  const servedFailures = served.result.filter((ok) => !ok).length;

  const cores = os.cpus().length;
  printTable('20 workspaces', [
    { name: '20 × git worktree add, serialized', ms: serialized.ms },
    { name: '20 × git worktree add, in parallel (unsafe)', ms: parallelBare.ms, note: `${bareFailures}/20 failed` },
    { name: 'floor: 20 × (node -e 0; add under a lock), parallel', ms: nodeFloor.ms, note: `${floorFailures}/20 failed; what 20 Node processes cost before any warren code` },
    { name: '20 × warren new, in parallel (20 processes)', ms: concurrent.ms, note: `${warrenFailures}/20 failed; ${(cliCpu / 20).toFixed(0)} ms CPU each, ${(cliCpu / cores / 1000).toFixed(2)} s on ${cores} cores at best` },
    { name: '20 × createTask, in parallel (library, 1 process)', ms: library.ms, note: `${libraryFailures}/20 failed` },
    { name: '20 × POST /api/actions/new to warren serve, parallel', ms: served.ms, note: `${servedFailures}/20 failed` },
  ], '20 × git worktree add, serialized');
  const locks = lockTimes(env.WARREN_HOME);
  for (const [group, label] of [['many-', '20 × warren new'], ['lib-', '20 × createTask'], ['srv-', '20 × warren serve']]) {
    const rows = locks.filter((l) => l.id.startsWith(group));
    if (rows.length === 0) continue;
    const held = rows.reduce((sum, l) => sum + l.heldMs, 0);
    console.log(`${label}: the repository lock (around git worktree add) held ${median(rows.map((l) => l.heldMs)).toFixed(0)} ms each (median), ${held} ms in all; waited for ${median(rows.map((l) => l.waitedMs)).toFixed(0)} ms (median)`);
  }
  fs.rmSync(base, { recursive: true, force: true });
}

/** CPU (user + system) of this process's reaped children so far, from /proc/self/stat, in ms. */
function childCpuMs() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 (cutime, cstime) are the 14th and 15th after the command name, in clock ticks.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

/** Each task's repository-lock wait and hold, as its task.created event recorded them. */
function lockTimes(home) {
  const out = execFileSync(
    process.execPath,
    ['-e', `const D=require('better-sqlite3');const d=new D(${JSON.stringify(path.join(home, 'state.db'))},{readonly:true});console.log(JSON.stringify(d.prepare("SELECT task_id id, data FROM events WHERE kind='task.created'").all()))`],
    { cwd: path.dirname(BIN), encoding: 'utf8' },
  );
  return JSON.parse(out)
    .map((row) => ({ id: row.id, ...(JSON.parse(row.data).repoLock ?? {}) }))
    .filter((row) => typeof row.heldMs === 'number');
}

/** 20 `warren new` at once on a repository large enough that each writes its files outside the lock. */
export async function benchManyLarge(files = Number(process.env.BENCH_LARGE_FILES ?? 5000)) {
  const base = tmp();
  const repo = makeRepo(path.join(base, 'repo'), files);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: repo });
  await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: repo, env });
  const serialized = await time(async () => {
    for (let i = 0; i < 20; i++) await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(worktrees, `s${i}`)], { cwd: repo });
  });
  const concurrent = await time(() =>
    Promise.all(Array.from({ length: 20 }, (_, i) => run(process.execPath, [BIN, 'new', 'feat', `many-${i}`], { cwd: repo, env }))),
  );
  const failures = concurrent.result.filter((r) => r.code !== 0).length;
  printTable(`20 workspaces of a repository of ${files} tracked files`, [
    { name: '20 × git worktree add, serialized', ms: serialized.ms },
    { name: '20 × warren new, in parallel (20 processes)', ms: concurrent.ms, note: `${failures}/20 failed` },
  ], '20 × git worktree add, serialized');
  const rows = lockTimes(env.WARREN_HOME).filter((l) => l.id.startsWith('many-'));
  if (rows.length > 0) {
    console.log(`the repository lock (git worktree add --no-checkout) held ${median(rows.map((l) => l.heldMs)).toFixed(0)} ms each (median), ${rows.reduce((sum, l) => sum + l.heldMs, 0)} ms in all; waited for ${median(rows.map((l) => l.waitedMs)).toFixed(0)} ms (median)`);
  }
  fs.rmSync(base, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchCore();
  await benchManyLarge();
}
