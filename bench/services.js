#!/usr/bin/env node
// Services per task (issue 32), measured in one run on this machine; never fails.
//  1. A task's database cloned from a template of about 100 MB (`CREATE DATABASE … TEMPLATE …
//     STRATEGY = FILE_COPY`, the statement `warren new` runs) against the way without a
//     template: `createdb` + `psql < dump` of the same data. The ratio is clone / restore, for
//     two templates: one shaped like an application's database and one table with one index.
//  2. The time to a ready task with a database, a redis and a dev server (ready by HTTP):
//     `warren new` from start to exit, the template already built.
// Run: npm run build && node bench/services.js [scale of the row counts, 1] [iterations, 7]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, median, msOf, tmp, warrenIn } from './lib.js';
import { SHAPES as SHAPE_SQL } from './pg-shapes.js';

const SCALE = Number(process.argv[2] ?? 1);
const N = Number(process.argv[3] ?? 7);
const base = tmp('warren-bench-services-');
const repo = path.join(base, 'repo');
const home = path.join(base, 'home');
const env = { ...process.env, WARREN_HOME: home };
const PG = (() => {
  const v = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0];
  return path.join('/usr/lib/postgresql', v, 'bin');
})();

const SHAPES = Object.fromEntries(Object.entries(SHAPE_SQL).map(([k, v]) => [k, { what: v.what, sql: v.sql(SCALE) }]));

fs.mkdirSync(repo);
const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'bench');
git('config', 'user.email', 'bench@example.invalid');
for (const [name, shape] of Object.entries(SHAPES)) fs.writeFileSync(path.join(repo, `${name}.sql`), shape.sql);
// First the two templates (a database service each); then the task the second part times.
const TEMPLATES_YAML = `services:
  app: { kind: postgres, seed: { sql: app.sql } }
  flat: { kind: postgres, seed: { sql: flat.sql } }
`;
const TASK_YAML = `services:
  db: { kind: postgres, seed: { sql: app.sql } }
  cache: { kind: redis }
  web: { run: "exec python3 -m http.server $WARREN_PORT --bind 127.0.0.1", ready: { http: / } }
`;
fs.writeFileSync(path.join(repo, 'warren.yaml'), TEMPLATES_YAML);
git('add', '-A');
git('commit', '-q', '-m', 'init');

const warren = warrenIn(repo, env);
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

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
// Neither way pays for the other's writes: the cluster's dirty buffers are flushed, untimed, first.
const timed = (fn) => {
  admin('CHECKPOINT');
  return msOf(fn);
};

try {
  warren('trust', '--yes');
  const first = msOf(() => warren('new', 'feat', 'first'));
  const shown = JSON.parse(warren('--json', 'show', 'first'));
  console.log(`templates built and the first task ready in ${first.toFixed(0)} ms`);
  const table = [];
  for (const name of Object.keys(SHAPES)) {
    const built = shown.events.find((e) => e.kind === 'service.template_built' && e.name === name);
    const template = built.template;
    const db = shown.services.find((s) => s.name === name).database;
    const bytes = Number(admin(`SELECT pg_database_size('${db}')`));
    const relations = admin(
      `SELECT count(*) FILTER (WHERE relkind = 'r') || ' tables, ' || count(*) FILTER (WHERE relkind = 'i') || ' indexes' FROM pg_class WHERE relnamespace = 'public'::regnamespace`,
      db,
    );
    console.log(
      `${name}: ${SHAPES[name].what} (${relations}), ${mib(bytes)}, template ${template} built once in ${built.ms} ms`,
    );

    // Clone against createdb + psql < dump, same data, alternated.
    const dump = path.join(base, `${name}.sql.dump`);
    execFileSync(`${PG}/pg_dump`, ['-f', dump, db], { env: adminEnv() });
    const clone = [];
    const restore = [];
    const walLog = [];
    for (let i = 0; i < N; i++) {
      clone.push(timed(() => admin(`CREATE DATABASE bench_clone_${i} TEMPLATE ${template} STRATEGY = FILE_COPY`)));
      restore.push(
        timed(() => {
          execFileSync(`${PG}/createdb`, [`bench_restore_${i}`], { env: adminEnv() });
          execFileSync(`${PG}/psql`, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', dump], {
            env: adminEnv(`bench_restore_${i}`),
            stdio: ['ignore', 'ignore', 'inherit'],
          });
        }),
      );
      // PostgreSQL 15's default strategy: every block through the WAL instead of a file copy and two checkpoints.
      walLog.push(timed(() => admin(`CREATE DATABASE bench_wal_${i} TEMPLATE ${template} STRATEGY = WAL_LOG`)));
      for (const way of ['clone', 'restore', 'wal']) admin(`DROP DATABASE bench_${way}_${i}`);
    }
    const r = median(restore);
    table.push([`${name}, ${mib(bytes)}: createdb + psql < dump (baseline)`, r, 1]);
    table.push([`${name}: CREATE DATABASE … TEMPLATE (FILE_COPY, what warren runs)`, median(clone), median(clone) / r]);
    table.push([`${name}: CREATE DATABASE … TEMPLATE (WAL_LOG)`, median(walLog), median(walLog) / r]);
    if (name === 'app') {
      // What warren itself reported for the task databases it made (role, clone, grants, ownership).
      const made = [];
      for (let i = 0; i < N; i++) {
        admin('CHECKPOINT');
        warren('new', 'feat', `c${i}`);
        const ev = JSON.parse(warren('--json', 'show', `c${i}`)).events;
        made.push(ev.find((e) => e.kind === 'service.database_created' && e.name === 'app')?.ms ?? NaN);
        warren('rm', `c${i}`);
      }
      table.push([
        `${name}: warren new's database step (role, clone, ownership), its event`,
        median(made),
        median(made) / r,
      ]);
    }
  }
  console.log(`\n| way to the database | median of ${N} (ms) | ratio to its restore |`);
  console.log('|---|---:|---:|');
  for (const [what, t, ratio] of table) console.log(`| ${what} | ${t.toFixed(0)} | ${ratio.toFixed(3)} |`);

  // 2. A ready task with a database, a redis and a dev server, the template already built.
  warren('rm', 'first');
  fs.writeFileSync(path.join(repo, 'warren.yaml'), TASK_YAML);
  git('commit', '-q', '-am', 'a database, a cache and a dev server');
  warren('trust', '--yes');
  warren('new', 'feat', 'warm');
  const ready = [];
  for (let i = 0; i < N; i++) ready.push(msOf(() => warren('new', 'feat', `t${i}`)));
  console.log(
    `\nready task with a database (app), a redis and a dev server (ready by HTTP): warren new, start to exit, median ${median(ready).toFixed(0)} ms of ${N} (${ready.map((x) => x.toFixed(0)).join(', ')})`,
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
