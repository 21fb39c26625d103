// The provisioning modes and a task's database end to end, each against doing it by hand,
// measured in the same interleaved rounds (issue 41). Never fails.
//
//   npm run bench modes              (builds first)
//   BENCH_ROUNDS=5 node bench/modes.js
//   BENCH_PARTS=modes,status,db node bench/modes.js   (any of the three)
//
//   BENCH_BEFORE_BIN=DIR/bin/warren.js node bench/modes.js   (modes: another build's `new` too,
//     status: its status of the full cow layer, first and again,
//     in the same rounds, e.g. an earlier revision from `git archive REV | tar -x -C DIR`, built)
//
//  1. modes: `warren new feat ID` with node_modules as `share`, `hardlink` and `copy` — the whole
//     CLI process, start to exit — against `git worktree add -b B DIR` followed by `ln -s`,
//     `cp -al` or `cp -a` of the same node_modules (two processes, as a user types them). The
//     tree is deps-20k (about 20,000 entries, installed once into .bench-cache/ by .ci/deps-20k).
//     Each round runs the six in a rotated order; each ratio is warren's median over its
//     baseline's median. Wall time, and CPU (user + system of the process and its children, by
//     /usr/bin/time). The floor row is Node's start-up plus the bare add: what any Node CLI pays.
//  2. status: `warren status ID` (a whole CLI process) on a task whose 20,000-file cow layer an
//     `npm ci` in the workspace rewrote with identical files (the first status reads them; the
//     next ones nothing), and on the share, hardlink and copy tasks above, nothing changed.
//  3. db: `warren new` of a task whose only service is a PostgreSQL database cloned from a
//     ~100 MB template (bench/pg-shapes.js `app`; built once, untimed) against restoring the same
//     data by hand (`createdb` + `psql -f dump`), and the floor: one `CREATE DATABASE … TEMPLATE`
//     (FILE_COPY) by psql. Rotated rounds, a CHECKPOINT (untimed) before each; each task removed
//     (untimed) after its round.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, ROOT, median, tmp } from './lib.js';
import { SHAPES } from './pg-shapes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN || null;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'modes,status,db').split(','));
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

const where = Object.fromEntries(
  execFileSync(path.join(ROOT, '.ci/deps-20k'), ['--where'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
if (!fs.existsSync(path.join(where.tree, 'node_modules/.package-lock.json')))
  execFileSync(path.join(ROOT, '.ci/deps-20k'), { stdio: ['ignore', 'ignore', 'inherit'] });
const npmCache = path.join(ROOT, '.bench-cache/npm-cache');

const base = tmp('warren-bench-modes-');
const home = path.join(base, 'home');
const env = { ...process.env, WARREN_HOME: home };
const out = [];
const say = (line) => {
  out.push(line);
  process.stderr.write(`bench: ${line}\n`);
};

/** Runs argv (a process, or a shell line) and returns wall ms and CPU ms of it and its children. */
function timed(argv, opts = {}) {
  const cpuFile = path.join(base, 'cpu');
  const full = TIME ? [TIME, '-o', cpuFile, '-f', '%U %S', ...argv] : argv;
  const start = process.hrtime.bigint();
  const r = spawnSync(full[0], full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  const [u, s] = TIME ? fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number) : [NaN, NaN];
  return { ms, cpu: (u + s) * 1000, stdout: r.stdout };
}

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

/** A repository whose ignored node_modules is deps-20k, with warren.yaml `yaml`, trusted. */
function repoWith(name, yaml, nodeModules = true) {
  const repo = path.join(base, name);
  fs.mkdirSync(repo);
  const g = (...a) => sh('git', a, { cwd: repo });
  g('init', '-q', '-b', 'main');
  g('config', 'user.email', 'bench@example.invalid');
  g('config', 'user.name', 'bench');
  g('config', 'gc.auto', '0');
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
  for (const f of ['package.json', 'package-lock.json'])
    fs.copyFileSync(path.join(where.fixture, f), path.join(repo, f));
  fs.writeFileSync(path.join(repo, 'warren.yaml'), yaml);
  g('add', '-A');
  g('commit', '-q', '-m', 'bench');
  if (nodeModules) sh('cp', ['-a', path.join(where.tree, 'node_modules'), path.join(repo, 'node_modules')]);
  sh(process.execPath, [BIN, 'trust', '--yes'], { cwd: repo, env });
  return repo;
}

const warren = (repo, ...args) => sh(process.execPath, [BIN, ...args], { cwd: repo, env });
const settle = () => spawnSync('sync');
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
/** Each list rotated by the round, so no case always runs first or after the same one. */
const rotated = (list, round) => list.map((_, i) => list[(i + round) % list.length]);

const tasks = {}; // mode → a task made by the rounds (status reads it)

function partModes() {
  const modes = ['share', 'hardlink', 'copy'];
  const repos = Object.fromEntries(
    modes.map((m) => [m, repoWith(`repo-${m}`, `provision:\n  - { path: node_modules, mode: ${m} }\n`)]),
  );
  const diy = { share: 'ln -s', hardlink: 'cp -al', copy: 'cp -a' };
  const samples = {};
  const add = (name, s) => (samples[name] ??= []).push(s);
  let n = 0;
  const cases = [
    ...modes.map((m) => ({
      name: `warren new (${m})`,
      run: () => {
        const id = `${m}${n++}`;
        const r = timed([process.execPath, BIN, 'new', 'feat', id], { cwd: repos[m], env });
        const rec = JSON.parse(warren(repos[m], '--json', 'show', id)).data.provision?.[0];
        if (rec?.mode !== m) throw new Error(`asked for ${m}, got ${JSON.stringify(rec)}`);
        tasks[m] = { repo: repos[m], id };
        return r;
      },
    })),
    ...(BEFORE_BIN ? modes : []).map((m) => ({
      name: `warren new (${m}), before`,
      run: () => timed([process.execPath, BEFORE_BIN, 'new', 'feat', `${m}${n++}`], { cwd: repos[m], env }),
    })),
    ...modes.map((m) => ({
      name: `git worktree add + ${diy[m]}`,
      run: () => {
        const dir = path.join(base, 'diy', `${m}${n++}`);
        const src = path.join(repos[m], 'node_modules');
        const step =
          m === 'share' ? `ln -s "${src}" "${dir}/node_modules"` : `${diy[m]} "${src}" "${dir}/node_modules"`;
        return timed(['sh', '-c', `git worktree add -q -b diy-${path.basename(dir)} "${dir}" && ${step}`], {
          cwd: repos[m],
        });
      },
    })),
    {
      name: 'floor: node -e 0 + git worktree add (bare)',
      run: () => {
        const dir = path.join(base, 'diy', `floor${n++}`);
        const a = timed([process.execPath, '-e', '0']);
        const b = timed(['git', 'worktree', 'add', '-q', '-b', `floor-${path.basename(dir)}`, dir], {
          cwd: repos.share,
        });
        return { ms: a.ms + b.ms, cpu: a.cpu + b.cpu };
      },
    },
  ];
  fs.mkdirSync(path.join(base, 'diy'));
  // One untimed round first: the page cache holds the tree for every case alike.
  for (const c of cases) c.run();
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of rotated(cases, round)) {
      settle();
      add(c.name, c.run());
    }
  }
  const med = (name, key) => median(samples[name].map((s) => s[key]));
  say(`modes: deps-20k, ${ROUNDS} interleaved rounds (rotating order), median wall / CPU:`);
  for (const m of modes) {
    const w = `warren new (${m})`;
    const d = `git worktree add + ${diy[m]}`;
    say(
      `  ${w.padEnd(22)} ${fmt(med(w, 'ms')).padStart(8)} / ${fmt(med(w, 'cpu')).padStart(8)}   ${d.padEnd(26)} ${fmt(med(d, 'ms')).padStart(8)} / ${fmt(med(d, 'cpu')).padStart(8)}   × ${(med(w, 'ms') / med(d, 'ms')).toFixed(2)} wall, × ${(med(w, 'cpu') / med(d, 'cpu')).toFixed(2)} CPU`,
    );
  }
  for (const m of BEFORE_BIN ? modes : []) {
    const w = `warren new (${m}), before`;
    const d = `git worktree add + ${diy[m]}`;
    say(
      `  ${w.padEnd(30)} ${fmt(med(w, 'ms')).padStart(8)} / ${fmt(med(w, 'cpu')).padStart(8)}   × ${(med(w, 'ms') / med(d, 'ms')).toFixed(2)} wall, × ${(med(w, 'cpu') / med(d, 'cpu')).toFixed(2)} CPU (${BEFORE_BIN})`,
    );
  }
  const f = 'floor: node -e 0 + git worktree add (bare)';
  say(`  ${f}: ${fmt(med(f, 'ms'))} / ${fmt(med(f, 'cpu'))} CPU`);
  for (const m of modes) {
    const w = `warren new (${m})`;
    say(`  ${w} each round: ${samples[w].map((s) => s.ms.toFixed(0)).join(', ')} ms`);
  }
}

function partStatus() {
  // A cow task whose layer a real `npm ci` rewrote identically: the full layer.
  const repo = repoWith('repo-cow', 'provision:\n  - { path: node_modules, mode: cow }\n');
  warren(repo, 'new', 'feat', 'full');
  const npm = [
    'npm',
    'ci',
    '--offline',
    '--no-audit',
    '--no-fund',
    '--ignore-scripts',
    '--loglevel=error',
    `--cache=${npmCache}`,
  ];
  warren(repo, 'exec', 'full', '--', ...npm);
  const statusOf = (r, id, bin = BIN) => {
    const t = timed([process.execPath, bin, '--json', 'status', id], { cwd: r, env });
    const s = JSON.parse(t.stdout);
    return { ...t, changes: s.provisioned.reduce((k, p) => k + p.changedCount, 0) };
  };
  // What a first status found identical, remembered beside the layer (same.json): removed, the next status is a first one again.
  const overlays = path.join(home, 'overlays');
  const sameCache = fs
    .readdirSync(overlays)
    .map((key) => path.join(overlays, key, 'full', 'node_modules', 'same.json'))
    .find((f) => fs.existsSync(path.dirname(f)));
  const first = statusOf(repo, 'full');
  say(
    `status: cow layer after npm ci in the workspace (every file rewritten): first status ${fmt(first.ms)}, ${fmt(first.cpu)} CPU (${first.changes} change(s); reads both copies of each file once)`,
  );
  const forget = () => fs.rmSync(sameCache, { force: true });
  const rows = [
    ['cow, full layer, first (same.json removed)', repo, 'full', BIN, forget],
    ['cow, full layer, again', repo, 'full'],
    ...(BEFORE_BIN
      ? [
          ['cow, full layer, first (same.json removed), before', repo, 'full', BEFORE_BIN, forget],
          ['cow, full layer, again, before', repo, 'full', BEFORE_BIN],
        ]
      : []),
    ...Object.entries(tasks).map(([m, t]) => [`${m}, nothing changed`, t.repo, t.id]),
  ];
  const samples = Object.fromEntries(rows.map(([name]) => [name, []]));
  const changes = {};
  const cpu = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, r, id, bin, before] of rotated(rows, round)) {
      before?.();
      const s = statusOf(r, id, bin);
      samples[name].push(s.ms);
      (cpu[name] ??= []).push(s.cpu);
      changes[name] = s.changes;
    }
  }
  for (const [name] of rows)
    say(
      `  warren status (${name}): median ${fmt(median(samples[name]))} wall, ${fmt(median(cpu[name]))} CPU, of ${ROUNDS} (${samples[name].map((x) => x.toFixed(0)).join(', ')} ms), ${changes[name]} change(s); goal ≤ 1 s`,
    );
}

function partDb() {
  const pgBin = (() => {
    const v = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0];
    return path.join('/usr/lib/postgresql', v, 'bin');
  })();
  const repo = repoWith('repo-db', 'services:\n  db: { kind: postgres, seed: { sql: app.sql } }\n', false);
  fs.writeFileSync(path.join(repo, 'app.sql'), SHAPES.app.sql(1));
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'seed'], { cwd: repo });
  warren(repo, 'trust', '--yes');
  warren(repo, 'new', 'feat', 'warm'); // builds the template, untimed
  const cluster = JSON.parse(fs.readFileSync(path.join(home, 'services/postgres/cluster.json'), 'utf8'));
  const pgEnv = (db = 'postgres') => ({
    ...process.env,
    PGHOST: path.join(home, 'services/postgres/run'),
    PGPORT: String(cluster.port),
    PGUSER: 'warren',
    PGPASSWORD: cluster.password,
    PGDATABASE: db,
  });
  const admin = (sql, db) =>
    sh(`${pgBin}/psql`, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], { env: pgEnv(db) }).trim();
  const shown = JSON.parse(warren(repo, '--json', 'show', 'warm'));
  const template = shown.events.find((e) => e.kind === 'service.template_built').template;
  const db = shown.services.find((s) => s.name === 'db').database;
  const bytes = Number(admin(`SELECT pg_database_size('${db}')`));
  const dump = path.join(base, 'app.dump.sql');
  sh(`${pgBin}/pg_dump`, ['-f', dump, db], { env: pgEnv() });
  let n = 0;
  const samples = {};
  const undo = [];
  const cases = [
    {
      name: 'by hand: createdb + psql -f dump (baseline)',
      run: () => {
        const name = `bench_restore_${n++}`;
        undo.push(() => admin(`DROP DATABASE ${name}`));
        return timed(
          [
            'sh',
            '-c',
            `"${pgBin}/createdb" ${name} && "${pgBin}/psql" -X -q -v ON_ERROR_STOP=1 -f "${dump}" -d ${name} >/dev/null`,
          ],
          {
            env: pgEnv(),
          },
        );
      },
    },
    {
      name: 'floor: CREATE DATABASE … TEMPLATE (FILE_COPY), one psql',
      run: () => {
        const name = `bench_clone_${n++}`;
        undo.push(() => admin(`DROP DATABASE ${name}`));
        return timed(
          [`${pgBin}/psql`, '-X', '-q', '-c', `CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY = FILE_COPY`],
          {
            env: pgEnv(),
          },
        );
      },
    },
    {
      name: 'warren new, a task with the database',
      run: () => {
        const id = `db${n++}`;
        undo.push(() => warren(repo, 'rm', id));
        return timed([process.execPath, BIN, 'new', 'feat', id], { cwd: repo, env });
      },
    },
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of rotated(cases, round)) {
      admin('CHECKPOINT');
      (samples[c.name] ??= []).push(c.run().ms);
    }
    while (undo.length) undo.pop()();
  }
  const baseMs = median(samples[cases[0].name]);
  say(
    `db: app template ${(bytes / 2 ** 20).toFixed(0)} MiB, ${ROUNDS} interleaved rounds (rotating order), median wall:`,
  );
  for (const c of cases)
    say(
      `  ${c.name.padEnd(58)} ${fmt(median(samples[c.name])).padStart(8)}  × ${(median(samples[c.name]) / baseMs).toFixed(3)}   (${samples[c.name].map((x) => x.toFixed(0)).join(', ')} ms)`,
    );
}

try {
  say(
    `${os.cpus().length} cores, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the start, ${new Date().toISOString().slice(0, 16)}Z`,
  );
  if (PARTS.has('modes')) partModes();
  if (PARTS.has('status')) partStatus();
  if (PARTS.has('db')) partDb();
  say(
    `load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end`,
  );
  console.log(out.join('\n'));
} finally {
  // Only the database task's server needs warren to stop it (gc, once no task uses it); the
  // rest is folders under base, deleted whole (a warren rm per 20,000-file copy would take minutes).
  const dbRepo = path.join(base, 'repo-db');
  if (fs.existsSync(dbRepo)) {
    const listed = spawnSync(process.execPath, [BIN, '--json', 'list'], { cwd: dbRepo, env, encoding: 'utf8' });
    for (const t of JSON.parse(listed.stdout || '[]'))
      spawnSync(process.execPath, [BIN, 'rm', t.id], { cwd: dbRepo, env });
    spawnSync(process.execPath, [BIN, 'gc'], { cwd: dbRepo, env });
  }
  spawnSync('sh', ['-c', `grep " ${base}" /proc/self/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount`]);
  fs.rmSync(base, { recursive: true, force: true });
}
