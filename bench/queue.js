// The merge queue against landing one at a time, with a gate of about 5 s (BENCH_GATE_S):
//  1. serial: each task lands alone and the gate runs for each (`land: { batch: 1 }`, one
//     `warren land` after another);
//  2. the queue: 12 `warren land`s at once, the default batch (8);
//  3. the queue with one culprit among the 12: how many gate runs it took.
// Wall time from the first `land` to the last outcome, and the gate runs counted from the
// queue's own events.
import fs from 'node:fs';
import path from 'node:path';
import { BIN, machine, makeRepo, printTable, run, sh, time, tmp } from './lib.js';

const TASKS = 12;
const GATE_S = Number(process.env.BENCH_GATE_S ?? 5);

const bases = [];

async function setup(name, { batch, culprit }) {
  const base = tmp(`warren-bench-queue-${name}-`);
  bases.push(base);
  const repo = makeRepo(path.join(base, 'repo'), 20);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  fs.writeFileSync(
    path.join(repo, 'warren.yaml'),
    `verify:\n  - { id: gate, run: "sleep ${GATE_S}; ! test -e culprit.txt" }\n${batch === undefined ? '' : `land: { batch: ${batch} }\n`}`,
  );
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'gate'], { cwd: repo });
  await run(process.execPath, [BIN, 'trust', '--yes'], { cwd: repo, env });
  const ids = Array.from({ length: TASKS }, (_, i) => `t${String(i).padStart(2, '0')}`);
  for (const [i, id] of ids.entries()) {
    const made = JSON.parse(sh(process.execPath, [BIN, '--json', 'new', 'feat', id], { cwd: repo, env }));
    fs.writeFileSync(path.join(made.path, culprit === i ? 'culprit.txt' : `${id}.txt`), `${id}\n`);
    sh(process.execPath, [BIN, 'checkpoint', id, '-m', `${id} work`], { cwd: repo, env });
  }
  return { repo, env, ids };
}

function gateRuns(env) {
  // Counted from the events the queue recorded: one `queue.gate` per run of the gate.
  const db = path.join(env.WARREN_HOME, 'state.db');
  const out = sh(
    'node',
    [
      '-e',
      `const D=require('better-sqlite3');const d=new D(${JSON.stringify(db)},{readonly:true});console.log(d.prepare("SELECT COUNT(*) n FROM events WHERE kind='queue.gate'").get().n)`,
    ],
    { cwd: path.dirname(BIN) },
  );
  return Number(out.trim());
}

async function serial() {
  const { repo, env, ids } = await setup('serial', { batch: 1 });
  const t = await time(async () => {
    for (const id of ids) await run(process.execPath, [BIN, 'land', id], { cwd: repo, env });
  });
  return { ms: t.ms, runs: gateRuns(env) };
}

async function queued(culprit) {
  // The default batch (land.batch unset: 8).
  const { repo, env, ids } = await setup(culprit === undefined ? 'queue' : 'culprit', { culprit });
  const t = await time(() =>
    Promise.all(ids.map((id) => run(process.execPath, [BIN, 'land', id], { cwd: repo, env }))),
  );
  const landed = t.result.filter((r) => r.code === 0).length;
  return { ms: t.ms, runs: gateRuns(env), landed };
}

// Each case's repository and WARREN_HOME go at the end, also when a case fails.
try {
  const s = await serial();
  const q = await queued();
  const c = await queued(5);
  printTable(
    `merge queue: ${TASKS} tasks, gate ≈ ${GATE_S} s (${machine()})`,
    [
      { name: `serial: one land at a time, gate each (${s.runs} gate runs)`, ms: s.ms },
      { name: `queue, all passing, default batch (${q.runs} gate runs, ${q.landed} landed)`, ms: q.ms },
      { name: `queue, one culprit (${c.runs} gate runs, ${c.landed} landed, 1 bounced)`, ms: c.ms },
    ],
    `serial: one land at a time, gate each (${s.runs} gate runs)`,
  );
  console.log(
    `goal: queue (all passing) ≤ 0.4× serial: ${(q.ms / s.ms).toFixed(2)}×; one culprit took ${c.runs} gate runs (its batch of up to 8: at most 2·log2(8)+1 = 7, plus one per other batch)`,
  );
} finally {
  for (const base of bases) fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}
