import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { objectsOfProject } from '../../src/services/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import { NOBODY, nobodyRepo, shellAsNobody } from '../helpers/nobody.js';
import { BIN } from '../helpers/repo.js';
import { listening, livingDaemons, pgBin, stopServicesAfter, urlSql, warrenObjects } from '../helpers/services.js';

/**
 * The services as a user who is not root (uid 65534, its own WARREN_HOME): warren's PostgreSQL
 * cluster runs as that user, tasks made at once get databases of their own from one template,
 * roles cannot cross, a discard and a restore give the same dump, redis and a dev server run
 * and end with the task, and nothing is left.
 */

const noNobody = unavailable(import.meta.filename, 'nobody');
const noPostgres = noNobody ?? unavailable(import.meta.filename, 'postgres');
const noRedis = noPostgres ?? unavailable(import.meta.filename, 'redis');

const YAML = `services:
  db: { kind: postgres, seed: { sql: schema.sql } }
  cache: { kind: redis }
  web: { run: "exec python3 -m http.server $WARREN_PORT --bind 127.0.0.1", ready: { http: / } }
`;

function uidOf(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'));
  return Number(line?.split(/\s+/)[1]);
}

describe.skipIf(noRedis)('services as uid 65534', () => {
  it('databases from one template for tasks made at once, isolated; discard → restore identical; everything ends with the tasks', async () => {
    const repo = nobodyRepo((root) => {
      fs.writeFileSync(path.join(root, 'warren.yaml'), YAML);
      fs.writeFileSync(
        path.join(root, 'schema.sql'),
        'CREATE TABLE items (id int);\nINSERT INTO items VALUES (1), (2);\n',
      );
    });
    stopServicesAfter(repo.home);
    const ids = ['a', 'b', 'c'];
    // At once: three real processes of uid 65534.
    const made = await Promise.all(
      ids.map(
        (id) =>
          new Promise<number>((resolve) => {
            const vars = [`HOME=${repo.home}`, `WARREN_HOME=${repo.home}`, 'GIT_CONFIG_NOSYSTEM=1'];
            const argv = [
              `--reuid=${NOBODY}`,
              `--regid=${NOBODY}`,
              '--clear-groups',
              'env',
              ...vars,
              process.execPath,
              BIN,
              'new',
              'feat',
              id,
            ];
            execFile('setpriv', argv, { cwd: repo.root }, (err, _stdout, stderr) => {
              if (err) console.error(stderr);
              resolve(err ? ((err as { code?: number }).code ?? 1) : 0);
            });
          }),
      ),
    );
    expect(made).toEqual([0, 0, 0]);
    // The server runs as uid 65534, not root.
    const server = JSON.parse(
      fs.readFileSync(path.join(repo.home, 'services/postgres/daemon/daemon.json'), 'utf8'),
    ) as {
      pid: number;
    };
    expect(uidOf(server.pid)).toBe(NOBODY);
    const postgres = spawnSync('pgrep', ['-u', String(NOBODY), '-f', `postgres -D ${repo.home}`], { encoding: 'utf8' });
    expect(postgres.stdout.trim()).not.toBe('');

    const envs = ids.map((id) => repo.json<{ env: Record<string, string> }>(['env', id]).env);
    const urls = envs.map((e) => e.DATABASE_URL ?? '');
    // A migration in a, from a plain shell of uid 65534 that read the task's .env.warren.
    const ws = repo.json<{ path: string }>(['path', 'a']).path;
    const shell = shellAsNobody(
      ws,
      `set -a; . ./.env.warren; ${pgBin('psql')} -X -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "ALTER TABLE items ADD COLUMN x int; INSERT INTO items VALUES (3, 3)"`,
    );
    expect(shell.code, shell.stderr).toBe(0);
    expect(urlSql(urls[0] ?? '', 'SELECT count(*) FROM items').out).toBe('3');
    expect(urlSql(urls[1] ?? '', 'SELECT count(*) FROM items').out).toBe('2');
    const crossed = new URL(urls[1] ?? '');
    crossed.pathname = new URL(urls[0] ?? '').pathname;
    expect(urlSql(crossed.toString(), 'SELECT 1').code).not.toBe(0);

    // Discard and restore a: the same dump.
    const dump = (u: string): string => {
      const r = spawnSync(pgBin('pg_dump'), ['--restrict-key=warren', u], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const before = dump(urls[0] ?? '');
    expect(repo.warren(['rm', 'a', '--discard']).code).toBe(0);
    expect(repo.warren(['restore', 'a']).code).toBe(0);
    expect(dump(repo.json<{ env: Record<string, string> }>(['env', 'a']).env.DATABASE_URL ?? '')).toBe(before);

    const webPort = Number(envs[1]?.WARREN_SERVICE_WEB_PORT);
    expect((await fetch(`http://127.0.0.1:${webPort}/`)).status).toBe(200);
    for (const id of ids) {
      const rm = repo.warren(['rm', id]);
      expect(rm.code, rm.stderr).toBe(0);
    }
    expect(listening(webPort)).toBe(false);
    const left = warrenObjects(repo.home);
    expect(left.databases.filter((d) => !d.startsWith('warren_tpl_'))).toEqual([]);
    expect(left.roles.filter((d) => !d.startsWith('warren_tpl_'))).toEqual([]);
    expect(repo.warren(['gc']).code).toBe(0);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 240_000);

  it('warren of uid 65534 killed at random instants in new and rm: the next commands clear everything', async () => {
    const repo = nobodyRepo((root) => {
      fs.writeFileSync(
        path.join(root, 'warren.yaml'),
        'services:\n  db: { kind: postgres }\n  cache: { kind: redis }\n',
      );
    });
    stopServicesAfter(repo.home);
    const killedAfter = async (args: string[], ms: number): Promise<void> => {
      const vars = [`HOME=${repo.home}`, `WARREN_HOME=${repo.home}`, 'GIT_CONFIG_NOSYSTEM=1'];
      const child = spawn(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', ...vars, process.execPath, BIN, ...args],
        {
          cwd: repo.root,
          stdio: 'ignore',
        },
      );
      const done = new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, ms));
      child.kill('SIGKILL');
      await done;
    };
    const at = (span: number) => Math.round(200 + Math.random() * span);
    const newKills = [at(600), at(1200), at(2000)];
    const rmKills = [at(400), at(900)];
    console.log(`services-nonroot: new killed after ${newKills.join(', ')} ms; rm after ${rmKills.join(', ')} ms`);
    for (const [i, ms] of newKills.entries()) await killedAfter(['new', 'feat', `n${i}`], ms);
    for (const i of rmKills.keys()) {
      const made = repo.warren(['new', 'feat', `r${i}`]);
      expect(made.code, made.stderr).toBe(0);
    }
    for (const [i, ms] of rmKills.entries()) await killedAfter(['rm', `r${i}`], ms);

    expect(repo.warren(['gc']).code).toBe(0);
    for (const t of repo.json<{ id: string }[]>(['list'])) {
      const rm = repo.warren(['rm', t.id]);
      expect(rm.code, rm.stderr).toBe(0);
    }
    expect(repo.warren(['gc']).code).toBe(0);
    const store = openStore(repo.home);
    const ledger = objectsOfProject(store, store.listProjects()[0]?.key ?? '');
    store.close();
    expect(ledger).toEqual([]);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 240_000);

  it('the gate of uid 65534 tests against a fresh database of its own, then drops it', () => {
    const repo = nobodyRepo((root) => {
      fs.writeFileSync(
        path.join(root, 'warren.yaml'),
        'services:\n  db: { kind: postgres, seed: { sql: schema.sql } }\nverify:\n  - { id: test, run: "sh test.sh" }\n',
      );
      fs.writeFileSync(
        path.join(root, 'schema.sql'),
        'CREATE TABLE items (id int);\nINSERT INTO items VALUES (1), (2);\n',
      );
      fs.writeFileSync(
        path.join(root, 'test.sh'),
        `set -e\necho "$DATABASE_URL" > gate-url\ntest "$(${pgBin('psql')} -XAt "$DATABASE_URL" -c "SELECT count(*) FROM items")" = 2\n`,
      );
    });
    stopServicesAfter(repo.home);
    expect(repo.warren(['new', 'feat', 'g']).code).toBe(0);
    const url = repo.json<{ env: Record<string, string> }>(['env', 'g']).env.DATABASE_URL ?? '';
    expect(urlSql(url, 'INSERT INTO items VALUES (3)').code).toBe(0);
    const ws = repo.json<{ path: string }>(['path', 'g']).path;
    expect(shellAsNobody(ws, 'echo work > feature.txt').code).toBe(0);
    expect(repo.warren(['checkpoint', 'g', '-m', 'work']).code).toBe(0);
    const land = repo.warren(['--json', 'land', 'g']);
    expect(land.code, land.stderr + land.stdout).toBe(0);
    expect((JSON.parse(land.stdout) as { state: string }).state).toBe('landed');
    expect(urlSql(url, 'SELECT count(*) FROM items').out).toBe('3');
    const databases = warrenObjects(repo.home).databases.filter((d) => !d.startsWith('warren_tpl_'));
    expect(databases).toEqual([new URL(url).pathname.slice(1)]);
    expect(repo.warren(['rm', 'g']).code).toBe(0);
    expect(repo.warren(['gc']).code).toBe(0);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 240_000);
});
