// A real project's shape, end to end, against doing the same by hand in the same run (issue 41).
// Two shapes (BENCH_SHAPE): `luxon` (the default, below) and `vue`: a pnpm workspace of 16
// packages (each depending on the one before by `workspace:*`, twelve of them on one of
// deps-20k's dependencies each; about 23,000 installed entries), with the root's `preinstall`
// (only pnpm may install, as `npx only-allow pnpm` checks) and `postinstall` (a per-checkout
// file, as simple-git-hooks writes), and a test per package. Its lockfile is made once, offline,
// by `pnpm install` against bench/npm-registry.js (deps-20k's packages from the npm cache);
// every install after it is `pnpm install --frozen-lockfile --offline` from a pnpm store of the
// run's own, in a task and by hand alike.
//
// luxon: the repository is built offline from local files: the deps-20k fixture's package.json and
// lockfile (about 20,000 installed files, from the npm cache .ci/deps-20k fills) with a
// husky-style `prepare` script (it writes .husky/_ and sets core.hooksPath, as husky 9 does) and
// a test runner that prints jest's `PASS file` / `FAIL file` lines; warren.yaml provisions
// node_modules copy-on-write, runs `npm ci` as setup and `npm test` as the gate.
//
// What is timed (medians; each warren step and its by-hand twin alternate, in rotating order):
// - a ready task: `warren new` (setup included) against `git worktree add -b` + `npm ci`
//   (whose prepare runs), each from the same npm cache, offline;
// - disk per task: what `du -skx` of WARREN_HOME grows by per task (cow layers; the shared
//   snapshot counted once, before), against `du -sk` of a by-hand worktree;
// - `warren status ID` on a task whose install was skipped;
// - the dashboard's fleet API (`GET /api/fleet`) with every task of the run present (20 by default);
// - `warren rm ID` against `git worktree remove --force` + `git branch -D`;
// - landing 6 tasks, one of them a culprit whose failure the runner reports as a test file no
//   task touched (`FAIL test/m0.test.js`, which requires the src/m0.js the culprit broke: the
//   log names nothing of its change; warren's guess follows the failing test's imports to it,
//   src/queue/failing-imports.ts), all `warren land` at once, against landing them one by one by
//   hand in the main checkout (squash-merge, `npm test`, undo on failure). BENCH_SILENT=1: the
//   runner prints no file names at all (only `.` or `F` per file): bisection alone.
// Goals: ready ≤ 0.3× by hand and ≤ 10 MB per task; status ≤ 1 s; fleet ≤ 500 ms for 20
// tasks; landing ≤ 0.6× by hand. Prints; never fails on a slow machine.
// Landing alone: BENCH_ONLY=land, BENCH_LAND_ROUNDS (rounds of six fresh tasks, each against
// its own six by hand, in rotating order; where the culprit fell in the queue is printed: the
// number of gate runs depends on it), BENCH_BEFORE_BIN (another build's bin/warren.js, whose
// `land` is timed in the same rounds), BENCH_TRACE=FILE (where the time went: each land's
// stderr and the events, in ms), BENCH_KEEP=1 (the run's folder is left for inspection).
//
//   npm run bench realworld            BENCH_TASKS=20 BENCH_TEST_S=4 BENCH_ROUNDS=3 BENCH_SHAPE=vue
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, machine, median, ROOT, run, startServe, time, tmp } from './lib.js';

const TASKS = Number(process.env.BENCH_TASKS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TEST_S = Number(process.env.BENCH_TEST_S ?? 4);
const SHAPE = process.env.BENCH_SHAPE === 'vue' ? 'vue' : 'luxon';
/** BENCH_ONLY=land: the landing alone (the project, then BENCH_LAND_ROUNDS rounds of landing 6). */
const LAND_ONLY = process.env.BENCH_ONLY === 'land';
const LAND_ROUNDS = Number(process.env.BENCH_LAND_ROUNDS ?? 1);
/** BENCH_SILENT=1: the test runner names no file, so nothing can point at the culprit. */
const SILENT = process.env.BENCH_SILENT === '1';
/** BENCH_BEFORE_BIN: another build's bin/warren.js, whose `land` is timed in the same rounds. */
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN;
const where = Object.fromEntries(
  execFileSync(path.join(ROOT, '.ci/deps-20k'), ['--where'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
if (!fs.existsSync(where.marker)) {
  process.stderr.write('bench: filling the npm cache once (.ci/deps-20k)…\n');
  execFileSync(path.join(ROOT, '.ci/deps-20k'), { stdio: ['ignore', 'ignore', 'inherit'] });
}
const CACHE = path.join(ROOT, '.bench-cache', 'npm-cache');
const base = tmp('warren-bench-realworld-');
const STORE = path.join(base, 'pnpm-store');
const INSTALL =
  SHAPE === 'vue'
    ? `pnpm install --frozen-lockfile --offline --store-dir=${STORE} --reporter=silent`
    : `npm ci --offline --no-audit --no-fund --loglevel=error --cache=${CACHE}`;
/** Where the i-th module and test file go: one folder (luxon), or package i % 16's (vue). */
const pkgDir = (i) => (SHAPE === 'vue' ? path.join('packages', `p${i % 16}`) : '.');

const repo = path.join(base, 'repo');
const hand = path.join(base, 'hand');
const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
const ok = (argv, opts = {}) => {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', cwd: repo, env, ...opts });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return r.stdout;
};
const warren = (...args) => ok([process.execPath, BIN, ...args]);
const g = (...args) => ok(['git', ...args]);
const ms = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const duK = (dir, cross = true) => Number(ok(['du', '-sk', ...(cross ? [] : ['-x']), dir]).split('\t')[0]);

/** The project: husky-style prepare (luxon) or a pnpm workspace (vue), a jest-like runner, 300 modules with 30 test files. */
async function makeProject() {
  fs.mkdirSync(path.join(repo, 'scripts'), { recursive: true });
  const fixture = JSON.parse(fs.readFileSync(path.join(where.fixture, 'package.json'), 'utf8'));
  const pkg = SHAPE === 'vue' ? vueShape(fixture) : luxonShape(fixture);
  fs.writeFileSync(path.join(repo, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  for (let i = 0; i < 300; i++) {
    fs.mkdirSync(path.join(repo, pkgDir(i), 'src'), { recursive: true });
    fs.writeFileSync(path.join(repo, pkgDir(i), 'src', `m${i}.js`), `exports.value = () => ${i};\n`);
  }
  for (let i = 0; i < 30; i++) {
    fs.mkdirSync(path.join(repo, pkgDir(i), 'test'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, pkgDir(i), 'test', `m${i}.test.js`),
      `module.exports = () => require('../src/m${i}.js').value() === ${i};\n`,
    );
  }
  // jest's output: PASS or FAIL per file (each package's, in the vue shape); the suite takes about BENCH_TEST_S seconds.
  fs.writeFileSync(
    path.join(repo, 'scripts', 'test.js'),
    [
      "const fs = require('fs'); const path = require('path');",
      `const until = Date.now() + ${TEST_S * 1000}; while (Date.now() < until) {}`,
      "const root = path.join(__dirname, '..');",
      `const dirs = ${SHAPE === 'vue' ? "fs.readdirSync(path.join(root, 'packages')).sort().map((p) => path.join('packages', p, 'test'))" : "['test']"};`,
      'let failed = 0;',
      'for (const dir of dirs)',
      "  for (const f of fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.test.js')).sort()) {",
      '    let pass = false; try { pass = require(path.join(root, dir, f))() === true; } catch {}',
      SILENT
        ? "    process.stdout.write(pass ? '.' : 'F'); if (!pass) failed++;"
        : "    console.log(`${pass ? 'PASS' : 'FAIL'} ${dir}/${f}`); if (!pass) failed++;",
      '  }',
      'process.exit(failed ? 1 : 0);',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.husky/_/\n.postinstall-ran\n');
  fs.writeFileSync(
    path.join(repo, 'warren.yaml'),
    [
      'provision:',
      '  - { path: node_modules, mode: cow }',
      'setup:',
      `  - { id: install, run: "${INSTALL}" }`,
      'verify:',
      '  - { id: test, run: npm test }',
      '',
    ].join('\n'),
  );
  g('init', '-q', '-b', 'main');
  g('config', 'user.name', 'bench');
  g('config', 'user.email', 'bench@example.invalid');
  g('config', 'gc.auto', '0');
  if (SHAPE === 'vue') await resolveOffline(); // pnpm-lock.yaml, and the store every later install reads
  g('add', '-A');
  g('commit', '-q', '-m', `a ${SHAPE}-shaped project`);
  ok(['sh', '-c', INSTALL]); // the main checkout's own install (its lifecycle scripts run)
  warren('trust', '--yes');
}

/** luxon: deps-20k's dependencies, husky 9's `prepare` (writes .husky/_, sets core.hooksPath). */
function luxonShape(fixture) {
  fs.copyFileSync(path.join(where.fixture, 'package-lock.json'), path.join(repo, 'package-lock.json'));
  fs.writeFileSync(
    path.join(repo, 'scripts', 'prepare.js'),
    [
      "const fs = require('fs');",
      "const { execFileSync } = require('child_process');",
      "fs.mkdirSync('.husky/_', { recursive: true });",
      "fs.writeFileSync('.husky/_/pre-commit', '#!/bin/sh\\nexit 0\\n', { mode: 0o755 });",
      "try { execFileSync('git', ['config', 'core.hooksPath', '.husky/_']); } catch {}",
      '',
    ].join('\n'),
  );
  return { ...fixture, scripts: { prepare: 'node scripts/prepare.js', test: 'node scripts/test.js' } };
}

/** vue: a pnpm workspace of 16 packages, root `preinstall` and `postinstall`. */
function vueShape(fixture) {
  const deps = Object.entries(fixture.dependencies);
  fs.writeFileSync(path.join(repo, 'pnpm-workspace.yaml'), "packages:\n  - 'packages/*'\n");
  for (let i = 0; i < 16; i++) {
    const dependencies = {};
    if (i > 0) dependencies[`@shaped/p${i - 1}`] = 'workspace:*';
    if (i < 12) dependencies[deps[i % deps.length][0]] = deps[i % deps.length][1];
    fs.mkdirSync(path.join(repo, 'packages', `p${i}`), { recursive: true });
    fs.writeFileSync(
      path.join(repo, 'packages', `p${i}`, 'package.json'),
      `${JSON.stringify({ name: `@shaped/p${i}`, version: '3.5.13', private: true, dependencies }, null, 2)}\n`,
    );
  }
  // only-allow pnpm, and simple-git-hooks' per-checkout write.
  fs.writeFileSync(
    path.join(repo, 'scripts', 'preinstall.js'),
    "if (!/^pnpm\\//.test(process.env.npm_config_user_agent || '')) { console.error('Use pnpm'); process.exit(1); }\n",
  );
  fs.writeFileSync(
    path.join(repo, 'scripts', 'postinstall.js'),
    "require('fs').writeFileSync('.postinstall-ran', '');\n",
  );
  return {
    name: 'shaped',
    private: true,
    version: '3.5.13',
    packageManager: 'pnpm@9.15.9',
    scripts: {
      preinstall: 'node scripts/preinstall.js',
      postinstall: 'node scripts/postinstall.js',
      test: 'node scripts/test.js',
    },
    devDependencies: Object.fromEntries(deps.slice(0, 2)),
  };
}

/** `pnpm install` against the offline registry: writes pnpm-lock.yaml and fills the run's store. */
async function resolveOffline() {
  const registry = spawn(
    process.execPath,
    [path.join(ROOT, 'bench', 'npm-registry.js'), path.join(where.fixture, 'package-lock.json'), CACHE],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const url = await new Promise((resolve, reject) => {
      registry.stdout.once('data', (d) => resolve(String(d).trim()));
      registry.once('exit', (code) => reject(new Error(`bench/npm-registry.js exited (${code})`)));
    });
    const r = await run('pnpm', ['install', `--registry=${url}`, `--store-dir=${STORE}`, '--reporter=silent'], {
      cwd: repo,
      env,
    });
    if (r.code !== 0) throw new Error(`pnpm install against ${url} failed: ${r.stderr}`);
    fs.rmSync(path.join(repo, 'node_modules'), { recursive: true, force: true });
    for (const p of fs.readdirSync(path.join(repo, 'packages')))
      fs.rmSync(path.join(repo, 'packages', p, 'node_modules'), { recursive: true, force: true });
  } finally {
    registry.kill();
  }
}

// BENCH_TRACE=FILE: where the landing's time goes — each `warren land`'s stderr lines and the
// state's events, in ms from the moment the six lands started.
const TRACE = process.env.BENCH_TRACE;
const traceLines = [];
function traced(bin, id, start) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, 'land', id], { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let rest = '';
    child.stderr.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) traceLines.push([Date.now() - start, `${id}: ${l}`]);
    });
    child.on('close', (code) => resolve({ code, stderr: '' }));
  });
}
function writeTrace(file, start) {
  const db = path.join(env.WARREN_HOME, 'state.db');
  const rows = ok([
    'sqlite3',
    db,
    `SELECT at, kind, message FROM events WHERE at >= '${new Date(start).toISOString()}' ORDER BY seq`,
  ]);
  const events = rows
    .split('\n')
    .filter(Boolean)
    .map((r) => [Date.parse(r.slice(0, r.indexOf('|'))) - start, `event ${r.slice(r.indexOf('|') + 1)}`]);
  const all = [...traceLines, ...events].sort((a, b) => a[0] - b[0]);
  fs.writeFileSync(file, all.map(([t, l]) => `${String(t).padStart(7)} ${l}`).join('\n') + '\n');
  traceLines.length = 0;
}

const results = {};
const note = (k, v) => (results[k] ??= []).push(v);

try {
  await makeProject();
  fs.mkdirSync(hand);
  // The first task makes the shared snapshot: timed apart, and its disk is not a task's.
  note(
    'first',
    ms(() => warren('new', 'feat', 'first')),
  );
  let n = 0;
  const ids = [];
  if (!LAND_ONLY) {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['warren', 'hand'] : ['hand', 'warren'];
      for (const who of order) {
        const id = `r${n++}`;
        if (who === 'warren') {
          const before = duK(env.WARREN_HOME, false);
          note(
            'ready warren',
            ms(() => warren('new', 'feat', id)),
          );
          note('disk warren', duK(env.WARREN_HOME, false) - before);
          ids.push(id);
        } else {
          const dir = path.join(hand, id);
          note(
            'ready hand',
            ms(() => {
              g('worktree', 'add', '-q', '-b', `hand/${id}`, dir);
              ok(['sh', '-c', INSTALL], { cwd: dir });
            }),
          );
          note('disk hand', duK(dir));
          note(
            'rm hand',
            ms(() => {
              g('worktree', 'remove', '--force', dir);
              g('branch', '-D', `hand/${id}`);
            }),
          );
        }
      }
    }
    for (const id of ids)
      note(
        'status',
        ms(() => warren('status', id)),
      );
    // The fleet: TASKS tasks in all.
    while (ids.length + 1 < TASKS) {
      const id = `r${n++}`;
      warren('new', 'feat', id);
      ids.push(id);
    }
    const serve = await startServe(repo, env);
    try {
      const get = (url) =>
        fetch(`${serve.url}${url}`, { headers: { 'x-warren-token': serve.token } }).then(async (r) => {
          if (!r.ok) throw new Error(`GET ${url}: ${r.status} ${(await r.text()).slice(0, 300)}`);
          return r.text();
        });
      for (let i = 0; i < 5; i++) {
        note('fleet', (await time(() => get('api/fleet'))).ms);
        note('fleet details', (await time(() => get('api/fleet/details'))).ms);
      }
    } finally {
      await serve.stop();
    }
    for (const id of ids.slice(0, ROUNDS))
      note(
        'rm warren',
        ms(() => warren('rm', id)),
      );
  }
  // Landing 6: each adds a passing test of its own; t3 breaks src/m0.js, which only test/m0 shows.
  // BENCH_LAND_ROUNDS rounds, each six fresh tasks; by hand in a clone of its own, one at a time.
  const clone = path.join(base, 'hand-clone');
  g('clone', '-q', '--no-hardlinks', '--branch', 'main', repo, clone);
  const c = (...args) => ok(['git', ...args], { cwd: clone });
  ok(['sh', '-c', INSTALL], { cwd: clone });
  const work = (dir, tag, i) => {
    if (i === 3) fs.writeFileSync(path.join(dir, pkgDir(0), 'src', 'm0.js'), 'exports.value = () => -1;\n');
    else
      fs.writeFileSync(
        path.join(dir, pkgDir(i + 1), 'test', `new${tag}_${i}.test.js`),
        `module.exports = () => true;\n`,
      );
  };
  const whos = BEFORE_BIN ? ['warren', 'before', 'hand'] : ['warren', 'hand'];
  for (let round = 0; round < LAND_ROUNDS; round++) {
    for (let k = 0; k < whos.length; k++) {
      const who = whos[(round + k) % whos.length];
      if (who === 'hand') {
        let passed = 0;
        note(
          'land hand',
          ms(() => {
            for (let i = 0; i < 6; i++) {
              work(clone, round, i);
              c('add', '-A');
              c('commit', '-q', '-m', `l${i} work`);
              const r = spawnSync('npm', ['test'], { cwd: clone, encoding: 'utf8' });
              if (r.status === 0) passed++;
              else c('reset', '-q', '--hard', 'HEAD~1');
            }
          }),
        );
        note('landed hand', passed);
        continue;
      }
      const land = [0, 1, 2, 3, 4, 5].map((i) => `${who === 'before' ? 'b' : 'l'}${round}-${i}`);
      for (const [i, id] of land.entries()) {
        const made = JSON.parse(warren('--json', 'new', 'feat', id));
        work(made.path, `${who}${round}`, i);
        warren('checkpoint', id, '-m', `${id} work`);
      }
      const bin = who === 'before' ? BEFORE_BIN : BIN;
      const landStart = Date.now();
      const landed = await time(() =>
        Promise.all(
          land.map((id) =>
            TRACE ? traced(bin, id, landStart) : run(process.execPath, [bin, 'land', id], { cwd: repo, env }),
          ),
        ),
      );
      if (TRACE) writeTrace(`${TRACE}.${who}${round}`, landStart);
      note(`land ${who}`, landed.ms);
      note(`landed ${who}`, landed.result.filter((r) => r.code === 0).length);
      // Where the culprit was in the queue (1-6): the number of gate runs depends on it.
      const order = ok([
        'sqlite3',
        path.join(env.WARREN_HOME, 'state.db'),
        `SELECT task_id FROM queue WHERE task_id LIKE '${land[0].slice(0, -1)}%' ORDER BY id`,
      ])
        .trim()
        .split('\n');
      note(`culprit ${who}`, order.indexOf(land[3]) + 1);
    }
  }

  const m = (k) => median(results[k]);
  const x = (a, b) => `${(m(a) / m(b)).toFixed(2)}×`;
  const shape =
    SHAPE === 'vue'
      ? 'vue-shaped: pnpm workspace of 16 packages from deps-20k + preinstall/postinstall'
      : 'luxon-shaped: deps-20k + husky prepare';
  console.log(`realworld (${shape} + jest-like tests ≈ ${TEST_S} s), ${machine()}`);
  console.log(
    `${LAND_ONLY ? `landing only, ${LAND_ROUNDS}` : ROUNDS} interleaved rounds; medians; load ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log(`| what | warren | by hand | ratio | goal |`);
  console.log(`|---|---|---|---|---|`);
  if (!LAND_ONLY) {
    console.log(`| the first task (makes the snapshot) | ${Math.round(m('first'))} ms | | | |`);
    console.log(
      `| a ready task | ${Math.round(m('ready warren'))} ms | ${Math.round(m('ready hand'))} ms | ${x('ready warren', 'ready hand')} | ≤ 0.3× |`,
    );
    console.log(
      `| disk per task | ${(m('disk warren') / 1024).toFixed(1)} MB | ${(m('disk hand') / 1024).toFixed(1)} MB | ${x('disk warren', 'disk hand')} | ≤ 10 MB |`,
    );
    console.log(`| \`warren status ID\` | ${Math.round(m('status'))} ms | | | ≤ 1 s |`);
    console.log(`| fleet API, ${ids.length + 1} tasks | ${Math.round(m('fleet'))} ms | | | ≤ 500 ms for 20 |`);
    console.log(
      `| fleet details (change counts), ${ids.length + 1} tasks | ${Math.round(m('fleet details'))} ms | | | |`,
    );
    console.log(
      `| rm | ${Math.round(m('rm warren'))} ms | ${Math.round(m('rm hand'))} ms | ${x('rm warren', 'rm hand')} | |`,
    );
  }
  for (const who of whos.filter((w) => w !== 'hand')) {
    const culprit = SILENT ? 'one silent culprit (no file named)' : 'one culprit (the log names only its test)';
    const label = who === 'before' ? `landing 6 (before: ${BEFORE_BIN})` : `landing 6, ${culprit}`;
    console.log(
      `| ${label} | ${Math.round(m(`land ${who}`))} ms (${results[`landed ${who}`].join('/')} landed; culprit ${results[`culprit ${who}`].join('/')} in the queue) | ${Math.round(m('land hand'))} ms (${results['landed hand'].join('/')} landed) | ${x(`land ${who}`, 'land hand')} | ≤ 0.6× |`,
    );
  }
  if (LAND_ROUNDS > 1)
    console.log(
      `landing, each round (ms): ${whos.map((w) => `${w} ${results[`land ${w}`].map(Math.round).join(' / ')}`).join('; ')}`,
    );
} finally {
  if (process.env.BENCH_KEEP)
    process.stderr.write(`bench: BENCH_KEEP: left ${base} (WARREN_HOME ${env.WARREN_HOME})\n`);
  else cleanUp();
}

function cleanUp() {
  for (const id of fs.existsSync(repo) ? JSON.parse(warren('--json', 'list')) : []) {
    spawnSync(process.execPath, [BIN, 'rm', id.id ?? id, '--discard'], { cwd: repo, env });
  }
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}
