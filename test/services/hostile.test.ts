import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loopbackConnections, orphanSessions } from '../../src/services/pg-sessions.js';
import { parseConfig, parseUserConfig } from '../../src/config/validate.js';
import { isWarrenError } from '../../src/errors.js';
import { CAPS, DEFAULT_LIMITS, resolveLimits } from '../../src/services/pg-limits.js';
import { unavailable } from '../helpers/capabilities.js';
import { startCli } from '../helpers/procs.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { adminSql, pgBin, stopServicesAfter, urlSql } from '../helpers/services.js';

/**
 * A task's database against an agent that means harm, on warren's own cluster: what the agent
 * put in it is data at `restore` (loaded as the task's own role, never a superuser), and one
 * task cannot take the server's connections from the others (its role's CONNECTION LIMIT), nor
 * keep sessions running after its run (client_connection_check_interval) or a statement past
 * its role's statement_timeout.
 */

const noPostgres = unavailable(import.meta.filename, 'postgres');

function dbRepo(yaml: string): TestRepo {
  const repo = makeRepo({ files: { 'warren.yaml': yaml } });
  repo.trust();
  stopServicesAfter(repo.home);
  return repo;
}

async function urlOf(repo: TestRepo, id: string): Promise<string> {
  const r = await repo.warrenJson<{ env: Record<string, string> }>('env', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json.env.DATABASE_URL ?? '';
}

/** Sessions of `role` on warren's cluster (its own queries, not the admin's). */
function sessionsOf(repo: TestRepo, role: string, where = 'true'): number {
  return Number(adminSql(repo.home, `SELECT count(*) FROM pg_stat_activity WHERE usename = '${role}' AND ${where}`));
}

describe("a database role's limits: what warren.yaml asks, held to the user's caps", () => {
  it.each([
    ['nothing asked, no caps: the defaults', undefined, undefined, DEFAULT_LIMITS, []],
    [
      'asked within the caps',
      undefined,
      { connections: 30, statement_timeout: '30s' },
      { ...DEFAULT_LIMITS, connections: 30, statementTimeoutMs: 30_000 },
      [],
    ],
    [
      'asked above the default caps: the caps, each named',
      undefined,
      { connections: 500, idle_in_transaction_timeout: '2h' },
      { ...DEFAULT_LIMITS, connections: CAPS.connections, idleInTransactionMs: CAPS.idleInTransactionMs },
      ['connections', 'idle_in_transaction_timeout'],
    ],
    [
      "the user's caps below the defaults lower them",
      { connections: 5, statement_timeout: '1m' },
      undefined,
      { ...DEFAULT_LIMITS, connections: 5, statementTimeoutMs: 60_000 },
      [],
    ],
    [
      "the user's caps above the default caps let a repository ask for more",
      { connections: 150, statement_timeout: '3h' },
      { connections: 120, statement_timeout: '2h' },
      { ...DEFAULT_LIMITS, connections: 120, statementTimeoutMs: 2 * 3_600_000 },
      [],
    ],
  ] as const)('%s', (_what, caps, asked, limits, capped) => {
    const got = resolveLimits(caps, asked);
    expect(got.limits).toEqual({ ...DEFAULT_LIMITS, ...limits });
    expect(got.capped.map((c) => c.key)).toEqual(capped);
  });

  it('a bad value is CONFIG_INVALID naming its key, in warren.yaml and in config.yaml', () => {
    for (const [text, key] of [
      ['services:\n  db: { kind: postgres, limits: { connections: 0 } }\n', 'services.db.limits.connections'],
      [
        'services:\n  db: { kind: postgres, limits: { statement_timeout: 0s } }\n',
        'services.db.limits.statement_timeout',
      ],
      ['services:\n  db: { kind: postgres, limits: { memory: 1 } }\n', 'services.db.limits'],
    ] as const) {
      const err = (() => {
        try {
          return parseConfig(text);
        } catch (e) {
          return e;
        }
      })();
      expect(isWarrenError(err, 'CONFIG_INVALID') && err.message).toContain(key);
    }
    expect(parseUserConfig('postgres: { limits: { connections: 80 } }\n', 'config.yaml').postgres?.limits).toEqual({
      connections: 80,
    });
    expect(() => parseUserConfig('postgres: { limits: { connections: -1 } }\n', 'config.yaml')).toThrow(
      /postgres\.limits\.connections/,
    );
  });
});

describe('sessions whose client has gone (pure)', () => {
  const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:3C8C 0100007F:C350 08 00000000:00000000 00:00000000 00000000  1000        0 1 1 0
   1: 0100007F:3C8C 0100007F:C351 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0
   2: 0100007F:C351 0100007F:3C8C 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0
   3: 0A000001:3C8C 0100007F:C352 08 00000000:00000000 00:00000000 00000000  1000        0 4 1 0
`;
  it('reads loopback connections, and ends a session whose server end is CLOSE_WAIT or gone, never an established one', () => {
    const conns = loopbackConnections(TABLE);
    expect(conns).toEqual([
      { local: 15500, remote: 50000, state: '08' },
      { local: 15500, remote: 50001, state: '01' },
      { local: 50001, remote: 15500, state: '01' },
    ]);
    const sessions = [
      { pid: 1, clientPort: 50000 },
      { pid: 2, clientPort: 50001 },
      { pid: 3, clientPort: 50002 },
    ];
    expect(orphanSessions(sessions, 15500, conns)).toEqual([1, 3]);
  });
});

describe.skipIf(noPostgres)("a task's database is data, and no task starves another's", () => {
  it('rm --discard and restore run as the task role: a CHECK calling COPY … TO PROGRAM runs no command; what the role cannot read fails the rm', async () => {
    const repo = dbRepo('services:\n  db: { kind: postgres }\n');
    // A folder the server's user (not root, or uid 65534) could write into, were it asked to.
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-hostile-')));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.chmodSync(dir, 0o777);
    const marker = path.join(dir, 'marker');
    const made = await Promise.all(['evil', 'loud', 'rls'].map((id) => repo.warren('new', 'feat', id)));
    expect(made.map((r) => r.code)).toEqual([0, 0, 0]);

    // evil: as the task's role the COPY is refused (and swallowed, so the row goes in); as a
    // superuser it would run `touch` as the server's OS user.
    const planted = urlSql(
      await urlOf(repo, 'evil'),
      `CREATE FUNCTION pwn(int) RETURNS boolean LANGUAGE plpgsql AS $f$
       BEGIN
         COPY (SELECT 1) TO PROGRAM 'touch ${marker}';
         RETURN true;
       EXCEPTION WHEN insufficient_privilege THEN RETURN true;
       END $f$;
       CREATE TABLE loot (id int PRIMARY KEY CHECK (pwn(id)), note text);
       INSERT INTO loot VALUES (1, 'kept');`,
    );
    expect(planted.code, planted.err).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    const discard = await repo.warren('rm', 'evil', '--discard');
    expect(discard.code, discard.stderr).toBe(0);
    const restored = await repo.warren('restore', 'evil');
    expect(fs.existsSync(marker)).toBe(false);
    expect(restored.code, restored.stderr).toBe(0);
    const after = await urlOf(repo, 'evil');
    expect(urlSql(after, 'SELECT note FROM loot').out).toBe('kept');
    // Every object of the restored database is the task role's.
    const role = new URL(after).username;
    expect(adminSql(repo.home, "SELECT tableowner FROM pg_tables WHERE tablename = 'loot'", role)).toBe(role);
    expect(adminSql(repo.home, "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'pwn'", role)).toBe(role);

    // loud: the same COPY, let through only when warren loads the dump (psql's application_name
    // is warren's then): the restore fails, saying why, and still no command ran.
    const loud = urlSql(
      await urlOf(repo, 'loud'),
      `CREATE FUNCTION pwn(int) RETURNS boolean LANGUAGE plpgsql AS $f$
       BEGIN
         IF current_setting('application_name') <> 'warren' THEN RETURN true; END IF;
         COPY (SELECT 1) TO PROGRAM 'touch ${marker}';
         RETURN true;
       END $f$;
       CREATE TABLE loot (id int CHECK (pwn(id)));
       INSERT INTO loot VALUES (1);`,
    );
    expect(loud.code, loud.err).toBe(0);
    expect((await repo.warren('rm', 'loud', '--discard')).code).toBe(0);
    const refused = await repo.warren('restore', 'loud');
    expect(fs.existsSync(marker)).toBe(false);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/could not be loaded as the task's own role .*COPY to or from an external program/);
    expect(refused.stderr).toMatch(/the dump is kept as it was/);

    // rls: row security forced on the table's owner too, so pg_dump (row_security off) may not
    // read it as the task's role: rm --discard fails, saying why, with nothing removed.
    const rls = await urlOf(repo, 'rls');
    const forced = urlSql(
      rls,
      `CREATE TABLE secret (id int); INSERT INTO secret VALUES (1);
       ALTER TABLE secret ENABLE ROW LEVEL SECURITY; ALTER TABLE secret FORCE ROW LEVEL SECURITY;
       CREATE POLICY none ON secret USING (false);`,
    );
    expect(forced.code, forced.err).toBe(0);
    const kept = await repo.warren('rm', 'rls', '--discard');
    expect(kept.code).toBe(1);
    expect(kept.stderr).toMatch(/could not be dumped as the task's own role .*row-level security/);
    expect((await repo.warren('path', 'rls')).code).toBe(0);
    expect(adminSql(repo.home, 'SELECT count(*) FROM secret', new URL(rls).username)).toBe('1');
    // No half dump was left for a restore to take.
    const archive = path.join(repo.home, 'services');
    const dumps = fs.readdirSync(archive, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('rls'));
    expect(dumps.filter((f) => f.endsWith('.sql'))).toEqual([]);
  }, 180_000);

  it("a task's connections stop at its role's limit while another task still connects; its sessions end with its run; statement_timeout is the role's", async () => {
    const repo = dbRepo('services:\n  db: { kind: postgres, limits: { connections: 3, statement_timeout: 1s } }\n');
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    expect((await repo.warren('new', 'feat', 'b')).code).toBe(0);
    const a = new URL(await urlOf(repo, 'a')).username;
    const b = await urlOf(repo, 'b');
    expect(adminSql(repo.home, `SELECT rolconnlimit FROM pg_roles WHERE rolname = '${a}'`)).toBe('3');

    // The role's session defaults: its statement timeout (from warren.yaml), and the ones every
    // role warren makes gets (an idle transaction ends; so does a query whose client is gone).
    expect(urlSql(b, 'SHOW statement_timeout').out).toBe('1s');
    const slow = urlSql(b, 'SELECT pg_sleep(30)');
    expect(slow.code).not.toBe(0);
    expect(slow.err).toMatch(/canceling statement due to statement timeout/);
    expect(urlSql(b, 'SHOW idle_in_transaction_session_timeout').out).toBe('10min');
    expect(urlSql(b, 'SHOW client_connection_check_interval').out).toBe('5s');

    // Six sleeping clients in a's run (each sets the statement timeout away: a session may),
    // which the run's timeout ends.
    const psql = pgBin('psql');
    const run = startCli(
      [
        'exec',
        'a',
        '--timeout',
        '20s',
        '--',
        'sh',
        '-c',
        `for i in 1 2 3 4 5 6; do ${psql} -X "$DATABASE_URL" -c 'SET statement_timeout = 0' -c 'SELECT pg_sleep(600)' & done; wait`,
      ],
      { cwd: repo.root, home: repo.home },
    );
    await expect.poll(() => sessionsOf(repo, a, "query LIKE '%pg_sleep%'"), { timeout: 15_000 }).toBe(3);
    // While a holds every connection its role may have, b connects and queries.
    expect(urlSql(b, 'SELECT 41 + 1').out).toBe('42');
    expect(sessionsOf(repo, a, "query LIKE '%pg_sleep%'")).toBe(3);

    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(124);
    // The three it could not open were refused by PostgreSQL for the role's limit.
    const refused = (ended.stdout + ended.stderr).split('too many connections for role').length - 1;
    expect(refused, ended.stdout + ended.stderr).toBe(3);
    // The run is over: its backends notice their clients are gone and end (not after pg_sleep's 600 s).
    await expect.poll(() => sessionsOf(repo, a), { timeout: 60_000 }).toBe(0);

    // Clients of a outside any run (a shell of the user's) hold all of its connections: rm
    // --discard's dump, as a's role, ends them to get one, and the rm ends every session of it.
    const aUrl = await urlOf(repo, 'a');
    const holders = [1, 2, 3].map(() =>
      spawn(psql, ['-X', aUrl, '-c', 'SET statement_timeout = 0', '-c', 'SELECT pg_sleep(600)'], { stdio: 'ignore' }),
    );
    onTestFinished(() => {
      for (const h of holders) h.kill('SIGKILL');
    });
    const exited = holders.map((h) => new Promise((resolve) => h.once('exit', resolve)));
    await expect.poll(() => sessionsOf(repo, a, "query LIKE '%pg_sleep%'")).toBe(3);
    const discard = await repo.warren('rm', 'a', '--discard');
    expect(discard.code, discard.stderr).toBe(0);
    await Promise.all(exited);
    expect(sessionsOf(repo, a)).toBe(0);
  }, 180_000);

  it('a session that turns off the check on its client still ends with its run; one whose client lives on is left alone', async () => {
    const repo = dbRepo('services:\n  db: { kind: postgres }\n');
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    const aUrl = await urlOf(repo, 'a');
    const a = new URL(aUrl).username;
    const psql = pgBin('psql');
    // A client of a's role outside any run (a dev server's pool would be one): alive throughout.
    const holder = spawn(psql, ['-X', aUrl, '-c', 'SELECT pg_sleep(600) -- holder'], { stdio: 'ignore' });
    onTestFinished(() => void holder.kill('SIGKILL'));
    await expect.poll(() => sessionsOf(repo, a, "query LIKE '%-- holder%'")).toBe(1);
    // The run's client turns the role's settings off, as a session may, and sleeps; the run ends by its timeout.
    const ended = await repo.warren(
      'exec',
      'a',
      '--timeout',
      '3s',
      '--',
      'sh',
      '-c',
      `${psql} -X "$DATABASE_URL" -c 'SET client_connection_check_interval = 0' -c 'SET statement_timeout = 0' -c 'SELECT pg_sleep(600) -- run'`,
    );
    expect(ended.code).toBe(124);
    // Ended by warren once the run was over (not by pg_sleep's 600 s, which the session made the only end).
    await expect.poll(() => sessionsOf(repo, a, "query LIKE '%-- run%'"), { timeout: 10_000 }).toBe(0);
    expect(sessionsOf(repo, a, "query LIKE '%-- holder%'")).toBe(1);
    const events = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'a');
    expect(events.json.events.map((e) => e.kind)).toContain('service.sessions_ended');
  }, 120_000);
});
