// The conflict map's cost and the merge queue's use of it, in one run:
// 1. the map of 20 live tasks on a repository of BENCH_CONFLICT_FILES (default 10,000) files, each
//    task with a commit and uncommitted work, three pairs conflicting: computed from nothing
//    (every workspace read, every pair merged), looked at again with nothing changed (every
//    workspace read, no pair merged), and after one task's edit with only that workspace read
//    again (what `status ID`, a run's end or the MCP tool of that task does). Goal: ≤ 200 ms.
// 2. the merge queue on 12 tasks of which 3 pairs conflict, gate `sleep 1`, batches of
//    BENCH_CONFLICT_BATCH (default 4): with the map (`land.conflicts`, the default) and without:
//    gate runs, bounces and wall time, as ratios.
import fs from 'node:fs';
import path from 'node:path';
import { openProject, openStore } from '../dist/composition.js';
import { refreshConflicts } from '../dist/conflicts/map.js';
import { checkpointTask } from '../dist/land/checkpoint.js';
import { processQueue } from '../dist/queue/processor.js';
import { listQueue, queueLand } from '../dist/queue/operations.js';
import { createTask } from '../dist/workspace/create.js';
import { BIN, machine, makeRepo, median, sh, time, tmp } from './lib.js';

const FILES = Number(process.env.BENCH_CONFLICT_FILES ?? 10_000);
const TASKS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCH = Number(process.env.BENCH_CONFLICT_BATCH ?? 4);
const GOAL_MS = 200;

async function withProject(repo, home, fn) {
  process.env.WARREN_HOME = home;
  const store = openStore(home);
  try {
    return await fn(await openProject(repo, { store }));
  } finally {
    store.close();
  }
}

/** Task t-i edits its own file; t-0/t-1, t-2/t-3, t-4/t-5 also edit the same line of a shared file. */
async function fleet(ctx, repo) {
  const paths = [];
  for (let i = 0; i < TASKS; i++) {
    const task = await createTask(ctx, { type: 'feat', id: `t-${i}`, sync: false });
    paths.push(task.path);
    fs.appendFileSync(path.join(task.path, 'src', `d${i % 10}`, `f${i}.txt`), `committed by t-${i}\n`);
    if (i < 6)
      fs.writeFileSync(path.join(task.path, 'src', 'd0', `f${1000 + Math.floor(i / 2)}.txt`), `t-${i} was here\n`);
    await checkpointTask(ctx, `t-${i}`, { message: `work of t-${i}` });
    fs.writeFileSync(path.join(task.path, `notes-${i}.md`), 'uncommitted\n');
  }
  return paths;
}

async function benchMap() {
  const base = tmp('warren-bench-conflicts-');
  const repo = makeRepo(path.join(base, 'repo'), FILES);
  const home = path.join(base, 'home');
  const rows = { full: [], again: [], incremental: [], tips: [], status: [] };
  await withProject(repo, home, async (ctx) => {
    const paths = await fleet(ctx, repo);
    const first = await time(() => refreshConflicts(ctx));
    const conflicting = first.result.pairs.filter((p) => p.conflict).length;
    console.log(
      `${TASKS} tasks, ${FILES} files: ${first.result.pairs.length} pairs (${conflicting} conflicting), first map ${first.ms.toFixed(0)} ms`,
    );
    for (let r = 0; r < ROUNDS; r++) {
      // From nothing: the cache forgotten.
      ctx.store.db.prepare('DELETE FROM conflict_pairs').run();
      ctx.store.db.prepare('DELETE FROM conflict_snapshots').run();
      rows.full.push((await time(() => refreshConflicts(ctx))).ms);
      rows.again.push((await time(() => refreshConflicts(ctx))).ms);
      fs.appendFileSync(path.join(paths[7], 'src', 'd7', 'f7.txt'), `round ${r}\n`);
      const inc = await time(() => refreshConflicts(ctx, { snapshot: ['t-7'] }));
      if (inc.result.merged !== TASKS)
        throw new Error(`expected ${TASKS} pairs merged again, got ${inc.result.merged}`);
      rows.incremental.push(inc.ms);
      rows.tips.push((await time(() => refreshConflicts(ctx, { snapshot: [] }))).ms);
      // The floor: one \`git status\` of that workspace (what any look at its uncommitted work costs).
      rows.status.push((await time(async () => sh('git', ['status', '--porcelain'], { cwd: paths[7] }))).ms);
    }
  });
  const m = (k) => median(rows[k]);
  const floor = m('incremental');
  console.log(
    `\nconflict map, ${TASKS} live tasks (${(TASKS * (TASKS - 1)) / 2} pairs + ${TASKS} against the base), median of ${ROUNDS}`,
  );
  for (const [k, label] of [
    ['full', 'from nothing: every workspace read, every pair merged'],
    ['again', 'again, nothing changed: every workspace read, 0 merged'],
    ['incremental', "after one task's edit: its workspace read, 20 merged"],
    ['tips', 'nothing read, nothing merged (tips only)'],
    ['status', "floor: one `git status` of that task's workspace"],
  ])
    console.log(
      `${label.padEnd(58)} ${`${m(k).toFixed(0)} ms`.padStart(9)} ${`${(m(k) / floor).toFixed(2)}×`.padStart(8)}`,
    );
  console.log(
    `incremental update: ${floor.toFixed(0)} ms = ${(floor / m('status')).toFixed(1)}× one git status (goal ≤ ${GOAL_MS} ms: ${floor <= GOAL_MS ? 'met' : 'missed'})`,
  );
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

/** 12 tasks: pairs (a0, b0), (a1, b1), (a2, b2) conflict; x0..x5 touch files of their own. Queue order interleaved. */
async function benchQueue(conflicts) {
  const base = tmp('warren-bench-conflicts-q-');
  const repo = makeRepo(path.join(base, 'repo'), 50);
  fs.writeFileSync(
    path.join(repo, 'warren.yaml'),
    `verify:\n  - { id: gate, run: "sleep 1" }\nland: { gate: [gate], batch: ${BATCH}${conflicts ? '' : ', conflicts: false'} }\n`,
  );
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'a gate'], { cwd: repo });
  const home = path.join(base, 'home');
  const order = ['a0', 'x0', 'b0', 'a1', 'x1', 'b1', 'a2', 'x2', 'b2', 'x3', 'x4', 'x5'];
  // Trusted as a user would: the gate is one of warren.yaml's commands.
  sh(process.execPath, [BIN, 'trust', '--yes'], { cwd: repo, env: { ...process.env, WARREN_HOME: home } });
  // Each round's folder goes with it (six of them were left in the temporary folder).
  return withProject(repo, home, async (ctx) => {
    for (const id of order) {
      const task = await createTask(ctx, { type: 'feat', id, sync: false });
      const shared = /^[ab]/.test(id) ? `shared-${id.slice(1)}.txt` : `${id}.txt`;
      fs.writeFileSync(path.join(task.path, shared), `${id}\n`);
      await checkpointTask(ctx, id, { message: `work of ${id}` });
    }
    const t = await time(async () => {
      for (const id of order) await queueLand(ctx, id, { wait: false });
      return processQueue(ctx);
    });
    const entries = listQueue(ctx).entries;
    return {
      ms: t.ms,
      gateRuns: t.result.gateRuns,
      landed: entries.filter((e) => e.state === 'landed').length,
      bounced: entries.filter((e) => e.state === 'bounced').length,
    };
  }).finally(() => fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 }));
}

console.log(machine());
await benchMap();
// Interleaved rounds, the median of each: a busy machine moves both sides.
const QUEUE_ROUNDS = Number(process.env.BENCH_CONFLICT_QUEUE_ROUNDS ?? 3);
const runs = { with: [], without: [] };
for (let r = 0; r < QUEUE_ROUNDS; r++) {
  runs.without.push(await benchQueue(false));
  runs.with.push(await benchQueue(true));
}
const mid = (rs) => ({ ...rs[0], ms: median(rs.map((x) => x.ms)), gateRuns: median(rs.map((x) => x.gateRuns)) });
const withMap = mid(runs.with);
const without = mid(runs.without);
console.log(
  `\nmerge queue, 12 tasks, 3 conflicting pairs, gate sleep 1, batch ${BATCH}, median of ${QUEUE_ROUNDS} interleaved rounds`,
);
for (const [label, rs] of [
  ['without', runs.without],
  ['with', runs.with],
])
  console.log(`  ${label}: ${rs.map((x) => `${(x.ms / 1000).toFixed(1)} s (${x.gateRuns} runs)`).join(', ')}`);
for (const [label, r] of [
  ['without the map (land.conflicts: false)', without],
  ['with the map', withMap],
])
  console.log(
    `${label.padEnd(42)} gate runs ${String(r.gateRuns).padStart(2)}  landed ${r.landed}  bounced ${r.bounced}  ${(r.ms / 1000).toFixed(1)} s`,
  );
console.log(
  `with/without: gate runs ${(withMap.gateRuns / without.gateRuns).toFixed(2)}×, wall time ${(withMap.ms / without.ms).toFixed(2)}×`,
);
