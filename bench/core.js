// The cost of warren's guards around a worktree, and of its command line's start-up, against
// the same build of an earlier revision measured in the same run (BENCH_BEFORE, by default the
// last commit before the start-up machinery left: native posix_spawn, the V8 code cache of
// `new`'s own bundle, the prefetch and `warren warm`).
//  1. one `warren new` (no provisioning) against one bare `git worktree add` of the same
//     repository, and against the floor under any Node command line (Node's start-up + that
//     add): the goal is a cold command within 2× the floor;
//  2. 20 workspaces at once, in rounds, each row from a fresh repository: 20 `warren new`
//     processes, 20 `createTask` calls in one running process (the library), and 20 requests
//     to one running `warren serve`, each against its round's 20 serialized bare adds;
//  3. the same 20 `warren new` on a repository of BENCH_LARGE_FILES (5,000) tracked files,
//     where only `git worktree add --no-checkout` runs under the lock.
// BENCH_BEFORE=none leaves the earlier build out.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, ROOT, machine, makeRepo, median, printTable, run, sh, startServe, time, tmp } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MANY_ROUNDS = Number(process.env.BENCH_MANY_ROUNDS ?? 3);
/** The last commit with native/spawn.c, the code cache, the prefetch and `warren warm`. */
const BEFORE = process.env.BENCH_BEFORE ?? '318e3b34380cc6cb61a7d067cca24b97b31f4fdb';

export async function benchCore() {
  const base = tmp();
  const builds = [{ label: 'now', bin: BIN, lib: path.join(ROOT, 'dist/index.js') }];
  const before = buildRevision(BEFORE, path.join(base, 'before'));
  if (before) builds.push(before);
  // The 20-at-once rows first: where they came after the one-workspace rounds, the library's 20
  // ran 1.8–2.3× slower (git's own adds ran twice as long), so they go where nothing ran before.
  await benchMany(base, builds);
  await settle();
  await benchOne(base, builds);
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * The command line and library of `rev`, built in `dir` from `git archive` (nothing is added to
 * this repository's worktrees) with this checkout's node_modules; null, saying why, when it
 * cannot be built here.
 */
export function buildRevision(rev, dir) {
  if (rev === 'none') return null;
  try {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', 'git -C "$0" archive "$1" | tar -x -C "$2"', ROOT, rev, dir]);
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    // Its own build script: for the earlier revision, tsc, the bundles, the native starter and the code cache.
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    console.log(
      `(the build of ${rev.slice(0, 12)} is left out: ${String(err.stderr ?? err.message)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ')})`,
    );
    return null;
  }
  console.log(
    `(built ${rev.slice(0, 12)} "${sh('git', ['-C', ROOT, 'log', '-1', '--format=%s', rev]).trim().slice(0, 70)}" in ${dir})`,
  );
  return { label: rev.slice(0, 7), bin: path.join(dir, 'bin', 'warren.js'), lib: path.join(dir, 'dist/index.js') };
}

/**
 * Lets the machine finish what the rows before left it (files to write back: the 20-at-once
 * rows write thousands): `sync`, then a pause, so that the one-workspace rounds do not share
 * the disk and CPU with it.
 */
async function settle() {
  const started = performance.now();
  await run('sync', []);
  const flushed = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  console.log(`\n(before the one-workspace rounds: sync took ${flushed.toFixed(0)} ms, then 2 s of rest)`);
}

/** One `warren new` of each build against its floor, in interleaved rounds. */
async function benchOne(base, builds) {
  const repo = makeRepo(path.join(base, 'repo'));
  // WARREN_WARM=off: the earlier build would hand its command to a running `warren warm`; none runs, and it must not look.
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home'), WARREN_WARM: 'off' };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);

  // Warm the page cache and the database once for every case.
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: repo });
  for (const b of builds) await run(process.execPath, [b.bin, 'new', 'chore', `warm-${b.label}`], { cwd: repo, env });

  // Interleaved, so that a slow moment of the machine falls on every case alike.
  const bare = [];
  const nodeStart = [];
  const news = builds.map(() => []);
  const versions = builds.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    nodeStart.push((await time(() => run(process.execPath, ['-e', '0']))).ms);
    bare.push(
      (
        await time(() =>
          run('git', ['worktree', 'add', '-q', '-b', `b${i}`, path.join(worktrees, `b${i}`)], { cwd: repo }),
        )
      ).ms,
    );
    for (const [j, b] of builds.entries()) {
      const made = await time(() =>
        run(process.execPath, [b.bin, 'new', 'feat', `one-${b.label}-${i}`], { cwd: repo, env }),
      );
      if (made.result.code !== 0) throw new Error(`warren new (${b.label}) failed: ${made.result.stderr}`);
      news[j].push(made.ms);
      versions[j].push((await time(() => run(process.execPath, [b.bin, '--version'], { cwd: repo, env }))).ms);
    }
  }
  // The floor under any Node command line that makes a worktree: Node's start-up plus the bare add.
  const floor = median(nodeStart) + median(bare);
  printTable(
    `one workspace, median of ${ROUNDS} interleaved rounds (${machine()}, load ${os.loadavg()[0].toFixed(2)})`,
    [
      { name: 'git worktree add (bare)', ms: median(bare) },
      { name: 'node -e 0 (Node start-up alone)', ms: median(nodeStart) },
      { name: 'floor: node -e 0 + bare add', ms: floor },
      ...builds.flatMap((b, j) => [
        {
          name: `warren new (${b.label})`,
          ms: median(news[j]),
          note: `${(median(news[j]) / floor).toFixed(2)}× the floor (goal ≤ 2)`,
        },
        {
          name: `warren --version (${b.label})`,
          ms: median(versions[j]),
          note: `${(median(versions[j]) / median(nodeStart)).toFixed(2)}× node -e 0`,
        },
      ]),
    ],
    'floor: node -e 0 + bare add',
  );
  if (builds.length > 1) {
    const [now, then] = [median(news[0]), median(news[1])];
    console.log(
      `warren new: ${now.toFixed(1)} ms now against ${then.toFixed(1)} ms at ${builds[1].label} (${now >= then ? '+' : ''}${(now - then).toFixed(1)} ms, ${(now / then).toFixed(2)}×)`,
    );
  }
}

/**
 * 20 workspaces at once, in rounds: each round measures its own baseline (20 serialized bare
 * adds) and then every way of making 20 at once, each from a repository of its own (the same
 * files, one warm worktree, a WARREN_HOME of its own) — `git worktree add` gets slower with
 * every worktree a repository already has. Each row's ratio is the median of its rounds' ratios
 * to their own baseline, so a machine that slows down during the run slows both sides.
 */
async function benchMany(base, builds) {
  let n = 0;
  const fresh = async (bin = BIN) => {
    // The row before's writeback (20 worktrees) stays out of this row: sync, then a moment for the machine to settle.
    execFileSync('sync');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const name = `many${n++}`;
    const dir = makeRepo(path.join(base, name));
    const rowEnv = { ...process.env, WARREN_HOME: path.join(base, `${name}-home`), WARREN_WARM: 'off' };
    const wts = path.join(base, `${name}-wt`);
    fs.mkdirSync(wts);
    await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(wts, 'warm')], { cwd: dir });
    await run(process.execPath, [bin, 'new', 'chore', 'warm'], { cwd: dir, env: rowEnv });
    return { dir, env: rowEnv, wts };
  };
  const twenty = (fn) => Promise.all(Array.from({ length: 20 }, (_, i) => fn(i)));
  const libs = await Promise.all(builds.map((b) => import(b.lib)));
  const rows = new Map();
  const record = (name, ms, baseline, note = '', failures = 0) => {
    const row = rows.get(name) ?? { name, ms: [], ratios: [], notes: [], failures: 0 };
    row.ms.push(ms);
    row.ratios.push(ms / baseline);
    if (note) row.notes.push(note);
    row.failures += failures;
    rows.set(name, row);
  };
  for (let round = 0; round < MANY_ROUNDS; round++) {
    const s1 = await fresh();
    const serialized = await time(async () => {
      for (let i = 0; i < 20; i++)
        await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(s1.wts, `s${i}`)], { cwd: s1.dir });
    });
    record('20 × git worktree add, serialized', serialized.ms, serialized.ms);

    // The floor under 20 command-line processes at once: each starts Node and then makes its
    // worktree with a bare add, the adds one at a time (flock, as warren's lock would).
    const f1 = await fresh();
    const lockFile = path.join(base, `floor${round}.lock`);
    const nodeFloor = await time(() =>
      twenty((i) =>
        run(
          'sh',
          [
            '-c',
            `"$0" -e 0 && flock "$1" git worktree add -q -b "$2" "$3"`,
            process.execPath,
            lockFile,
            `n${i}`,
            path.join(f1.wts, `n${i}`),
          ],
          { cwd: f1.dir },
        ),
      ),
    );
    record(
      'floor: 20 × (node -e 0; add under a lock), parallel',
      nodeFloor.ms,
      serialized.ms,
      '',
      nodeFloor.result.filter((r) => r.code !== 0).length,
    );

    for (const [j, b] of builds.entries()) {
      const c1 = await fresh(b.bin);
      const cpuBefore = childCpuMs();
      const cli = await time(() =>
        twenty((i) => run(process.execPath, [b.bin, 'new', 'feat', `m-${i}`], { cwd: c1.dir, env: c1.env })),
      );
      const cpu = childCpuMs() - cpuBefore;
      record(
        `20 × warren new, 20 processes (${b.label})`,
        cli.ms,
        serialized.ms,
        `${(cpu / 20).toFixed(0)} ms CPU each`,
        cli.result.filter((r) => r.code !== 0).length,
      );

      // The long-running paths: in one running process (an orchestrator embedding warren), and
      // asked of one running `warren serve` over HTTP.
      const l1 = await fresh(b.bin);
      const lib = libs[j];
      process.env.WARREN_HOME = l1.env.WARREN_HOME;
      // openStore (the facts' readers) now; the earlier build's Store took none.
      const store = lib.openStore ? lib.openStore() : new lib.Store();
      const ctx = await lib.openProject(l1.dir, { store });
      const library = await time(() =>
        Promise.allSettled(Array.from({ length: 20 }, (_, i) => lib.createTask(ctx, { type: 'feat', id: `m-${i}` }))),
      );
      store.close();
      record(
        `20 × createTask, library, 1 process (${b.label})`,
        library.ms,
        serialized.ms,
        '',
        library.result.filter((r) => r.status === 'rejected').length,
      );

      const v1 = await fresh(b.bin);
      const server = await startServe(v1.dir, v1.env, b.bin);
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
      record(
        `20 × POST /api/actions/new to serve (${b.label})`,
        served.ms,
        serialized.ms,
        '',
        served.result.filter((ok) => !ok).length,
      );
    }
  }

  console.log(
    `\n20 workspaces at once, ${MANY_ROUNDS} rounds, each against its own round's 20 serialized bare adds (${machine()})`,
  );
  console.log(
    `${'case'.padEnd(56)} ${'median'.padStart(10)} ${'× serialized (median)'.padStart(22)}  each round; failures`,
  );
  for (const r of rows.values()) {
    const note = r.notes.length > 0 ? `; ${r.notes.join(', ')}` : '';
    console.log(
      `${r.name.padEnd(56)} ${`${median(r.ms).toFixed(0)} ms`.padStart(10)} ${median(r.ratios).toFixed(2).padStart(22)}  ${r.ratios.map((x) => x.toFixed(2)).join(' ')}; ${r.failures}/${20 * MANY_ROUNDS} failed${note}`,
    );
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
    [
      '-e',
      `const D=require('better-sqlite3');const d=new D(${JSON.stringify(path.join(home, 'state.db'))},{readonly:true});console.log(JSON.stringify(d.prepare("SELECT task_id id, data FROM events WHERE kind='task.created'").all()))`,
    ],
    { cwd: path.dirname(BIN), encoding: 'utf8' },
  );
  return JSON.parse(out)
    .map((row) => ({ id: row.id, ...(JSON.parse(row.data).repoLock ?? {}) }))
    .filter((row) => typeof row.heldMs === 'number');
}

/** 20 `warren new` at once on a repository large enough that each writes its files outside the lock. */
export async function benchManyLarge(files = Number(process.env.BENCH_LARGE_FILES ?? 5000)) {
  const base = tmp();
  // Two repositories of the same files, one per row (see benchMany: each add gets slower with every worktree already there).
  const bareRepo = makeRepo(path.join(base, 'bare-repo'), files);
  const repo = makeRepo(path.join(base, 'repo'), files);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const worktrees = path.join(base, 'bare');
  fs.mkdirSync(worktrees);
  await run('git', ['worktree', 'add', '-q', '-b', 'warm', path.join(worktrees, 'warm')], { cwd: bareRepo });
  await run(process.execPath, [BIN, 'new', 'chore', 'warm'], { cwd: repo, env });
  const serialized = await time(async () => {
    for (let i = 0; i < 20; i++)
      await run('git', ['worktree', 'add', '-q', '-b', `s${i}`, path.join(worktrees, `s${i}`)], { cwd: bareRepo });
  });
  const concurrent = await time(() =>
    Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        run(process.execPath, [BIN, 'new', 'feat', `many-${i}`], { cwd: repo, env }),
      ),
    ),
  );
  const failures = concurrent.result.filter((r) => r.code !== 0).length;
  printTable(
    `20 workspaces of a repository of ${files} tracked files`,
    [
      { name: '20 × git worktree add, serialized', ms: serialized.ms },
      { name: '20 × warren new, in parallel (20 processes)', ms: concurrent.ms, note: `${failures}/20 failed` },
    ],
    '20 × git worktree add, serialized',
  );
  const rows = lockTimes(env.WARREN_HOME).filter((l) => l.id.startsWith('many-'));
  if (rows.length > 0) {
    console.log(
      `the repository lock (git worktree add --no-checkout) held ${median(rows.map((l) => l.heldMs)).toFixed(0)} ms each (median), ${rows.reduce((sum, l) => sum + l.heldMs, 0)} ms in all; waited for ${median(rows.map((l) => l.waitedMs)).toFixed(0)} ms (median)`,
    );
  }
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchCore();
  await benchManyLarge();
}
