// The merge queue against landing one at a time, with a gate of about 5 s (BENCH_GATE_S), for
// 12 and 6 tasks (BENCH_QUEUE_SIZES, e.g. "6"):
//  1. serial: each task lands alone and the gate runs for each (`land: { batch: 1 }`, one
//     `warren land` after another);
//  2. the queue: every `warren land` at once, the default batch (8), all passing (12 only);
//  3. the queue with one culprit whose failure the gate names (it prints the file that breaks
//     it, as a test runner names the failing test file): suspects are gated apart first;
//  4. the queue with one culprit the gate's failure says nothing about: bisection alone;
//  5. the same with `land: { parallel: true }`: bisection gates both halves at once.
// Wall time from the first `land` to the last outcome, and the gate runs counted from the
// queue's own events.
import fs from 'node:fs';
import path from 'node:path';
import { BIN, machine, makeRepo, printTable, run, sh, time, tmp } from './lib.js';

const GATE_S = Number(process.env.BENCH_GATE_S ?? 5);
const SIZES = (process.env.BENCH_QUEUE_SIZES ?? '12,6').split(',').map(Number);

// The gate fails when a culprit's file is there; `named` prints which file, `silent` prints nothing.
const GATES = {
  named: `sleep ${GATE_S}; for f in broken-*.txt; do test -e \\"$f\\" && { echo \\"FAIL $f\\"; exit 1; }; done; exit 0`,
  silent: `sleep ${GATE_S}; ! test -e culprit.txt`,
};

const bases = [];

async function setup(name, { tasks, batch, culprit, gate = 'silent', parallel = false }) {
  const base = tmp(`warren-bench-queue-${name}-`);
  bases.push(base);
  const repo = makeRepo(path.join(base, 'repo'), 20);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  fs.writeFileSync(
    path.join(repo, 'warren.yaml'),
    `verify:\n  - { id: gate, run: "${GATES[gate]}" }\nland: { ${batch === undefined ? '' : `batch: ${batch}, `}parallel: ${parallel} }\n`,
  );
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'gate'], { cwd: repo });
  await run(process.execPath, [BIN, 'trust', '--yes'], { cwd: repo, env });
  const ids = Array.from({ length: tasks }, (_, i) => `t${String(i).padStart(2, '0')}`);
  for (const [i, id] of ids.entries()) {
    const made = JSON.parse(sh(process.execPath, [BIN, '--json', 'new', 'feat', id], { cwd: repo, env }));
    const file = culprit !== i ? `${id}.txt` : gate === 'named' ? `broken-${id}.txt` : 'culprit.txt';
    fs.writeFileSync(path.join(made.path, file), `${id}\n`);
    sh(process.execPath, [BIN, 'checkpoint', id, '-m', `${id} work`], { cwd: repo, env });
  }
  return { repo, env, ids };
}

/** The gate's runs, from the events the queue recorded (one `queue.gate` each): which tasks, and whether it passed. */
function gateLog(env) {
  const db = path.join(env.WARREN_HOME, 'state.db');
  const out = sh(
    'node',
    [
      '-e',
      `const D=require('better-sqlite3');const d=new D(${JSON.stringify(db)},{readonly:true});console.log(JSON.stringify(d.prepare("SELECT data FROM events WHERE kind='queue.gate' ORDER BY seq").all().map((r)=>JSON.parse(r.data))))`,
    ],
    { cwd: path.dirname(BIN) },
  );
  return JSON.parse(out);
}

const gateRuns = (env) => gateLog(env).length;

/** `t00+t01 ✓, t02 ✗`: what each gate run tested, for the record. */
const describeRuns = (env) =>
  gateLog(env)
    .map((g) => `${g.tasks.join('+')} ${g.passed ? 'pass' : 'FAIL'}`)
    .join(', ');

async function serial(tasks, culprit) {
  const { repo, env, ids } = await setup(`serial-${tasks}`, { tasks, batch: 1, culprit });
  const t = await time(async () => {
    for (const id of ids) await run(process.execPath, [BIN, 'land', id], { cwd: repo, env });
  });
  return { ms: t.ms, runs: gateRuns(env) };
}

async function queued(tasks, culprit, gate, parallel = false) {
  // The default batch (land.batch unset: 8).
  const { repo, env, ids } = await setup(`queue-${tasks}-${gate ?? 'pass'}${parallel ? '-parallel' : ''}`, {
    tasks,
    culprit,
    gate,
    parallel,
  });
  const t = await time(() =>
    Promise.all(ids.map((id) => run(process.execPath, [BIN, 'land', id], { cwd: repo, env }))),
  );
  const landed = t.result.filter((r) => r.code === 0).length;
  return { ms: t.ms, runs: gateRuns(env), landed, order: describeRuns(env) };
}

// Each case's repository and WARREN_HOME go at the end, also when a case fails.
try {
  for (const tasks of SIZES) {
    const culprit = Math.floor(tasks / 2) - 1; // t05 of 12, t02 of 6: inside the first half of a batch
    const s = await serial(tasks, culprit);
    const baseline = `serial: one land at a time, gate each (${s.runs} gate runs)`;
    const rows = [{ name: baseline, ms: s.ms }];
    if (tasks === 12) {
      const q = await queued(tasks);
      rows.push({ name: `queue, all passing (${q.runs} gate runs, ${q.landed} landed)`, ms: q.ms });
    }
    const n = await queued(tasks, culprit, 'named');
    rows.push({ name: `queue, 1 culprit the failure names (${n.runs} gate runs)`, ms: n.ms });
    const b = await queued(tasks, culprit, 'silent');
    rows.push({ name: `queue, 1 culprit, a silent failure (${b.runs} gate runs)`, ms: b.ms });
    const p = await queued(tasks, culprit, 'silent', true);
    rows.push({ name: `queue, 1 culprit, silent, halves at once (${p.runs} gate runs)`, ms: p.ms });
    printTable(`merge queue: ${tasks} tasks, one culprit, gate ≈ ${GATE_S} s, batch 8 (${machine()})`, rows, baseline);
    console.log(`gate runs, culprit named: ${n.order}`);
    console.log(`gate runs, culprit silent: ${b.order}`);
    console.log(`gate runs, culprit silent, halves at once: ${p.order}`);
    console.log(
      `goal: one culprit ≤ 0.6× serial: ${(n.ms / s.ms).toFixed(2)}× when the failure names it, ${(b.ms / s.ms).toFixed(2)}× by bisection alone, ${(p.ms / s.ms).toFixed(2)}× with halves at once`,
    );
  }
} finally {
  for (const base of bases) fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}
