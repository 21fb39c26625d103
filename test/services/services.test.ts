import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import os from 'node:os';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/composition.js';
import { rewriteDotenv } from '../../src/services/env-file.js';
import { egressPrefix } from '../../src/run/egress.js';
import { isAlive } from '../../src/system/proc.js';
import { unavailable } from '../helpers/capabilities.js';
import { startCli } from '../helpers/procs.js';
import { makeRepo, runWarren, type TestRepo } from '../helpers/repo.js';
import {
  adminSql,
  cluster,
  listening,
  livingDaemons,
  pgBin,
  stopServicesAfter,
  urlSql,
  warrenObjects,
} from '../helpers/services.js';

/**
 * Services per task, with the real servers: warren's own PostgreSQL cluster (initdb, run as a
 * user other than root), a redis-server and a dev server per task. The same as uid 65534 is in
 * services-nonroot.test.ts.
 */

const noPostgres = unavailable(import.meta.filename, 'postgres');
const noRedis = unavailable(import.meta.filename, 'redis');

const SCHEMA = `CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO items (name) VALUES ('one'), ('two');
`;

function repoTmp(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-services-')));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function dbRepo(yaml: string, files: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({ files: { 'db/schema.sql': SCHEMA, 'warren.yaml': yaml, ...files } });
  repo.trust();
  stopServicesAfter(repo.home);
  return repo;
}

async function envOf(repo: TestRepo, id: string): Promise<Record<string, string>> {
  const r = await repo.warrenJson<{ env: Record<string, string> }>('env', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json.env;
}

const DB_YAML = `services:
  db: { kind: postgres, seed: { sql: db/schema.sql } }
`;

describe.skipIf(noPostgres)('postgres per task', () => {
  it('five tasks made at once each get a database cloned from one template; a migration and writes in one are seen by no other task nor the template; roles cannot cross; rm drops database and role', async () => {
    const repo = dbRepo(DB_YAML);
    const ids = ['t0', 't1', 't2', 't3', 't4'];
    const made = await Promise.all(ids.map((id) => repo.warren('new', 'feat', id)));
    for (const r of made) expect(r.code, r.stderr).toBe(0);
    const envs = await Promise.all(ids.map((id) => envOf(repo, id)));
    const urls = envs.map((e) => e.DATABASE_URL ?? '');
    expect(new Set(urls).size).toBe(5);

    // One template was built, once.
    const store = openStore(repo.home);
    const tasks = ids.map((id) => store.listTasks().find((t) => t.id === id));
    store.close();
    const templates = new Set(
      tasks.map((t) => {
        const f = t?.data.services?.db;
        return f?.kind === 'postgres' && f.from.kind === 'template' ? f.from.name : null;
      }),
    );
    expect(templates.size).toBe(1);
    const template = [...templates][0] ?? '';
    expect(template).toMatch(/^warren_tpl_/);
    const built = adminSql(repo.home, 'SELECT 1');
    expect(built).toBe('1');
    // The template's role, as every role warren makes, has its share of the server.
    expect(adminSql(repo.home, `SELECT rolconnlimit FROM pg_roles WHERE rolname = '${template}'`)).toBe('20');

    // A migration and writes in t0, through the command warren runs for it.
    const migrate = await repo.warren(
      'exec',
      't0',
      '--',
      'sh',
      '-c',
      `${pgBin('psql')} -X -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "ALTER TABLE items ADD COLUMN price int; INSERT INTO items (name, price) VALUES ('three', 3)"`,
    );
    expect(migrate.code, migrate.stderr + migrate.stdout).toBe(0);
    expect(urlSql(urls[0] ?? '', 'SELECT count(*) FROM items').out).toBe('3');
    for (const url of urls.slice(1)) {
      expect(urlSql(url, 'SELECT count(*) FROM items').out).toBe('2');
      expect(urlSql(url, 'SELECT price FROM items').err).toMatch(/column "price" does not exist/);
    }
    // The template is as it was: a task made now gets two rows and no column.
    expect((await repo.warren('new', 'feat', 't5')).code).toBe(0);
    const t5 = (await envOf(repo, 't5')).DATABASE_URL ?? '';
    expect(urlSql(t5, 'SELECT count(*) FROM items').out).toBe('2');
    expect(urlSql(t5, 'SELECT price FROM items').code).not.toBe(0);

    // Roles cannot cross: t1's role (and password) cannot reach t0's database.
    const t0db = new URL(urls[0] ?? '').pathname.slice(1);
    const crossed = new URL(urls[1] ?? '');
    crossed.pathname = `/${t0db}`;
    const cross = urlSql(crossed.toString(), 'SELECT 1');
    expect(cross.code).not.toBe(0);
    expect(cross.err).toMatch(/no pg_hba.conf entry|permission denied/);
    // Each database is owned by its own role, and PUBLIC may not connect.
    expect(adminSql(repo.home, `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '${t0db}'`)).toBe(t0db);
    expect(
      adminSql(repo.home, `SELECT has_database_privilege('${new URL(urls[1] ?? '').username}', '${t0db}', 'CONNECT')`),
    ).toBe('f');
    // The task's role owns the cloned tables (a migration needs it).
    expect(adminSql(repo.home, "SELECT tableowner FROM pg_tables WHERE tablename = 'items'", t0db)).toBe(t0db);

    // rm drops the database and the role, and the others stay.
    const rm = await repo.warren('rm', 't0');
    expect(rm.code, rm.stderr).toBe(0);
    const left = warrenObjects(repo.home);
    expect(left.databases).not.toContain(t0db);
    expect(left.roles).not.toContain(t0db);
    expect(left.databases).toHaveLength(1 + 5); // the template and t1..t5
    const shown = await repo.warrenJson<{ events: { kind: string }[] }>('show', 't1');
    expect(shown.json.events.map((e) => e.kind)).toContain('service.database_created');

    for (const id of ['t1', 't2', 't3', 't4', 't5']) {
      const r = await repo.warren('rm', id);
      expect(r.code, r.stderr).toBe(0);
    }
    // gc keeps the template of the current seed, and stops warren's server: no task holds a database on it.
    const gc = await repo.warrenJson<{ removed: { kind: string }[] }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed.map((r) => r.kind)).toContain('postgres');
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 180_000);

  it('rm --discard dumps the database into the archive, and restore brings it back byte-identical', async () => {
    const repo = dbRepo(DB_YAML);
    expect((await repo.warren('new', 'feat', 'cart')).code).toBe(0);
    const url = (await envOf(repo, 'cart')).DATABASE_URL ?? '';
    expect(
      urlSql(
        url,
        "CREATE TABLE orders (id int PRIMARY KEY, note text); INSERT INTO orders VALUES (1, 'kept'), (2, 'é ünïcode'); UPDATE items SET name = 'uno' WHERE id = 1",
      ).code,
    ).toBe(0);
    const dump = (u: string) => {
      const r = spawnSync(pgBin('pg_dump'), ['--restrict-key=warren', u], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const before = dump(url);
    const db = new URL(url).pathname.slice(1);

    const discard = await repo.warrenJson<{ archive: string }>('rm', 'cart', '--discard');
    expect(discard.code, discard.stderr).toBe(0);
    expect(warrenObjects(repo.home).databases).not.toContain(db);

    const restored = await repo.warren('restore', 'cart');
    expect(restored.code, restored.stderr).toBe(0);
    // restore says what the database was made from, as new does.
    expect(restored.stdout).toMatch(
      new RegExp(`^service db: database ${db} \\(owned by role ${db}\\) from the dump .+ in \\d+ ms$`, 'm'),
    );
    const after = dump((await envOf(repo, 'cart')).DATABASE_URL ?? '');
    expect(after).toBe(before);
    const show = await repo.warrenJson<{ services: { name: string; from: string }[] }>('show', 'cart');
    expect(show.json.services.find((s) => s.name === 'db')?.from).toMatch(/^dump /);
  }, 120_000);

  it("the merge queue's gate runs its setup's migration and the tests against a fresh database of its own, not the task's, and drops it", async () => {
    const seen = path.join(fs.mkdtempSync(path.join(repoTmp(), 'gate-')), 'url');
    const setup = 'setup:\n  - { id: migrate, run: "sh migrate.sh", gate: true }\n';
    const repo = dbRepo(`${DB_YAML}${setup}verify:\n  - { id: test, run: "sh test.sh" }\n`, {
      // A migration the gate runs too (`gate: true`): it must see the gate's database already.
      'migrate.sh': `set -e
${pgBin('psql')} -XAt "$DATABASE_URL" -c "ALTER TABLE items ADD COLUMN IF NOT EXISTS migrated boolean NOT NULL DEFAULT true"
`,
      'test.sh': `set -e
echo "$DATABASE_URL" > ${seen}
n=$(${pgBin('psql')} -XAt "$DATABASE_URL" -c "SELECT count(*) FROM items WHERE migrated")
test "$n" = 2
# The gate's role has its share of the server, as a task's has.
test "$(${pgBin('psql')} -XAt "$DATABASE_URL" -c "SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user")" = 20
${pgBin('psql')} -XAt "$DATABASE_URL" -c "INSERT INTO items (name) VALUES ('written by the gate')"
`,
    });
    expect((await repo.warren('new', 'feat', 'g')).code).toBe(0);
    const url = (await envOf(repo, 'g')).DATABASE_URL ?? '';
    // The task's own data: a gate that used it would count 3.
    expect(urlSql(url, "INSERT INTO items (name) VALUES ('the task''s row')").code).toBe(0);
    const ws = (await repo.warrenJson<{ path: string }>('path', 'g')).json.path;
    fs.writeFileSync(path.join(ws, 'feature.txt'), 'work\n');
    expect((await repo.warren('checkpoint', 'g', '-m', 'work')).code).toBe(0);
    const land = await repo.warrenJson<{ state: string; reason?: string }>('land', 'g');
    expect(land.code, land.stderr + land.stdout).toBe(0);
    expect(land.json.state).toBe('landed');
    const gateUrl = fs.readFileSync(seen, 'utf8').trim();
    expect(gateUrl).toMatch(/^postgresql:/);
    expect(gateUrl).not.toBe(url);
    const gateDb = new URL(gateUrl).pathname.slice(1);
    // The gate's database is gone; the task's kept its rows and has none of the gate's.
    expect(warrenObjects(repo.home).databases).not.toContain(gateDb);
    expect(urlSql(url, 'SELECT count(*) FROM items').out).toBe('3');
    expect(urlSql(url, "SELECT count(*) FROM items WHERE name = 'written by the gate'").out).toBe('0');
  }, 120_000);

  it('a copied .env whose keys name the main checkout’s database is set to the task’s own, and status says which keys', async () => {
    const main =
      'DATABASE_URL=postgresql://me:pw@127.0.0.1:5432/app_dev\n# a comment\nOTHER=kept\nexport REDIS_URL="redis://127.0.0.1:6379"\n';
    const repo = dbRepo(`${DB_YAML}provision:\n  - { path: .env, mode: copy }\n`, { '.gitignore': '.env\n' });
    fs.writeFileSync(path.join(repo.root, '.env'), main);
    expect((await repo.warren('new', 'feat', 'e')).code).toBe(0);
    const url = (await envOf(repo, 'e')).DATABASE_URL ?? '';
    const ws = (await repo.warrenJson<{ path: string }>('path', 'e')).json.path;
    expect(fs.readFileSync(path.join(ws, '.env'), 'utf8')).toBe(
      `DATABASE_URL=${url}\n# a comment\nOTHER=kept\nexport REDIS_URL="redis://127.0.0.1:6379"\n`,
    );
    expect(fs.readFileSync(path.join(repo.root, '.env'), 'utf8')).toBe(main);
    const status = await repo.warrenJson<{ envRewritten: { file: string; keys: string[] }[] }>('status', 'e');
    expect(status.json.envRewritten).toEqual([{ file: '.env', keys: ['DATABASE_URL'] }]);
    expect((await repo.warren('status', 'e')).stdout).toContain(".env: DATABASE_URL set to this task's services");
    const rm = await repo.warren('rm', 'e');
    expect(rm.code, rm.stderr).toBe(0);
  }, 60_000);

  it('setup, verify and exec see the task’s database, never the one warren’s own environment names', async () => {
    const repo = dbRepo(
      `${DB_YAML}setup:\n  - { id: s, run: 'echo "$DATABASE_URL" > setup-saw' }\nverify:\n  - { id: v, run: 'test "$DATABASE_URL" = "$(cat setup-saw)"' }\n`,
    );
    const main = { DATABASE_URL: 'postgresql://me:pw@127.0.0.1:5432/app_dev' };
    const made = await runWarren(['new', 'feat', 'w'], { cwd: repo.root, home: repo.home, env: main });
    expect(made.code, made.stderr).toBe(0);
    const url = (await envOf(repo, 'w')).DATABASE_URL ?? '';
    const ws = (await repo.warrenJson<{ path: string }>('path', 'w')).json.path;
    expect(fs.readFileSync(path.join(ws, 'setup-saw'), 'utf8').trim()).toBe(url);
    const verify = await runWarren(['verify', 'w'], { cwd: repo.root, home: repo.home, env: main });
    expect(verify.code, verify.stderr).toBe(0);
    const exec = await runWarren(['exec', 'w', '--', 'sh', '-c', 'echo "$DATABASE_URL"'], {
      cwd: repo.root,
      home: repo.home,
      env: main,
    });
    expect(exec.stdout.trim()).toBe(url);
  }, 60_000);

  it('a server the user names: databases cloned there from one of its own (template:), dropped by rm; gc leaves the server alone', async () => {
    // The user's server: warren's own cluster of another WARREN_HOME, with a database app_dev.
    const theirs = dbRepo(DB_YAML);
    expect((await theirs.warren('new', 'feat', 'keep')).code).toBe(0);
    adminSql(theirs.home, 'CREATE DATABASE app_dev');
    adminSql(theirs.home, "CREATE TABLE users (name text); INSERT INTO users VALUES ('ada'), ('grace')", 'app_dev');
    const c = cluster(theirs.home);
    const url = `postgres://warren:${c.password}@127.0.0.1:${c.port}/postgres`;

    const repo = dbRepo(`services:\n  db: { kind: postgres, template: app_dev }\n`);
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), `postgres: { url: "${url}" }\n`);
    const made = await repo.warren('new', 'feat', 'u');
    expect(made.code, made.stderr).toBe(0);
    const taskUrl = (await envOf(repo, 'u')).DATABASE_URL ?? '';
    expect(new URL(taskUrl).port).toBe(String(c.port));
    expect(urlSql(taskUrl, 'SELECT count(*) FROM users').out).toBe('2');
    expect(urlSql(taskUrl, "INSERT INTO users VALUES ('linus')").code).toBe(0);
    // Its objects are the task role's: a migration can alter them.
    expect(urlSql(taskUrl, 'ALTER TABLE users ADD COLUMN email text').code).toBe(0);
    expect(adminSql(theirs.home, 'SELECT count(*) FROM users', 'app_dev')).toBe('2');
    const shown = await repo.warrenJson<{ services: { name: string; state: string }[] }>('show', 'u');
    expect(shown.json.services).toMatchObject([{ name: 'db', state: 'external' }]);
    // warren made no cluster of its own.
    expect(fs.existsSync(path.join(repo.home, 'services', 'postgres', 'cluster.json'))).toBe(false);
    const db = new URL(taskUrl).pathname.slice(1);
    expect((await repo.warren('rm', 'u')).code).toBe(0);
    expect(warrenObjects(theirs.home).databases).not.toContain(db);
    expect(warrenObjects(theirs.home).roles).not.toContain(db);
    expect((await repo.warren('gc')).code).toBe(0);
    expect(adminSql(theirs.home, 'SELECT count(*) FROM users', 'app_dev')).toBe('2');
  }, 90_000);

  it('a seed command builds the template once per content of its inputs; a changed seed makes a new one, and show and status say which', async () => {
    const psql = pgBin('psql');
    const repo = dbRepo(
      `services:\n  db:\n    kind: postgres\n    seed: { run: 'for f in migrations/*.sql; do ${psql} -X -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -f "$f" || exit 1; done', inputs: [migrations] }\n`,
      { 'migrations/001.sql': 'CREATE TABLE a (id int);\n' },
    );
    const fromOf = async (id: string): Promise<string> =>
      (await repo.warrenJson<{ services: { from: string }[] }>('show', id)).json.services[0]?.from ?? '';
    for (const id of ['a1', 'a2']) expect((await repo.warren('new', 'feat', id)).code).toBe(0);
    const first = await fromOf('a1');
    expect(first).toMatch(/^template warren_tpl_\w+ \(seed \w{12}\)$/);
    expect(await fromOf('a2')).toBe(first);
    const built = (await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a1')).json.events;
    expect(built.filter((e) => e.kind === 'service.template_built')).toHaveLength(1);
    expect(
      (await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a2')).json.events.map((e) => e.kind),
    ).not.toContain('service.template_built');

    repo.write('migrations/002.sql', 'CREATE TABLE b (id int);\n');
    repo.commit('a migration');
    expect((await repo.warren('new', 'feat', 'b1')).code).toBe(0);
    const second = await fromOf('b1');
    expect(second).not.toBe(first);
    // status says it too: which template, of which seed, each task's database came from.
    for (const [id, from] of [
      ['a1', first],
      ['b1', second],
    ] as const) {
      const status = await repo.warren('status', id);
      expect(status.stdout).toMatch(
        new RegExp(
          `^services:\\n  db  postgres  running  postgresql://127\\.0\\.0\\.1:\\d+/warren_${id}_db_\\w+  database warren_${id}_db_\\w+ from ${from.replace(/[()]/g, '\\$&')}$`,
          'm',
        ),
      );
      const json = await repo.warrenJson<{ services: { name: string; from: string }[] }>('status', id);
      expect(json.json.services).toEqual([expect.objectContaining({ name: 'db', from })]);
    }
    const b1 = (await envOf(repo, 'b1')).DATABASE_URL ?? '';
    const a1 = (await envOf(repo, 'a1')).DATABASE_URL ?? '';
    expect(urlSql(b1, 'SELECT count(*) FROM b').out).toBe('0');
    expect(urlSql(a1, 'SELECT count(*) FROM b').code).not.toBe(0);

    // gc keeps a template a task was cloned from; once none is, the old seed's goes, the current one's stays.
    const tpl = (from: string) => from.split(' ')[1] ?? '';
    expect((await repo.warren('gc')).code).toBe(0);
    expect(warrenObjects(repo.home).databases).toEqual(expect.arrayContaining([tpl(first), tpl(second)]));
    for (const id of ['a1', 'a2', 'b1']) expect((await repo.warren('rm', id)).code).toBe(0);
    expect((await repo.warren('gc')).code).toBe(0);
    expect((await repo.warren('new', 'feat', 'c')).code).toBe(0); // starts the server again, to look
    const left = warrenObjects(repo.home).databases;
    expect(left).not.toContain(tpl(first));
    expect(left).toContain(tpl(second));
  }, 120_000);

  it('a seed that fails refuses new with its error, makes nothing, and the fixed seed builds the template', async () => {
    const repo = dbRepo(DB_YAML, { 'db/schema.sql': `${SCHEMA}INSERT INTO nowhere VALUES (1);\n` });
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'x');
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('CREATE_FAILED');
    expect(r.json.error.message).toContain('the seed of service db failed');
    expect(r.json.error.message).toContain('relation "nowhere" does not exist');
    // The cause is a sentence inside warren's: one full stop before what was undone, not two.
    expect(r.json.error.message).toMatch(/could not be made\. Undone: /);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/x')).toBe('');
    // The half-built template is there (a crash could leave one too); the next new drops it and builds the right one.
    repo.write('db/schema.sql', SCHEMA);
    repo.commit('a seed that works');
    const made = await repo.warren('new', 'feat', 'x');
    expect(made.code).toBe(0);
    // new says what it made for the services, in order.
    const said = made.stdout.split('\n').filter((l) => /template|database|variable/.test(l));
    expect(said).toEqual([
      expect.stringMatching(/^built template warren_tpl_\w+ for service db from its seed \(\w{12}\) in \d+ ms$/),
      expect.stringMatching(
        /^service db: database (warren_x_db_\w+) \(owned by role \1\) from template warren_tpl_\w+ in \d+ ms$/,
      ),
      expect.stringMatching(/^wrote \d+ variable\(s\) to .*\/\.env\.warren \(kept out of git\)$/),
    ]);
    const url = (await envOf(repo, 'x')).DATABASE_URL ?? '';
    expect(urlSql(url, 'SELECT count(*) FROM items').out).toBe('2');
    const database = new URL(url).pathname.slice(1);
    const gone = await repo.warren('rm', 'x');
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain(`dropped database and role ${database}, and checked both are gone`);
    expect(warrenObjects(repo.home).databases.filter((d) => !d.startsWith('warren_tpl_'))).toEqual([]);
  }, 90_000);

  it('a template that does not exist refuses new, naming the key, with nothing made', async () => {
    const repo = dbRepo(`services:\n  db: { kind: postgres, template: app_dev }\n`);
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'x');
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('CONFIG_INVALID');
    expect(r.json.error.message).toContain('services.db.template');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/x')).toBe('');
    expect(warrenObjects(repo.home)).toEqual({ databases: [], roles: [] });
  }, 60_000);

  it('warren’s server killed under a task is reported, and started again by the next command', async () => {
    const repo = dbRepo(DB_YAML);
    expect((await repo.warren('new', 'feat', 'k')).code).toBe(0);
    const daemon = JSON.parse(
      fs.readFileSync(path.join(repo.home, 'services/postgres/daemon/daemon.json'), 'utf8'),
    ) as { pid: number };
    process.kill(daemon.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const show = await repo.warrenJson<{ services: { name: string; state: string }[] }>('show', 'k');
    expect(show.json.services.find((s) => s.name === 'db')?.state).toBe('stopped');
    const run = await repo.warren(
      'exec',
      'k',
      '--',
      'sh',
      '-c',
      `${pgBin('psql')} -XAt "$DATABASE_URL" -c "SELECT count(*) FROM items"`,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('2');
    expect(run.stderr).toMatch(/PostgreSQL server had stopped by itself \(killed\); it was started again/);
    const events = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'k');
    expect(events.json.events.map((e) => e.kind)).toContain('service.server_restarted');
  }, 90_000);
});

describe.skipIf(noPostgres || noRedis)('redis and a dev server per task', () => {
  const WEB = `services:
  cache: { kind: redis }
  web:
    run: [node, server.js]
    ready: { http: /health, timeout: 20s }
`;
  const SERVER = `const http = require('node:http');
const port = Number(process.env.WARREN_PORT);
http.createServer((req, res) => { res.end(req.url === '/health' ? 'ok' : 'port ' + port + ' redis ' + process.env.REDIS_URL); }).listen(port, '127.0.0.1');
console.log('listening on', port);
`;

  it('start with the task, ready by HTTP, on ports of its block; their variables reach exec; nothing listens after rm', async () => {
    const repo = dbRepo(WEB, { 'server.js': SERVER });
    const made = await repo.warren('new', 'feat', 'web');
    expect(made.code, made.stderr).toBe(0);
    const env = await envOf(repo, 'web');
    const first = Number(env.WARREN_PORT);
    const webPort = Number(env.WARREN_SERVICE_WEB_PORT);
    const redisPort = Number(env.WARREN_SERVICE_CACHE_PORT);
    // From the top of the block down; WARREN_PORT stays the task's own.
    expect(redisPort).toBe(first + 9);
    expect(webPort).toBe(first + 8);
    // new says what it started, and where.
    expect(made.stdout).toMatch(
      new RegExp(`^service cache started on port ${redisPort}, ready in \\d+ ms \\(log .+\\)$`, 'm'),
    );
    expect(made.stdout).toMatch(
      new RegExp(`^service web started on port ${webPort}, ready in \\d+ ms \\(log .+\\)$`, 'm'),
    );
    const page = await (await fetch(`http://127.0.0.1:${webPort}/`)).text();
    expect(page).toBe(`port ${webPort} redis ${env.REDIS_URL}`);
    const ping = await repo.warren(
      'exec',
      'web',
      '--',
      'sh',
      '-c',
      'redis-cli --no-auth-warning -u "$REDIS_URL" SET k v && redis-cli --no-auth-warning -u "$REDIS_URL" GET k',
    );
    expect(ping.stdout.trim().split('\n')).toEqual(['OK', 'v']);
    // Without its password redis refuses.
    const anon = spawnSync('redis-cli', ['-p', String(redisPort), 'GET', 'k'], { encoding: 'utf8' });
    expect(anon.stdout).toMatch(/NOAUTH/);
    // The .env.warren for processes warren does not start, kept out of git.
    const ws = (await repo.warrenJson<{ path: string }>('path', 'web')).json.path;
    expect(fs.readFileSync(path.join(ws, '.env.warren'), 'utf8')).toContain(`REDIS_URL=${env.REDIS_URL}`);
    expect(repo.git('-C', ws, 'status', '--porcelain')).toBe('');

    const show = await repo.warrenJson<{ services: { name: string; state: string; url: string; log: string }[] }>(
      'show',
      'web',
    );
    expect(show.json.services.map((s) => [s.name, s.state])).toEqual([
      ['cache', 'running'],
      ['web', 'running'],
    ]);
    expect(fs.readFileSync(show.json.services[1]?.log ?? '', 'utf8')).toContain(`listening on ${webPort}`);

    const gone = await repo.warrenJson<{ services: string[] }>('rm', 'web');
    expect(gone.code).toBe(0);
    expect(gone.json.services.sort()).toEqual(['service cache stopped', 'service web stopped']);
    expect(listening(webPort)).toBe(false);
    expect(listening(redisPort)).toBe(false);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 90_000);

  it('a crash is a state and an event; service start starts it again; service stop stops it', async () => {
    const repo = dbRepo(WEB, { 'server.js': SERVER });
    expect((await repo.warren('new', 'feat', 'c')).code).toBe(0);
    const env = await envOf(repo, 'c');
    const webPort = Number(env.WARREN_SERVICE_WEB_PORT);
    /** A service's wrapper process (daemon.json), which warren judges the service alive by. */
    const wrapperOf = (name: string): number =>
      (
        JSON.parse(
          fs.readFileSync(
            path.join(
              repo.home,
              'services',
              fs.readdirSync(path.join(repo.home, 'services')).find((d) => d !== 'postgres') ?? '',
              'c',
              name,
              'daemon.json',
            ),
            'utf8',
          ),
        ) as { pid: number }
      ).pid;
    const record = { pid: wrapperOf('web') };
    // Once a killed service's wrapper has ended (a fixed pause is too short on a loaded machine).
    const ended = (pid: number) => expect.poll(() => isAlive(pid)).toBe(false);
    // Kill the server process itself (inside the namespace): the service ends by itself.
    const ws = (await repo.warrenJson<{ path: string }>('path', 'c')).json.path;
    const inner = fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((p) => {
        try {
          return (
            p !== record.pid &&
            fs.readFileSync(`/proc/${p}/cmdline`, 'utf8') === 'node\0server.js\0' &&
            fs.readlinkSync(`/proc/${p}/cwd`) === ws
          );
        } catch {
          return false;
        }
      });
    expect(inner).toHaveLength(1);
    for (const p of inner) process.kill(p, 'SIGKILL');
    await ended(record.pid);
    const shown = await repo.warrenJson<{ services: { name: string; state: string }[]; events: { kind: string }[] }>(
      'show',
      'c',
    );
    expect(shown.json.services.find((s) => s.name === 'web')?.state).toBe('crashed');
    const again = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'c');
    expect(again.json.events.filter((e) => e.kind === 'service.crashed')).toHaveLength(1);
    expect(listening(webPort)).toBe(false);
    // A crashed dev server waits for a request: a command run in the task does not start it again.
    expect((await repo.warren('exec', 'c', '--', 'true')).code).toBe(0);
    expect(listening(webPort)).toBe(false);

    // A redis killed under the task is reported, and started again by the next command that runs in it.
    const redisPort = Number(env.WARREN_SERVICE_CACHE_PORT);
    const redis = fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((p) => {
        try {
          const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
          // redis-server names itself `redis-server 127.0.0.1:PORT` (its init's command line is `sh -c …`).
          return argv[0]?.includes('redis-server') === true && argv[0].includes(`:${redisPort}`);
        } catch {
          return false;
        }
      });
    expect(redis).toHaveLength(1);
    const redisWrapper = wrapperOf('cache');
    for (const p of redis) process.kill(p, 'SIGKILL');
    await ended(redisWrapper);
    const ping = await repo.warren('exec', 'c', '--', 'sh', '-c', 'redis-cli --no-auth-warning -u "$REDIS_URL" PING');
    expect(ping.stdout.trim()).toBe('PONG');
    expect(ping.stderr).toMatch(/service cache \(started .*\) had ended by itself/);
    const after = await repo.warrenJson<{ events: { kind: string; name?: string }[] }>('show', 'c');
    expect(after.json.events.filter((e) => e.kind === 'service.crashed').map((e) => e.name)).toEqual(['web', 'cache']);

    const start = await repo.warrenJson<{ state: string }>('service', 'start', 'c', 'web');
    expect(start.code, start.stderr).toBe(0);
    expect(start.json.state).toBe('running');
    expect(await (await fetch(`http://127.0.0.1:${webPort}/health`)).text()).toBe('ok');
    const stop = await repo.warrenJson<{ state: string }>('service', 'stop', 'c', 'web');
    expect(stop.json.state).toBe('stopped');
    expect(listening(webPort)).toBe(false);
    const logs = await repo.warren('service', 'logs', 'c', 'web');
    expect(logs.stdout).toContain('listening on');
    // --follow prints what the service writes next, until ctrl-c.
    const follow = startCli(['service', 'logs', 'c', 'web', '--follow'], { cwd: repo.root, home: repo.home });
    let seen = '';
    follow.child.stdout?.on('data', (d: Buffer) => (seen += d.toString()));
    const until = async (text: string): Promise<void> => {
      for (let i = 0; i < 100 && !seen.includes(text); i++) await new Promise((r) => setTimeout(r, 100));
    };
    await until('listening on');
    const starts = (): number => seen.split('── warren: starting web').length - 1;
    const before = starts();
    expect(before).toBe(2); // started with the task, and again after its crash
    expect((await repo.warrenJson<{ state: string }>('service', 'start', 'c', 'web')).json.state).toBe('running');
    for (let i = 0; i < 100 && starts() === before; i++) await new Promise((r) => setTimeout(r, 100));
    expect(starts()).toBe(before + 1);
    follow.child.kill('SIGINT');
    expect((await follow.done).code).toBe(0);
    expect((await repo.warrenJson<{ state: string }>('service', 'stop', 'c', 'web')).json.state).toBe('stopped');
    const unknown = await repo.warrenJson<{ error: { code: string } }>('service', 'start', 'c', 'nope');
    expect(unknown.json.error.code).toBe('SERVICE_UNKNOWN');
  }, 90_000);

  it('a service that never becomes ready fails new with its log, and what started is stopped', async () => {
    const repo = dbRepo(
      `services:
  cache: { kind: redis }
  web: { run: "echo booting; echo broken config >&2; sleep 29.731", ready: { http: /health, timeout: 1s } }
`,
    );
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'bad');
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('CREATE_FAILED');
    expect(r.json.error.message).toMatch(/service web of task bad did not start: it was not ready within 1s/);
    expect(r.json.error.message).toContain('broken config');
    // The cause is a sentence inside warren's: one full stop, not two.
    expect(r.json.error.message).toMatch(/[^.]\. Undone: /);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(livingDaemons(repo.home)).toEqual([]);
    // A sleep of a length no other test uses: nothing of the service is left anywhere.
    expect(spawnSync('pgrep', ['-f', 'sleep 29.731']).status).not.toBe(0);
  }, 60_000);

  it('a redis-server that is not installed refuses new before anything is made, saying what to install', async () => {
    const repo = dbRepo('services:\n  cache: { kind: redis }\n');
    // A PATH with what warren needs and no redis-server.
    const bin = path.join(repoTmp(), 'bin');
    fs.mkdirSync(bin);
    for (const tool of ['git', 'sh', 'unshare', 'setpriv'])
      fs.symlinkSync(
        spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(),
        path.join(bin, tool),
      );
    const r = await runWarren(['--json', 'new', 'feat', 'x'], { cwd: repo.root, home: repo.home, env: { PATH: bin } });
    const error = (JSON.parse(r.stdout) as { error: { code: string; message: string; hint: string } }).error;
    expect(r.code).toBe(1);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.hint).toContain('apt-get install redis-server');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/x')).toBe('');
  });

  it('an on-demand service waits for service start', async () => {
    const repo = dbRepo('services:\n  cache: { kind: redis, start: on-demand }\n');
    expect((await repo.warren('new', 'feat', 'od')).code).toBe(0);
    const port = Number((await envOf(repo, 'od')).WARREN_SERVICE_CACHE_PORT);
    expect(listening(port)).toBe(false);
    // Its port taken by something else: refused, naming the service and the port, nothing started.
    const squatter = net.createServer().listen(port, '127.0.0.1');
    await new Promise((r) => squatter.once('listening', r));
    const clash = await repo.warrenJson<{ error: { code: string; message: string } }>(
      'service',
      'start',
      'od',
      'cache',
    );
    squatter.close();
    expect(clash.code).toBe(1);
    expect(clash.json.error.code).toBe('SERVICE_FAILED');
    expect(clash.json.error.message).toContain(`service cache of task od cannot start: its port ${port} is taken`);
    expect(livingDaemons(repo.home)).toEqual([]);
    const started = await repo.warrenJson<{ state: string }>('service', 'start', 'od', 'cache');
    expect(started.json.state).toBe('running');
    expect(listening(port)).toBe(true);
    expect((await repo.warren('rm', 'od')).code).toBe(0);
    expect(listening(port)).toBe(false);
  }, 60_000);

  it('more services than the port block holds is refused before anything is made, naming the key', async () => {
    const repo = dbRepo(`ports: { count: 2 }\nservices:\n  a: { kind: redis }\n  b: { run: "sleep 1" }\n`);
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'p');
    expect(r.code).toBe(2);
    expect(r.json.error.message).toContain('services.b');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
  });
});

const noBwrap = noRedis ?? unavailable(import.meta.filename, 'bwrap');

describe.skipIf(noBwrap)('a sandboxed task and its services', () => {
  it('reaches its own services by their loopback ports, and no other task’s', async () => {
    const repo = dbRepo(
      `sandbox: bwrap
services:
  cache: { kind: redis }
  web: { run: "exec python3 -m http.server $WARREN_PORT --bind 127.0.0.1", ready: { http: / } }
`,
    );
    for (const id of ['a', 'b']) {
      const r = await repo.warren('new', 'feat', id);
      expect(r.code, r.stderr).toBe(0);
    }
    const other = await envOf(repo, 'b');
    const get = (url: string) =>
      `python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).status)" ${url}`;
    const own = await repo.warren(
      'exec',
      'a',
      '--',
      'sh',
      '-c',
      `redis-cli --no-auth-warning -u "$REDIS_URL" PING && ${get('"$WARREN_SERVICE_WEB_URL/"')}`,
    );
    expect(own.code, own.stderr + own.stdout).toBe(0);
    expect(own.stdout.trim().split('\n')).toEqual(['PONG', '200']);
    const theirs = await repo.warren('exec', 'a', '--', 'sh', '-c', get(`${other.WARREN_SERVICE_WEB_URL}/`));
    expect(theirs.code).not.toBe(0);
    const theirRedis = await repo.warren(
      'exec',
      'a',
      '--',
      'sh',
      '-c',
      `redis-cli --no-auth-warning -u '${other.REDIS_URL}' PING`,
    );
    expect(theirRedis.stdout).not.toContain('PONG');
    // Each service's host keeps its sandbox's egress proxy in a folder named for this WARREN_HOME,
    // so that this home's `gc` collects what a killed host left; stopped, each host removes its own.
    const proxies = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(egressPrefix(repo.home)));
    expect(proxies()).toHaveLength(4);
    for (const id of ['a', 'b']) expect((await repo.warren('rm', id, '--discard')).code).toBe(0);
    expect(proxies()).toEqual([]);
  }, 90_000);
});

describe('services in warren.yaml', () => {
  it('rewriteDotenv sets only the keys it is given, keeping every other line', () => {
    expect(rewriteDotenv('A=1\n export B = "x y"\n#C=3\nD=4', { B: 'new value', C: 'no', D: '4' })).toEqual({
      text: 'A=1\n export B = "new value"\n#C=3\nD=4',
      keys: ['B'],
    });
  });

  it.each([
    ['an unknown kind', 'services:\n  db: { kind: mysql }\n', 'services.db.kind: an unknown kind'],
    [
      'a server to connect to',
      'services:\n  db: { kind: postgres, url: "postgres://x@prod/db" }\n',
      "services.db.url: a repository's warren.yaml may not name a server",
    ],
    ['a bad readiness check', 'services:\n  web: { run: x, ready: { tcp: 1 } }\n', 'services.web.ready'],
    [
      'template and seed both',
      'services:\n  db: { kind: postgres, template: a, seed: { sql: x.sql } }\n',
      'services.db.seed: template and seed',
    ],
  ])('%s is CONFIG_INVALID naming the key, nothing made', async (_what, yaml, message) => {
    const repo = makeRepo({ files: { 'warren.yaml': yaml } });
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'x');
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('CONFIG_INVALID');
    expect(r.json.error.message).toContain(message);
    expect(repo.git('branch', '--list', 'feat/x')).toBe('');
  });

  it('services are commands the user trusts: a changed one needs trust again', async () => {
    const repo = makeRepo({ files: { 'warren.yaml': 'services:\n  web: { run: "sleep 100" }\n' }, trusted: false });
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'x');
    expect(r.json.error.code).toBe('UNTRUSTED_COMMANDS');
    expect(r.json.error.message).toContain('sleep 100');
  });
});
