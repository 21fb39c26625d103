import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { makeRepo, type TestRepo } from './helpers/repo.js';
import { adminSql, stopServicesAfter, urlSql } from './helpers/services.js';

/**
 * A task's database against an agent that means harm, on warren's own cluster: what the agent
 * put in it is data at `rm --discard` and `restore` (dumped and loaded as the task's own role,
 * never a superuser).
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

describe.skipIf(noPostgres)("a task's database is data", () => {
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
});
