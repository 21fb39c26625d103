// Issue 2 benchmark: the cost of warren's guards around a worktree.
//  1. one `warren new` (no provisioning) against one bare `git worktree add` of the same repository,
//     and its distance from the floor under any Node command line (Node start-up + the bare add):
//     run by the command line itself, and handed to a running `warren warm`;
//  2. (run first, in rounds, each row from a fresh repository) 20 workspaces at once against 20
//     serialized `git worktree add` measured in the same round (and what 20 parallel bare adds
//     do): 20 `warren new` processes (on their own, and handed to a `warren warm` with 20
//     waiting), 20 `createTask` calls in one running process (the library), and 20 requests to
//     one running `warren serve`; with what the
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
import { BIN, machine, makeRepo, median, printTable, run, startServe, startWarm, time, tmp } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

export async function benchCore() {
  const base = tmp();
  // The 20-at-once rows first: in runs where they came after the one-workspace rounds, the
  // library's 20 took 1.8–2.3× instead of 1.1–1.3× (git's own adds ran twice as long; the cause
  // was not found), so they go where nothing ran before them.
  await benchMany(base);
  await settle();
  await benchOne(base);
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Lets the machine finish what the rows before left it (files to write back: the 20-at-once
 * rows write thousands): `sync`, then a pause, so that the one-workspace rounds do not share
 * the disk and CPU with it. Says how long the flush took.
 */
async function settle() {
  const dirty = () => Number(/Dirty:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0);
  const before = dirty();
  const started = performance.now();
  await run('sync', []);
  const flushed = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  console.log(`\n(before the one-workspace rounds: ${(before / 1024).toFixed(0)} MiB not yet written; sync took ${flushed.toFixed(0)} ms, then 2 s of rest)`);
}

/**
 * One `warren new` against its floor, interleaved rounds: run by the command line in its own
 * process (WARREN_WARM=off), and handed to a running `warren warm` (which waits, before every
 * measurement, until its processes are loaded again: nothing measured shares the CPU with them).
 */
async function benchOne(base) {
  const repo = makeRepo(path.join(base, 'repo'));
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const local = { ...env, WARREN_WARM: 'off' };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);
  const warm = await startWarm(env);

  // Warm both paths once (page cache, database creation).
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: repo });
  await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: repo, env: local });

  // Interleaved, so that a slow moment of the machine falls on every case alike.
  const bare = [];
  const warren = [];
  const warmed = [];
  const nodeStart = [];
  for (let i = 0; i < ROUNDS; i++) {
    await warm.ready();
    nodeStart.push((await time(() => run(process.execPath, ['-e', '0']))).ms);
    bare.push((await time(() => run('git', ['worktree', 'add', '-q', '-b', `b${i}`, path.join(worktrees, `b${i}`)], { cwd: repo }))).ms);
    warren.push((await time(() => run(process.execPath, [BIN, 'new', 'feat', `one-${i}`], { cwd: repo, env: local }))).ms);
    const w = await time(() => run(process.execPath, [BIN, 'new', 'feat', `warm-${i}`], { cwd: repo, env }));
    if (w.result.code !== 0) throw new Error(`warren new through warren warm failed: ${w.result.stderr}`);
    warmed.push(w.ms);
  }
  const served = (warm.log().match(/ran `warren new feat warm-/g) ?? []).length;
  await warm.stop();
  if (served !== ROUNDS) throw new Error(`warren warm ran ${served} of ${ROUNDS} commands: the rest ran in their own processes`);
  // The floor under any Node command line that makes a worktree: Node's start-up plus the bare add.
  const floor = median(nodeStart) + median(bare);
  printTable(`one workspace, median of ${ROUNDS} (${machine()})`, [
    { name: 'git worktree add (bare)', ms: median(bare) },
    { name: 'node -e 0 (Node start-up alone)', ms: median(nodeStart) },
    { name: 'floor: node -e 0 + bare add', ms: floor },
    { name: 'warren new (no provisioning)', ms: median(warren), note: `${(median(warren) - floor).toFixed(0)} ms above the floor` },
    { name: 'warren new, run by warren warm', ms: median(warmed), note: `${(median(warmed) - floor).toFixed(0)} ms above the floor` },
  ], 'git worktree add (bare)');
}

const MANY_ROUNDS = Number(process.env.BENCH_MANY_ROUNDS ?? 3);

/**
 * 20 workspaces at once, in rounds: each round measures its own baseline (20 serialized bare
 * adds) and then every way of making 20 at once, each from a repository of its own (the same
 * files, one warm worktree, a WARREN_HOME of its own) — `git worktree add` gets slower with
 * every worktree a repository already has. Each row's ratio is the median of its rounds' ratios
 * to their own baseline, so a machine that slows down during the run slows both sides.
 */
async function benchMany(base) {
  let n = 0;
  const fresh = async () => {
    // The row before's writeback (20 worktrees) stays out of this row: sync, then a moment for the machine to settle.
    execFileSync('sync');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const name = `many${n++}`;
    const dir = makeRepo(path.join(base, name));
    const rowEnv = { ...process.env, WARREN_HOME: path.join(base, `${name}-home`) };
    const wts = path.join(base, `${name}-wt`);
    fs.mkdirSync(wts);
    await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(wts, 'warm')], { cwd: dir });
    await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: dir, env: rowEnv });
    return { dir, env: rowEnv, wts };
  };
  const twenty = (fn) => Promise.all(Array.from({ length: 20 }, (_, i) => fn(i)));
  const cores = os.cpus().length;
  const lib = await import('../dist/index.js');
  const rows = new Map();
  const record = (name, ms, baseline, note = '', extra = {}) => {
    const row = rows.get(name) ?? { name, ms: [], ratios: [], notes: [], failures: 0, locks: [] };
    row.ms.push(ms);
    row.ratios.push(ms / baseline);
    if (note) row.notes.push(note);
    row.failures += extra.failures ?? 0;
    if (extra.home) row.locks.push(...lockTimes(extra.home).filter((l) => l.id.startsWith('m-')));
    rows.set(name, row);
  };
  for (let round = 0; round < MANY_ROUNDS; round++) {
    const s1 = await fresh();
    const serialized = await time(async () => {
      for (let i = 0; i < 20; i++) await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(s1.wts, `s${i}`)], { cwd: s1.dir });
    });
    record('20 × git worktree add, serialized', serialized.ms, serialized.ms);

    const p1 = await fresh();
    const parallelBare = await time(() => twenty((i) => run('git', ['worktree', 'add', '-q', '-b', `p${i}`, path.join(p1.wts, `p${i}`)], { cwd: p1.dir })));
    record('20 × git worktree add, in parallel (unsafe)', parallelBare.ms, serialized.ms, '', { failures: parallelBare.result.filter((r) => r.code !== 0).length });

    // The floor under 20 command-line processes at once: each starts Node and then makes its
    // worktree with a bare add, the adds one at a time (flock, as warren's lock would).
    const f1 = await fresh();
    const lockFile = path.join(base, `floor${round}.lock`);
    const nodeFloor = await time(() => twenty((i) => run('sh', ['-c', `"$0" -e 0 && flock "$1" git worktree add -q -b "$2" "$3"`, process.execPath, lockFile, `n${i}`, path.join(f1.wts, `n${i}`)], { cwd: f1.dir })));
    record('floor: 20 × (node -e 0; add under a lock), parallel', nodeFloor.ms, serialized.ms, '', { failures: nodeFloor.result.filter((r) => r.code !== 0).length });

    const c1 = await fresh();
    const cpuBefore = childCpuMs();
    const cli = await time(() => twenty((i) => run(process.execPath, [BIN, 'new', 'feat', `m-${i}`], { cwd: c1.dir, env: c1.env })));
    const cpu = childCpuMs() - cpuBefore;
    record('20 × warren new, in parallel (20 processes)', cli.ms, serialized.ms, `${(cpu / 20).toFixed(0)} ms CPU each`, { failures: cli.result.filter((r) => r.code !== 0).length, home: c1.env.WARREN_HOME });

    // The same 20 command lines, each handed to a `warren warm` with 20 processes waiting (loaded before the clock starts).
    const w1 = await fresh();
    const warm = await startWarm(w1.env, 20);
    const warmed = await time(() => twenty((i) => run(process.execPath, [BIN, 'new', 'feat', `m-${i}`], { cwd: w1.dir, env: w1.env })));
    const warmRan = (warm.log().match(/ran `warren new feat m-/g) ?? []).length;
    await warm.stop();
    record('20 × warren new, in parallel, to warren warm', warmed.ms, serialized.ms, `${warmRan} of 20 run warm`, { failures: warmed.result.filter((r) => r.code !== 0).length, home: w1.env.WARREN_HOME });

    // The same 20 without a Node process each: in one running process (an orchestrator embedding
    // warren), and asked of one running `warren serve` over HTTP.
    const l1 = await fresh();
    process.env.WARREN_HOME = l1.env.WARREN_HOME;
    const store = new lib.Store();
    const ctx = await lib.openProject(l1.dir, { store });
    const library = await time(() => Promise.allSettled(Array.from({ length: 20 }, (_, i) => lib.createTask(ctx, { type: 'feat', id: `m-${i}` }))));
    store.close();
    record('20 × createTask, in parallel (library, 1 process)', library.ms, serialized.ms, '', { failures: library.result.filter((r) => r.status === 'rejected').length, home: l1.env.WARREN_HOME });

    const v1 = await fresh();
    const server = await startServe(v1.dir, v1.env);
    const served = await time(() =>
      twenty(async (i) => {
        const res = await fetch(`${server.url}api/actions/new`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-warren-token': server.token },
          body: JSON.stringify({ project: server.project, options: { type: 'feat', id: `m-${i}` } }),
        });
        await res.text();
        return res.ok;
      }),
    );
    await server.stop();
    record('20 × POST /api/actions/new to warren serve, parallel', served.ms, serialized.ms, '', { failures: served.result.filter((ok) => !ok).length, home: v1.env.WARREN_HOME });
  }

  console.log(`\n20 workspaces at once, ${MANY_ROUNDS} rounds, each against its own round's 20 serialized bare adds (${cores} cores)`);
  console.log(`${'case'.padEnd(52)} ${'median'.padStart(10)} ${'× serialized (median)'.padStart(22)}  each round; failures`);
  for (const r of rows.values()) {
    const note = r.notes.length > 0 ? `; ${r.notes.join(', ')}` : '';
    console.log(`${r.name.padEnd(52)} ${`${median(r.ms).toFixed(0)} ms`.padStart(10)} ${median(r.ratios).toFixed(2).padStart(22)}  ${r.ratios.map((x) => x.toFixed(2)).join(' ')}; ${r.failures}/${20 * MANY_ROUNDS} failed${note}`);
    if (r.locks.length > 0) {
      console.log(`${''.padEnd(52)} the repository lock held ${median(r.locks.map((l) => l.heldMs)).toFixed(0)} ms each (median), waited for ${median(r.locks.map((l) => l.waitedMs)).toFixed(0)} ms (median)`);
    }
  }
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
  // Two repositories of the same files, one per row (see benchCore: each add gets slower with every worktree already there).
  const bareRepo = makeRepo(path.join(base, 'bare-repo'), files);
  const repo = makeRepo(path.join(base, 'repo'), files);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: bareRepo });
  await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: repo, env });
  const serialized = await time(async () => {
    for (let i = 0; i < 20; i++) await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(worktrees, `s${i}`)], { cwd: bareRepo });
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
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchCore();
  await benchManyLarge();
}
