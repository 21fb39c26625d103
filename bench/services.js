#!/usr/bin/env node
// Services per task (issue 32), measured in one run on this machine; never fails.
//  1. A task's database cloned from a template of about 100 MB (`CREATE DATABASE … TEMPLATE …
//     STRATEGY = FILE_COPY`, the statement `warren new` runs) against the way without a
//     template: `createdb` + `psql < dump` of the same data. The ratio is clone / restore.
//  2. The time to a ready task with a database, a redis and a dev server (ready by HTTP):
//     `warren new` from start to exit, the template already built.
// Run: npm run build && node bench/services.js [rows] [iterations]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROWS = Number(process.argv[2] ?? 400_000);
const N = Number(process.argv[3] ?? 5);
const BIN = path.resolve(import.meta.dirname, '../bin/warren.js');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-bench-services-')));
const repo = path.join(base, 'repo');
const home = path.join(base, 'home');
const env = { ...process.env, WARREN_HOME: home };
const PG = (() => {
  const v = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0];
  return path.join('/usr/lib/postgresql', v, 'bin');
})();

fs.mkdirSync(repo);
const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'bench');
git('config', 'user.email', 'bench@example.invalid');
fs.writeFileSync(
  path.join(repo, 'seed.sql'),
  `CREATE TABLE events (id bigint PRIMARY KEY, kind text NOT NULL, body text NOT NULL, at timestamptz NOT NULL);
INSERT INTO events SELECT g, md5(g::text), repeat(md5((g * 7)::text), 4), now() - g * interval '1 second' FROM generate_series(1, ${ROWS}) g;
CREATE INDEX events_kind ON events (kind);
`,
);
fs.writeFileSync(
  path.join(repo, 'warren.yaml'),
  `services:
  db: { kind: postgres, seed: { sql: seed.sql } }
  cache: { kind: redis }
  web: { run: "exec python3 -m http.server $WARREN_PORT --bind 127.0.0.1", ready: { http: / } }
`,
);
git('add', '-A');
git('commit', '-q', '-m', 'init');

function warren(...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: repo, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`warren ${args.join(' ')} failed: ${r.stdout}${r.stderr}`);
  return r.stdout;
}
function ms(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let cluster;
function admin(sql, database = 'postgres') {
  const r = spawnSync(`${PG}/psql`, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
    env: adminEnv(database),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${sql}: ${r.stderr}`);
  return r.stdout.trim();
}
function adminEnv(database = 'postgres') {
  cluster ??= JSON.parse(fs.readFileSync(path.join(home, 'services/postgres/cluster.json'), 'utf8'));
  return {
    ...process.env,
    PGHOST: path.join(home, 'services/postgres/run'),
    PGPORT: String(cluster.port),
    PGUSER: 'warren',
    PGPASSWORD: cluster.password,
    PGDATABASE: database,
  };
}

try {
  warren('trust', '--yes');
  const first = ms(() => warren('new', 'feat', 'first'));
  const shown = JSON.parse(warren('--json', 'show', 'first'));
  const built = shown.events.find((e) => e.kind === 'service.template_built');
  const template = built.template;
  const db = shown.services.find((s) => s.name === 'db').database;
  const bytes = Number(admin(`SELECT pg_database_size('${db}')`));
  console.log(
    `template ${template}: ${(bytes / 1024 / 1024).toFixed(1)} MiB (${ROWS} rows and an index), built once in ${built.ms} ms; first task ready in ${first.toFixed(0)} ms`,
  );

  // 1. Clone against createdb + psql < dump, same data.
  const dump = path.join(base, 'dump.sql');
  execFileSync(`${PG}/pg_dump`, ['-f', dump, db], { env: adminEnv() });
  const clone = [];
  const restore = [];
  for (let i = 0; i < N; i++) {
    clone.push(ms(() => admin(`CREATE DATABASE bench_clone_${i} TEMPLATE ${template} STRATEGY = FILE_COPY`)));
    restore.push(
      ms(() => {
        execFileSync(`${PG}/createdb`, [`bench_restore_${i}`], { env: adminEnv() });
        execFileSync(`${PG}/psql`, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', dump], {
          env: adminEnv(`bench_restore_${i}`),
          stdio: ['ignore', 'ignore', 'inherit'],
        });
      }),
    );
    admin(`DROP DATABASE bench_clone_${i}`);
    admin(`DROP DATABASE bench_restore_${i}`);
  }
  // PostgreSQL 15's default strategy: every block through the WAL instead of a file copy and two checkpoints.
  const walLog = [];
  for (let i = 0; i < N; i++) {
    walLog.push(ms(() => admin(`CREATE DATABASE bench_wal_${i} TEMPLATE ${template} STRATEGY = WAL_LOG`)));
    admin(`DROP DATABASE bench_wal_${i}`);
  }
  // The same clone with the cluster's fsync off (a reload, no restart): how much of it is the fsync of the copied files.
  admin('ALTER SYSTEM SET fsync = off');
  admin('SELECT pg_reload_conf()');
  const noSync = [];
  for (let i = 0; i < N; i++) {
    noSync.push(ms(() => admin(`CREATE DATABASE bench_nosync_${i} TEMPLATE ${template} STRATEGY = FILE_COPY`)));
    admin(`DROP DATABASE bench_nosync_${i}`);
  }
  admin('ALTER SYSTEM RESET fsync');
  admin('SELECT pg_reload_conf()');
  // What warren itself reported for the task databases it made (role, clone, grants, ownership).
  const c = median(clone);
  const r = median(restore);
  console.log('\n| way to a ~100 MB database | median of ' + N + ' (ms) | ratio to restore |');
  console.log('|---|---:|---:|');
  console.log(`| createdb + psql < dump (baseline) | ${r.toFixed(0)} | 1.00 |`);
  console.log(`| CREATE DATABASE … TEMPLATE (FILE_COPY) | ${c.toFixed(0)} | ${(c / r).toFixed(3)} |`);
  console.log(
    `| CREATE DATABASE … TEMPLATE (WAL_LOG) | ${median(walLog).toFixed(0)} | ${(median(walLog) / r).toFixed(3)} |`,
  );
  console.log(
    `| FILE_COPY, the cluster's fsync off | ${median(noSync).toFixed(0)} | ${(median(noSync) / r).toFixed(3)} |`,
  );

  // 2. A ready task with a database, a redis and a dev server.
  const ready = [];
  const made = [];
  for (let i = 0; i < N; i++) {
    ready.push(ms(() => warren('new', 'feat', `t${i}`)));
    const ev = JSON.parse(warren('--json', 'show', `t${i}`)).events;
    made.push(ev.find((e) => e.kind === 'service.database_created').ms);
  }
  console.log(
    `| warren new's database step (role + clone + ownership), from its event | ${median(made).toFixed(0)} | ${(median(made) / r).toFixed(3)} |`,
  );
  console.log(
    `\nready task with a database, a redis and a dev server (warren new, start to exit): median ${median(ready).toFixed(0)} ms of ${N} (${ready.map((x) => x.toFixed(0)).join(', ')})`,
  );
  console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, load ${os.loadavg()[0].toFixed(2)}`);
} finally {
  for (const t of JSON.parse(
    spawnSync(process.execPath, [BIN, '--json', 'list'], { cwd: repo, env, encoding: 'utf8' }).stdout || '[]',
  ))
    spawnSync(process.execPath, [BIN, 'rm', t.id], { cwd: repo, env });
  spawnSync(process.execPath, [BIN, 'gc'], { cwd: repo, env });
  fs.rmSync(base, { recursive: true, force: true });
}
