#!/usr/bin/env node
// Overhead of `warren exec ID -- true` against running `true` directly, with and without the
// bwrap sandbox, measured in one run on this machine. Prints medians and ratios; never fails.
// Run: npm run build && node bench/exec.js [iterations]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const N = Number(process.argv[2] ?? 20);
const BIN = path.resolve(import.meta.dirname, '../bin/warren.js');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-bench-exec-')));
const repo = path.join(base, 'repo');
const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };

function git(...args) {
  execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
}
fs.mkdirSync(repo);
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'bench');
git('config', 'user.email', 'bench@example.invalid');
fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n');
git('add', '-A');
git('commit', '-q', '-m', 'init');

function warren(...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: repo, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`warren ${args.join(' ')} failed: ${r.stdout}${r.stderr}`);
  return r.stdout;
}
warren('new', 'feat', 'plain');
warren('new', 'feat', 'boxed', '--sandbox', 'bwrap');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function time(fn) {
  fn(); // warm-up
  const samples = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(samples);
}
function supervised(id) {
  // The run's own duration, as the supervisor measured it (spawn to end, no Node start-up).
  const samples = [];
  for (let i = 0; i < N; i++) samples.push(JSON.parse(warren('--json', 'exec', id, '--', 'true')).durationMs);
  return median(samples);
}

const direct = time(() => spawnSync('true'));
const nodeFloor = time(() => spawnSync(process.execPath, [BIN, '--version']));
const plain = time(() => warren('exec', 'plain', '--', 'true'));
const boxed = time(() => warren('exec', 'boxed', '--', 'true'));
const plainRun = supervised('plain');
const boxedRun = supervised('boxed');

const rows = [
  ['true, run directly', direct],
  ['warren --version (Node start-up floor)', nodeFloor],
  ['warren exec -- true (no sandbox)', plain],
  ['warren exec -- true (bwrap sandbox)', boxed],
  ['  of which the supervised run itself (no sandbox)', plainRun],
  ['  of which the supervised run itself (bwrap)', boxedRun],
];
console.log(`warren exec overhead — median of ${N}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}, load average ${os.loadavg()[0].toFixed(1)}`);
console.log(`${'case'.padEnd(52)} ${'ms'.padStart(9)} ${'× true'.padStart(9)}`);
for (const [name, ms] of rows) console.log(`${name.padEnd(52)} ${ms.toFixed(1).padStart(9)} ${(ms / direct).toFixed(1).padStart(9)}`);
console.log(`bwrap vs no sandbox, end to end: ${(boxed / plain).toFixed(2)}×; supervised run: ${(boxedRun / plainRun).toFixed(2)}×`);
fs.rmSync(base, { recursive: true, force: true });
