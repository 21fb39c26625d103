// A land whose lockfile changed (issue 41): the merge queue's gate installs the integrated
// lockfile (`npm ci`, offline, from tarballs in the repository) and keeps that install as the
// snapshot the next gate and task get. Two ways, in the same interleaved rounds, the order
// rotating:
//  1. copy (WARREN_GATE_SNAPSHOT=copy, the old path): the install is copied into the snapshot
//     store between install and verify;
//  2. promote (the default): the install is renamed into the store and mounted back
//     copy-on-write for the verify commands — no copy.
// Times `warren land up` end to end (its gate: the install, keeping the snapshot, `node check.js`),
// and the snapshot step alone (the `provision.snapshot` event's `ms`). Everything before the land
// (the repository, the main checkout's install, the task and its upgrade) is outside the timing.
// BENCH_PKGS packages (default 40) of BENCH_FILES files (default 300) of 4 KiB: about 12,000
// files and 48 MB installed; BENCH_ROUNDS rounds (default 3).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, machine, makeRepo, median, printTable, run, sh, time, tmp } from './lib.js';

const PKGS = Number(process.env.BENCH_PKGS ?? 40);
const FILES = Number(process.env.BENCH_FILES ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NPM = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];

const work = tmp('warren-bench-gate-snapshot-');
const cache = path.join(work, 'npm-cache');

/** A package tarball `name-version.tgz` in `dir`, of FILES files. */
function tarball(dir, name, version) {
  const src = path.join(work, 'src', `${name}-${version}`, 'package');
  fs.mkdirSync(path.join(src, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(src, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
  fs.writeFileSync(path.join(src, 'index.js'), `module.exports = '${name} ${version}';\n`);
  const body = `// ${name} ${version}\n`.repeat(4096 / 16);
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(src, 'lib', `f${i}.js`), body);
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-czf', path.join(dir, `${name}-${version}.tgz`), '-C', path.dirname(src), 'package']);
}

const vendor = path.join(work, 'vendor');
for (let i = 0; i < PKGS; i++) tarball(vendor, `p${i}`, '1.0.0');
tarball(vendor, 'extra', '1.0.0');

function npm(cwd, ...args) {
  sh('npm', [...args, ...NPM, `--cache=${cache}`], { cwd });
}

/** A repository whose main checkout has installed PKGS packages, and a task `up` that adds one more (its lockfile changed). */
async function setup(name) {
  const base = path.join(work, name);
  const repo = makeRepo(path.join(base, 'repo'), 20);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  fs.cpSync(vendor, path.join(repo, 'vendor'), { recursive: true });
  const deps = Object.fromEntries(Array.from({ length: PKGS }, (_, i) => [`p${i}`, `file:vendor/p${i}-1.0.0.tgz`]));
  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', dependencies: deps }),
  );
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules\n');
  fs.writeFileSync(path.join(repo, 'check.js'), "require('p0');\n");
  fs.writeFileSync(
    path.join(repo, 'warren.yaml'),
    [
      'provision:',
      '  - { path: node_modules, mode: cow }',
      'setup:',
      `  - { id: deps, run: "npm ci ${NPM.join(' ')} --cache=${cache}", timeout: 5m }`,
      'verify:',
      '  - { id: check, run: "node check.js" }',
      '',
    ].join('\n'),
  );
  npm(repo, 'install');
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'deps'], { cwd: repo });
  await run(process.execPath, [BIN, 'trust', '--yes'], { cwd: repo, env });
  const made = JSON.parse(sh(process.execPath, [BIN, '--json', 'new', 'feat', 'up'], { cwd: repo, env }));
  npm(made.path, 'install', 'file:vendor/extra-1.0.0.tgz');
  fs.writeFileSync(path.join(made.path, 'check.js'), "require('p0'); require('extra');\n");
  sh(process.execPath, [BIN, 'checkpoint', 'up', '-m', 'extra'], { cwd: repo, env });
  return { base, repo, env };
}

/** The gate's snapshot step, from its event: how long, and whether it was moved or copied. */
function snapshotStep(env) {
  const db = path.join(env.WARREN_HOME, 'state.db');
  const out = sh(
    'node',
    [
      '-e',
      `const D=require('better-sqlite3');const d=new D(${JSON.stringify(db)},{readonly:true});console.log(JSON.stringify(d.prepare("SELECT message, data FROM events WHERE kind='provision.snapshot' AND message LIKE '%merge queue%' ORDER BY seq").all()))`,
    ],
    { cwd: path.dirname(BIN) },
  );
  const rows = JSON.parse(out);
  return rows.map((r) => ({ ms: JSON.parse(r.data).ms, moved: r.message.includes('no copy') }));
}

const ARMS = {
  copy: { WARREN_GATE_SNAPSHOT: 'copy' },
  promote: {},
};
const results = { copy: [], promote: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['copy', 'promote'] : ['promote', 'copy'];
    for (const arm of order) {
      const { base, repo, env } = await setup(`${arm}-${round}`);
      const landEnv = { ...env, ...ARMS[arm] };
      const t = await time(() => run(process.execPath, [BIN, 'land', 'up'], { cwd: repo, env: landEnv }));
      if (t.result.code !== 0) throw new Error(`${arm}: land failed: ${t.result.stderr}`);
      const step = snapshotStep(env);
      const installed = sh('du', ['-sh', path.join(env.WARREN_HOME, 'snapshots')]).split('\t')[0];
      results[arm].push({ ms: t.ms, snapshotMs: step[0]?.ms ?? NaN, moved: step[0]?.moved ?? null, installed });
      console.log(`round ${round + 1} ${arm}: land ${t.ms.toFixed(0)} ms, snapshot step ${step[0]?.ms ?? '?'} ms`);
      // The task's mounts come off before its folders go.
      const removed = await run(process.execPath, [BIN, 'rm', 'up', '--delete-branch'], { cwd: repo, env });
      if (removed.code !== 0) throw new Error(`rm up failed: ${removed.stderr}`);
      fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
    }
  }
  const row = (arm) => {
    const r = results[arm];
    return {
      name: arm === 'copy' ? 'copy (old path)' : 'promote (rename, mount back)',
      ms: median(r.map((x) => x.ms)),
      note: `snapshot step ${median(r.map((x) => x.snapshotMs)).toFixed(0)} ms (${r.map((x) => x.snapshotMs).join(', ')}); moved: ${r.map((x) => x.moved).join(', ')}; lands ${r.map((x) => x.ms.toFixed(0)).join(', ')} ms`,
    };
  };
  printTable(
    `a land whose lockfile changed: gate installs ${PKGS} packages × ${FILES} files (${results.copy[0]?.installed ?? '?'} of snapshots); median of ${ROUNDS} interleaved rounds (${machine()})`,
    [row('copy'), row('promote')],
    'copy (old path)',
  );
} finally {
  fs.rmSync(work, { recursive: true, force: true, maxRetries: 3 });
}
