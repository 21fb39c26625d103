import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProject, openStore } from '../src/composition.js';
import { queueLand } from '../src/queue/operations.js';
import {
  SEED,
  adapt,
  killWindow,
  killedSoFar,
  leftBehind,
  noServiceOfAGoneTask,
  noCommitLost,
  reachable,
  report,
  runKilledAt,
  scaled,
  seeded,
  strays,
  type Trial,
  whatHappened,
} from './helpers/random-kill.js';
import { makeRepo, type TestRepo } from './helpers/repo.js';
import { unavailable } from './helpers/capabilities.js';
import { stopServicesAfter } from './helpers/services.js';
import { fullTierOnly } from './helpers/tier.js';

/**
 * `warren land` and the merge queue's processor (`warren queue work`) killed at random instants
 * (test/helpers/random-kill.ts): each trial must end recoverable by the next commands alone —
 * the repair, `gc`, and the same command again — with every task landed exactly once, no commit
 * lost, no stray, mount or held lock. The counts are printed and written to
 * artifacts/random-kills-land.md and artifacts/random-kills-queue.md.
 */

/** Kills each command must take (trials go on until then; a kill that came after the command ended is no kill). */
const KILLS = { land: 35, queue: 25 };

async function ok(repo: TestRepo, ...args: string[]): Promise<void> {
  const r = await repo.warren(...args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** A task with one commit of its own, `FILE.txt`, ready to land. */
async function taskWithWork(repo: TestRepo, id: string): Promise<void> {
  await ok(repo, 'new', 'feat', id);
  const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
  fs.writeFileSync(path.join(ws, `${id}.txt`), `${id}\n`);
  await ok(repo, 'checkpoint', id, '-m', `work ${id}`);
}

/** Landed exactly once: its file on main, one commit of that subject in main's history. */
function landedOnce(repo: TestRepo, id: string, problems: string[]): void {
  if (!fs.existsSync(path.join(repo.root, `${id}.txt`))) problems.push(`${id}.txt is not on main`);
  const subjects = repo.git('log', '--format=%s', 'main').split('\n');
  const times = subjects.filter((s) => s === `work ${id}`).length;
  if (times !== 1) problems.push(`${id} landed ${times} time(s)`);
}

async function stateOf(repo: TestRepo, id: string): Promise<string | null> {
  const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
  return list.json.find((t) => t.id === id)?.state ?? null;
}

/**
 * `warren land` of a task with work, killed at a random instant within the window a full land
 * takes here (calibrated first); after each, the next commands alone — `gc`, the same land again
 * when it did not land — must leave it landed once, nothing lost, no stray, nothing left, and a
 * removable task. `after` adds checks of its own.
 */
async function landKilled(
  repo: TestRepo,
  o: { seed: number; kills: number; prefix: string },
  after: (problems: string[]) => Promise<void> = async () => undefined,
): Promise<Trial[]> {
  await taskWithWork(repo, 'calibrate');
  const full = await runKilledAt(repo, ['land', 'calibrate'], null);
  expect(full.code, full.stderr).toBe(0);
  await ok(repo, 'rm', 'calibrate', '--delete-branch');
  const window = await killWindow(repo, full.ms);
  const random = seeded(o.seed);
  const trials: Trial[] = [];
  for (let n = 0; killedSoFar(trials, 'land') < scaled(o.kills) && n < scaled(o.kills) * 3; n++) {
    const id = `${o.prefix}${n}`;
    await taskWithWork(repo, id);
    const before = reachable(repo.root);
    const delayMs = Math.round(window.from + random() * (window.to - window.from));
    const run = await runKilledAt(repo, ['land', id], delayMs);
    adapt(window, run);
    const problems: string[] = [];
    await ok(repo, 'gc');
    // The same command again, when the task did not land: it joins (or finds its entry) and lands.
    if ((await stateOf(repo, id)) !== 'landed') {
      const again = await repo.warren('land', id);
      if (again.code !== 0) problems.push(`land again: ${again.stderr.trim()}`);
    }
    landedOnce(repo, id, problems);
    noCommitLost(repo.root, before, problems);
    await strays(repo, problems);
    leftBehind(repo, problems);
    // A landed task goes without a word, its branch too.
    const removed = await repo.warren('rm', id, '--delete-branch');
    if (removed.code !== 0)
      problems.push(`rm of the landed task (${await stateOf(repo, id)}): ${removed.stderr.trim()}`);
    await after(problems);
    if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
    trials.push({ op: 'land', n, delayMs, killed: run.killed, problems });
  }
  return trials;
}

describe.skipIf(fullTierOnly(import.meta.filename, 'the random-kill trials'))('killed at a random instant', () => {
  it(
    `warren land, killed ${KILLS.land} times: after the next commands each task is landed exactly once and nothing is lost or left`,
    { timeout: 900_000 },
    async () => {
      const repo = makeRepo();
      const trials = await landKilled(repo, { seed: SEED + 2, kills: KILLS.land, prefix: 'l' });
      report('random-kills-land', trials);
      expect(trials.filter((t) => t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'land')).toBe(scaled(KILLS.land));
    },
  );

  it(
    `the merge queue's processor, killed ${KILLS.queue} times: two entries and a gate; after the next commands both are landed once, nothing lost or left`,
    { timeout: 900_000 },
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# queue\n',
          'warren.yaml': 'verify:\n  - { id: ok, run: "test -f README.md" }\nland: { gate: [ok] }\n',
        },
      });
      const store = openStore(repo.home);
      const join = async (...ids: string[]): Promise<void> => {
        const ctx = await openProject(repo.root, { store });
        for (const id of ids) await queueLand(ctx, id, { wait: false });
      };
      try {
        await taskWithWork(repo, 'ca');
        await taskWithWork(repo, 'cb');
        await join('ca', 'cb');
        const full = await runKilledAt(repo, ['queue', 'work'], null);
        expect(full.code, full.stderr).toBe(0);
        const window = await killWindow(repo, full.ms);
        const random = seeded(SEED + 3);
        const trials: Trial[] = [];
        for (let n = 0; killedSoFar(trials, 'queue') < scaled(KILLS.queue) && n < scaled(KILLS.queue) * 3; n++) {
          const [a, b] = [`qa${n}`, `qb${n}`];
          await taskWithWork(repo, a);
          await taskWithWork(repo, b);
          await join(a, b);
          const before = reachable(repo.root);
          const delayMs = Math.round(window.from + random() * (window.to - window.from));
          const run = await runKilledAt(repo, ['queue', 'work'], delayMs);
          adapt(window, run);
          const problems: string[] = [];
          await ok(repo, 'gc');
          // What `warren queue` starts in the background when nobody works the queue.
          const again = await repo.warren('queue', 'work');
          if (again.code !== 0) problems.push(`queue work again: ${again.stderr.trim()}`);
          for (const id of [a, b]) {
            const state = await stateOf(repo, id);
            if (state !== 'landed') problems.push(`${id} is ${state}`);
            else landedOnce(repo, id, problems);
          }
          noCommitLost(repo.root, before, problems);
          await strays(repo, problems);
          leftBehind(repo, problems);
          for (const id of [a, b]) {
            const removed = await repo.warren('rm', id, '--delete-branch');
            if (removed.code !== 0) problems.push(`rm of ${id} (${await stateOf(repo, id)}): ${removed.stderr.trim()}`);
          }
          if (problems.length > 0) problems.push(whatHappened(repo, a, run.stderr));
          trials.push({ op: 'queue', n, delayMs, killed: run.killed, problems });
        }
        report('random-kills-queue', trials);
        expect(trials.filter((t) => t.problems.length > 0)).toEqual([]);
        expect(killedSoFar(trials, 'queue')).toBe(scaled(KILLS.queue));
      } finally {
        store.close();
      }
    },
  );
});

/**
 * The same for `land` with services in the tasks (issue 36): the gate starts the integrated
 * commit's redis and dev server, in the gate's bwrap sandbox, before verify. A kill anywhere must
 * leave no gate's service running once the next commands ran, and the task landed exactly once.
 */
const LAND_SERVICE_KILLS = 8;
const noServices =
  fullTierOnly(import.meta.filename, 'the random-kill trials') ??
  unavailable(import.meta.filename, 'redis') ??
  unavailable(import.meta.filename, 'bwrap');

describe.skipIf(noServices)('killed at a random instant, with services in the gate', () => {
  it(
    `warren land with a redis and a sandboxed dev server in the gate, killed ${LAND_SERVICE_KILLS} times: landed once, no gate's service left running`,
    { timeout: 900_000 },
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# kills with services\n',
          'server.js':
            "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.WARREN_PORT), '127.0.0.1');\n",
          'warren.yaml': `sandbox: bwrap
services:
  cache: { kind: redis, start: always }
  web: { run: [node, server.js], ready: { port: true, timeout: 30s }, start: always }
verify:
  - { id: test, run: "true" }
`,
        },
      });
      stopServicesAfter(repo.home);
      const trials = await landKilled(
        repo,
        { seed: SEED + 4, kills: LAND_SERVICE_KILLS, prefix: 'g' },
        async (problems) => {
          await ok(repo, 'gc');
          await noServiceOfAGoneTask(repo, problems);
        },
      );
      report('random-kills-land-services', trials);
      expect(trials.filter((t) => t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'land')).toBe(scaled(LAND_SERVICE_KILLS));
    },
  );
});
