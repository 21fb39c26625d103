import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { objectsOfProject } from '../../src/services/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import { startCli } from '../helpers/procs.js';
import { makeRepo } from '../helpers/repo.js';
import { livingDaemons, stopServicesAfter, urlSql, warrenObjects } from '../helpers/services.js';
import { fullTierOnly } from '../helpers/tier.js';

/**
 * warren killed (SIGKILL) at random instants while `new` makes a task's database, redis and dev
 * server, and while `rm` takes them away: whatever is left, the next commands (the repair every
 * command starts with, `rm` of what is still a task, and `gc`) clear it, and nothing is left on
 * the PostgreSQL server, in the ledger or running.
 */

const noPostgres = unavailable(import.meta.filename, 'postgres');
const noRedis = unavailable(import.meta.filename, 'redis');
const longMatrix = fullTierOnly(import.meta.filename, 'kills at random instants during new and rm');

const YAML = `services:
  db: { kind: postgres, seed: { sql: schema.sql } }
  cache: { kind: redis }
  web: { run: "exec python3 -m http.server $WARREN_PORT --bind 127.0.0.1", ready: { port: true } }
`;

/** Where to kill: spread over the span a `new` takes here (~1-3 s), with a random part (printed, to reproduce). */
function instants(n: number, spanMs: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.round((spanMs * i) / n + Math.random() * (spanMs / n)));
}

describe.skipIf(noPostgres || noRedis || longMatrix)('services under kills', () => {
  it('kills at random instants during new and rm leave nothing gc cannot clear', async () => {
    const repo = makeRepo({
      files: { 'warren.yaml': YAML, 'schema.sql': 'CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);\n' },
    });
    repo.trust();
    stopServicesAfter(repo.home);
    // The server and the template exist already for most kills (as on a machine in use); the first kills land before.
    const newKills = instants(6, 1800);
    const rmKills = instants(4, 700);
    console.log(`services-crash: new killed after ${newKills.join(', ')} ms; rm after ${rmKills.join(', ')} ms`);
    for (const [i, ms] of newKills.entries()) {
      const cli = startCli(['new', 'feat', `n${i}`], { cwd: repo.root, home: repo.home });
      await new Promise((r) => setTimeout(r, ms));
      cli.child.kill('SIGKILL');
      await cli.done;
    }
    // Some tasks that were made whole, for rm to be killed under.
    for (const i of rmKills.keys()) {
      const r = await repo.warren('new', 'feat', `r${i}`);
      expect(r.code, r.stderr).toBe(0);
    }
    for (const [i, ms] of rmKills.entries()) {
      const cli = startCli(['rm', `r${i}`], { cwd: repo.root, home: repo.home });
      await new Promise((r) => setTimeout(r, ms));
      cli.child.kill('SIGKILL');
      await cli.done;
    }

    // The next command repairs what was cut off; what is still a task is removed; gc collects the rest.
    const gc1 = await repo.warren('gc');
    expect(gc1.code, gc1.stderr).toBe(0);
    const left = await repo.warrenJson<{ id: string; state: string }[]>('list');
    console.log(`services-crash: after repair: ${left.json.map((t) => `${t.id} ${t.state}`).join(', ') || 'no task'}`);
    // A task that is kept (an rm settled back) has its database: it is dropped only past rm's point of no return.
    for (const t of left.json.filter((x) => x.state === 'ready')) {
      const env = await repo.warrenJson<{ env: Record<string, string> }>('env', t.id);
      expect(urlSql(env.json.env.DATABASE_URL ?? '', 'SELECT count(*) FROM t').out, t.id).toBe('1');
    }
    for (const t of left.json) {
      const rm = await repo.warren('rm', t.id);
      expect(rm.code, `${t.id} (${t.state}): ${rm.stderr}`).toBe(0);
    }
    const gc2 = await repo.warren('gc');
    expect(gc2.code, gc2.stderr).toBe(0);

    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    // Only the template of the current seed is left, as gc keeps it; no task database or role, nothing running.
    const store = openStore(repo.home);
    const key = store.listProjects()[0]?.key ?? '';
    const ledger = objectsOfProject(store, key);
    store.close();
    expect(ledger.filter((r) => r.taskId !== null)).toEqual([]);
    const templates = [...new Set(ledger.map((r) => r.name))];
    expect(templates.length).toBeLessThanOrEqual(1);
    expect(livingDaemons(repo.home)).toEqual([]);
    // The server is stopped; start it through a command that needs nothing of it to look: a new task, then compare.
    const probe = await repo.warren('new', 'feat', 'probe');
    expect(probe.code, probe.stderr).toBe(0);
    const objects = warrenObjects(repo.home);
    const probeDb = objects.databases.filter((d) => !templates.includes(d));
    expect(probeDb).toHaveLength(1);
    expect(objects.roles.filter((r) => !templates.includes(r))).toEqual(probeDb);
    expect((await repo.warren('rm', 'probe')).code).toBe(0);
    expect((await repo.warren('gc')).code).toBe(0);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 300_000);
});
