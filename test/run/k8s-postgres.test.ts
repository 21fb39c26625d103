import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimPlace } from '../../src/run/k8s/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import {
  claimedSince,
  claimNames,
  claimsSent,
  clusterForFile,
  eventsOf,
  POD_PROCESSES,
  podmanHas,
  projectOf,
} from '../helpers/k8s-cluster.js';
import { adminSql, stopServicesAfter } from '../helpers/services.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * A postgres service of a task in a cluster is a PostgreSQL server of the task's own in its pod
 * (src/services/pg-pod.ts, src/run/k8s/pod-postgres.ts), against the loopback API server of
 * test/helpers/k8s-server.ts. Its pods run as uid 70, as a template's `runAsUser` makes a real
 * one (PostgreSQL refuses root; a root pod is refused: test/run/k8s-runner-flag.test.ts), and bind
 * this machine's /usr: its PostgreSQL 15 is theirs. They share the host's network, so each task's
 * server listens on a port of the task's block (in a real cluster a pod's loopback is its own).
 */
const noPodman = unavailable(import.meta.filename, 'podman') ?? unavailable(import.meta.filename, 'postgres');

const cluster = clusterForFile(noPodman, { user: '70:70' });

const PSQL = '/usr/lib/postgresql/15/bin/psql';

function clusterRepo(seed: string, more = '', db = '{ kind: postgres, seed: { sql: seed.sql } }'): TestRepo {
  const repo = makeRepo({
    files: {
      'README.md': '# main\n',
      'seed.sql': seed,
      'warren.yaml': `runner: k8s:loop\nservices:\n  db: ${db}\n${more}`,
    },
  });
  fs.mkdirSync(repo.home, { recursive: true });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    replicas: 1\n`,
  );
  return repo;
}

// `once` holds a token of the seed's run: the same in two databases when the seed ran once.
const SEED =
  "CREATE TABLE notes (v text);\nINSERT INTO notes VALUES ('from the seed');\nCREATE TABLE once AS SELECT md5(random()::text) AS token;\n";

/** In the pod: a statement through DATABASE_URL, its rows one a line. */
const sql = (statement: string): string[] => ['sh', '-c', `${PSQL} "$DATABASE_URL" -X -q -At -c "${statement}"`];

/** In the pod: the command lines of its processes. */
type Status = { name: string; state: string; cluster?: string; pod?: string; url: string | null; database?: string };

describe.skipIf(noPodman !== null)(
  "a postgres service of a task in a cluster: a server of the task's own in its pod",
  () => {
    it(
      "new makes it in the pod from the seed; the pod's commands reach it; two tasks apart; stopped, started; rm --discard keeps the dump here",
      { timeout: 600_000 },
      async () => {
        const repo = clusterRepo(SEED);
        const a = await repo.warren('new', 'feat', 'a');
        expect(a.code, a.stderr).toBe(0);
        const b = await repo.warren('new', 'feat', 'b');
        expect(b.code, b.stderr).toBe(0);
        // The seed ran once, in a's pod; b's database was loaded from what it made, kept here.
        const created = eventsOf(repo.home, 'service.database_created').map((e) => e.message);
        expect(created[0]).toContain('its seed, run in the pod');
        expect(created[1]).toContain("its seed's database (kept from its first run");
        const tokenA = await repo.warren('exec', 'a', '--', ...sql('SELECT token FROM once'));
        const tokenB = await repo.warren('exec', 'b', '--', ...sql('SELECT token FROM once'));
        expect(tokenA.stdout).toMatch(/^[0-9a-f]{32}\n$/);
        expect(tokenB.stdout).toBe(tokenA.stdout);

        // A command in the pod reaches it on the pod's loopback, with the seed's data.
        const seen = await repo.warren('exec', 'a', '--', ...sql('SELECT v FROM notes'));
        expect(seen.code, seen.stderr).toBe(0);
        expect(seen.stdout).toBe('from the seed\n');
        const url = await repo.warren('exec', 'a', '--', 'sh', '-c', 'echo "$DATABASE_URL"');
        expect(url.stdout).toMatch(/^postgresql:\/\/warren_a_db_[0-9a-f]+:[0-9a-f]+@127\.0\.0\.1:\d+\/warren_a_db_/);
        // Its server runs in the pod, as the pod's user.
        const inPod = await repo.warren('exec', 'a', '--', ...POD_PROCESSES);
        expect(inPod.stdout).toMatch(/postgres -D \/work\/postgres\/warren_a_db_\w+\/data/);
        const shown = await repo.warrenJson<{ services: Status[] }>('show', 'a');
        const db = shown.json.services.find((s) => s.name === 'db');
        expect(db).toMatchObject({ state: 'running', cluster: 'loop' });
        expect(db?.pod).toBeTruthy();

        // Two tasks' databases are apart: what a writes, b does not see.
        expect((await repo.warren('exec', 'a', '--', ...sql("INSERT INTO notes VALUES ('only in a')"))).code).toBe(0);
        const other = await repo.warren('exec', 'b', '--', ...sql('SELECT v FROM notes ORDER BY v'));
        expect(other.stdout).toBe('from the seed\n');
        const mine = await repo.warren('exec', 'a', '--', ...sql('SELECT v FROM notes ORDER BY v'));
        expect(mine.stdout).toBe('from the seed\nonly in a\n');

        // Stopped: nothing of it left in the pod; started again: its data is still there.
        const stopped = await repo.warrenJson<Status>('service', 'stop', 'a', 'db');
        expect(stopped.code, stopped.stderr).toBe(0);
        expect(stopped.json.state).toBe('stopped');
        const gone = await repo.warren('exec', 'a', '--', ...POD_PROCESSES);
        expect(gone.stdout).not.toContain('postgres -D');
        const started = await repo.warrenJson<Status>('service', 'start', 'a', 'db');
        expect(started.code, started.stderr).toBe(0);
        expect(started.json.state).toBe('running');
        expect((await repo.warren('exec', 'a', '--', ...sql('SELECT count(*) FROM notes'))).stdout).toBe('2\n');

        // rm --discard: the database dumped in the pod and kept here; the claim and its pod gone.
        const pod = db?.pod ?? '';
        const { name: claim } = claimPlace(repo.home, projectOf(repo.home), 'a');
        const removed = await repo.warren('rm', 'a', '--discard');
        expect(removed.code, removed.stderr).toBe(0);
        const archive = path.join(repo.home, 'services', projectOf(repo.home), '.archive', 'a');
        const stamps = fs.readdirSync(archive);
        expect(stamps).toHaveLength(1);
        const dump = fs.readFileSync(path.join(archive, stamps[0] ?? '', 'db.sql'), 'utf8');
        expect(dump).toContain('only in a');
        expect(claimNames(cluster())).not.toContain(claim);
        expect(podmanHas(pod)).toBe(false);
        expect(fs.existsSync(path.join(repo.home, 'services', projectOf(repo.home), 'a'))).toBe(false);

        // restore: the task again, its database loaded from that dump in its new pod.
        const restored = await repo.warren('restore', 'a');
        expect(restored.code, restored.stderr).toBe(0);
        const back = await repo.warren('exec', 'a', '--', ...sql('SELECT v FROM notes ORDER BY v'));
        expect(back.stdout).toBe('from the seed\nonly in a\n');

        for (const id of ['a', 'b']) expect((await repo.warren('rm', id)).code).toBe(0);
        expect(claimNames(cluster())).toEqual([]);
        // The seed's kept database goes with `gc` once the seed changed and no task was made from it.
        const seeded = path.join(repo.home, 'services', projectOf(repo.home), '.seeded');
        expect(fs.readdirSync(seeded)).toHaveLength(1);
        expect((await repo.warren('gc')).code).toBe(0);
        expect(fs.readdirSync(seeded)).toHaveLength(1);
        repo.write('seed.sql', 'CREATE TABLE other (v text);\n');
        repo.commit('another seed');
        const gc = await repo.warren('gc');
        expect(gc.code, gc.stderr).toBe(0);
        expect(fs.readdirSync(seeded)).toEqual([]);
      },
    );

    it(
      'a seed that fails in the pod fails new with its error: the task undone, its claim and pod gone',
      { timeout: 300_000 },
      async () => {
        const repo = clusterRepo('CREATE TABLE notes (v text);\nINSERT INTO nowhere VALUES (1);\n');
        const before = claimsSent(cluster());
        const made = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 's');
        expect(made.code).toBe(1);
        expect(made.json.error.code, made.json.error.message).toBe('CREATE_FAILED');
        expect(made.json.error.message).toContain('the seed of service db failed');
        expect(made.json.error.message).toContain('relation "nowhere" does not exist');
        expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
        const claimed = claimedSince(cluster(), before);
        expect(claimed).toHaveLength(1);
        expect(claimNames(cluster())).not.toContain(claimed[0]);
        expect(fs.existsSync(path.join(repo.home, 'services', projectOf(repo.home), 's'))).toBe(false);
      },
    );

    it(
      "the merge queue's gate of the batch runs in a claim of its own, with a server of its own in its pod, seeded there",
      { timeout: 300_000 },
      async () => {
        // Passes only against a database made from the seed: the gate's own, in its pod.
        const check = `test "$(${PSQL} "$DATABASE_URL" -X -q -At -c 'SELECT v FROM notes')" = 'from the seed' && test "$(pwd)" = /work/task`;
        const repo = clusterRepo(SEED, `verify:\n  - { id: db, run: '${check.replace(/'/g, "''")}' }\n`);
        const made = await repo.warren('new', 'feat', 'g');
        expect(made.code, made.stderr).toBe(0);
        expect((await repo.warren('exec', 'g', '--', 'sh', '-c', 'echo g > g.txt')).code).toBe(0);
        expect((await repo.warren('checkpoint', 'g', '-m', 'work of g')).code).toBe(0);
        const before = new Set(claimNames(cluster()));
        const landed = await repo.warren('land', 'g');
        expect(landed.code, `${landed.stdout}\n${landed.stderr}`).toBe(0);
        // In a claim of the cluster, not here (no queue.gate_here), and its claim gone after.
        expect(eventsOf(repo.home, 'queue.gate_here')).toEqual([]);
        const gate = eventsOf(repo.home, 'queue.gate').at(-1);
        expect(gate?.data).toMatchObject({ passed: true, sandbox: 'k8s:loop' });
        expect(claimNames(cluster()).filter((c) => !before.has(c))).toEqual([]);
        const left = fs
          .readdirSync(path.join(repo.home, 'services', projectOf(repo.home)))
          .filter((n) => n.startsWith('queue-'));
        expect(left).toEqual([]);
        expect((await repo.warren('rm', 'g')).code).toBe(0);
      },
    );

    it(
      'a seed command runs in the pod, with DATABASE_URL naming the database there',
      { timeout: 300_000 },
      async () => {
        const repo = clusterRepo(
          `${PSQL} "$DATABASE_URL" -X -q -c "CREATE TABLE ran (at text); INSERT INTO ran VALUES ('$(pwd)')"\n`,
          '',
          "{ kind: postgres, seed: { run: 'sh seed.sql' } }",
        );
        const made = await repo.warren('new', 'feat', 'r');
        expect(made.code, made.stderr).toBe(0);
        const seen = await repo.warren('exec', 'r', '--', ...sql('SELECT at FROM ran'));
        expect(seen.stdout).toBe('/work/task\n');
        expect((await repo.warren('rm', 'r')).code).toBe(0);
      },
    );

    it(
      "a template database of the server here is dumped here and loaded in the task's pod; one that takes no connection is refused",
      { timeout: 300_000 },
      async () => {
        // A local task starts warren's server here; a database of it is then the template a task
        // in the cluster (`--runner`) names.
        const repo = clusterRepo(SEED);
        stopServicesAfter(repo.home);
        repo.write('warren.yaml', 'services:\n  db: { kind: postgres }\n');
        repo.commit('here');
        expect((await repo.warren('new', 'feat', 'l')).code).toBe(0);
        adminSql(repo.home, 'CREATE DATABASE shop');
        adminSql(repo.home, "CREATE TABLE notes (v text); INSERT INTO notes VALUES ('from the template')", 'shop');
        repo.write('warren.yaml', 'services:\n  db: { kind: postgres, template: shop }\n');
        repo.commit('the template');
        const made = await repo.warren('new', 'feat', 't', '--runner', 'k8s:loop');
        expect(made.code, made.stderr).toBe(0);
        const seen = await repo.warren('exec', 't', '--', ...sql('SELECT v FROM notes'));
        expect(seen.stdout).toBe('from the template\n');
        expect((await repo.warren('exec', 't', '--', 'pwd')).stdout).toBe('/work/task\n');
        // A template that takes no connection cannot be dumped: said, before any claim.
        adminSql(repo.home, 'ALTER DATABASE shop WITH ALLOW_CONNECTIONS false');
        const before = claimsSent(cluster());
        const refused = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
          'new',
          'feat',
          'u',
          '--runner',
          'k8s:loop',
        );
        expect(refused.code).toBe(1);
        expect(refused.json.error.message).toContain('template shop takes no connection');
        expect(refused.json.error.hint).toContain('ALLOW_CONNECTIONS true');
        expect(claimsSent(cluster())).toBe(before);
        for (const id of ['t', 'l']) expect((await repo.warren('rm', id)).code).toBe(0);
      },
    );
  },
);
