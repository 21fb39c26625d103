import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SEED,
  adapt,
  killWindow,
  killedSoFar,
  leftBehind,
  noServiceOfAGoneTask,
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
 * `warren new` and `warren rm` killed at random instants (test/helpers/random-kill.ts): each
 * trial must end recoverable by the next commands alone — the repair, then `gc` — with no orphan
 * branch, no stranded folder, mount or lock, and the same command then succeeding. The counts
 * are printed and written to artifacts/random-kills-new-rm.md.
 */

/** Kills each command must take (trials go on until then; a kill that came after the command ended is no kill). */
const KILLS = { new: 75, rm: 65 };

function repoForKills(): TestRepo {
  // A setup command, so that `new` has a supervised step to be killed in too.
  return makeRepo({
    files: {
      'README.md': '# kills\n',
      '.gitignore': '.setup-ran\n',
      'warren.yaml': 'setup:\n  - { id: mark, run: "touch .setup-ran" }\n',
    },
  });
}

async function ok(repo: TestRepo, ...args: string[]): Promise<void> {
  const r = await repo.warren(...args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

async function taskState(repo: TestRepo, id: string): Promise<string | null> {
  const list = await repo.warrenJson<{ id: string; state: string }[]>('list');
  return list.json.find((t) => t.id === id)?.state ?? null;
}

describe.skipIf(fullTierOnly(import.meta.filename, 'the random-kill trials'))('killed at a random instant', () => {
  const trials: Trial[] = [];

  it(
    `warren new, killed ${KILLS.new} times: the next commands leave no orphan branch, folder, mount or lock, and new succeeds`,
    { timeout: 600_000 },
    async () => {
      const repo = repoForKills();
      const full = await runKilledAt(repo, ['new', 'feat', 'calibrate'], null);
      expect(full.code, full.stderr).toBe(0);
      await ok(repo, 'rm', 'calibrate', '--delete-branch');
      const window = await killWindow(repo, full.ms);
      const random = seeded(SEED);
      for (let n = 0; killedSoFar(trials, 'new') < scaled(KILLS.new) && n < scaled(KILLS.new) * 3; n++) {
        const id = `n${n}`;
        const delayMs = Math.round(window.from + random() * (window.to - window.from));
        const run = await runKilledAt(repo, ['new', 'feat', id], delayMs);
        adapt(window, run);
        const problems: string[] = [];
        // The next command repairs what the kill left (any command does, on opening the project); gc clears the rest.
        await ok(repo, 'gc');
        await strays(repo, problems);
        leftBehind(repo, problems);
        const state = await taskState(repo, id);
        const branch = repo.git('branch', '--list', `feat/${id}`);
        if (state === null) {
          if (branch !== '') problems.push(`orphan branch feat/${id} with no task`);
          // The same command succeeds.
          const again = await repo.warren('new', 'feat', id);
          if (again.code !== 0) problems.push(`new again: ${again.stderr.trim()}`);
        } else if (state !== 'ready') {
          problems.push(`task ${id} left ${state}`);
        }
        if ((await taskState(repo, id)) === 'ready' && !fs.existsSync(path.join(repo.home, 'worktrees')))
          problems.push('no workspace root');
        if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
        trials.push({ op: 'new', n, delayMs, killed: run.killed, problems });
        await repo.warren('rm', id, '--delete-branch');
      }
      report(
        'random-kills-new',
        trials.filter((t) => t.op === 'new'),
      );
      expect(trials.filter((t) => t.op === 'new' && t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'new')).toBe(scaled(KILLS.new));
    },
  );

  it(
    `warren rm, killed ${KILLS.rm} times: the task is removed or removable, nothing is left behind, and work is never lost`,
    { timeout: 600_000 },
    async () => {
      const repo = repoForKills();
      await ok(repo, 'new', 'feat', 'calibrate');
      const full = await runKilledAt(repo, ['rm', 'calibrate', '--delete-branch'], null);
      expect(full.code, full.stderr).toBe(0);
      const window = await killWindow(repo, full.ms);
      const random = seeded(SEED + 1);
      for (let n = 0; killedSoFar(trials, 'rm') < scaled(KILLS.rm) && n < scaled(KILLS.rm) * 3; n++) {
        const id = `r${n}`;
        await ok(repo, 'new', 'feat', id);
        // Work that landed nowhere but on a second branch: rm --delete-branch may delete the task's branch, never the work.
        const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
        fs.writeFileSync(path.join(ws, 'work.txt'), `${id}\n`);
        await ok(repo, 'checkpoint', id, '-m', `work ${id}`);
        const work = repo.git('rev-parse', `feat/${id}`);
        repo.git('branch', `keep-${id}`, work);
        const delayMs = Math.round(window.from + random() * (window.to - window.from));
        const run = await runKilledAt(repo, ['rm', id, '--delete-branch'], delayMs);
        adapt(window, run);
        const problems: string[] = [];
        await ok(repo, 'gc');
        const state = await taskState(repo, id);
        if (state !== null) {
          // Not gone: then `rm` must finish it.
          const again = await repo.warren('rm', id, '--delete-branch');
          if (again.code !== 0) problems.push(`rm again (task ${state}): ${again.stderr.trim()}`);
        }
        await strays(repo, problems);
        leftBehind(repo, problems);
        if ((await taskState(repo, id)) !== null) problems.push(`task ${id} still listed`);
        if (fs.existsSync(ws)) problems.push(`folder ${ws} left`);
        if (repo.git('branch', '--list', `feat/${id}`) !== '') problems.push(`branch feat/${id} left`);
        if (repo.git('rev-parse', `keep-${id}`) !== work) problems.push(`work ${work.slice(0, 12)} lost`);
        if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
        trials.push({ op: 'rm', n, delayMs, killed: run.killed, problems });
      }
      report(
        'random-kills-rm',
        trials.filter((t) => t.op === 'rm'),
      );
      expect(trials.filter((t) => t.op === 'rm' && t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'rm')).toBe(scaled(KILLS.rm));
    },
  );
});

/**
 * The same, with services in the tasks (issue 36: every process of a task through one runner):
 * a redis and a dev server per task, both in the task's bwrap sandbox (the dev server behind
 * warren's service host). A kill anywhere in `new` or `rm` must leave no service running for a
 * task that is gone, and the next commands must leave the task ready with its services, or gone.
 */
const SERVICE_KILLS = { new: 10, rm: 8 };
const noServices =
  fullTierOnly(import.meta.filename, 'the random-kill trials') ??
  unavailable(import.meta.filename, 'redis') ??
  unavailable(import.meta.filename, 'bwrap');

function repoWithServices(): TestRepo {
  const repo = makeRepo({
    files: {
      'README.md': '# kills with services\n',
      'server.js':
        "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.WARREN_PORT), '127.0.0.1');\n",
      'warren.yaml': `sandbox: bwrap
services:
  cache: { kind: redis }
  web: { run: [node, server.js], ready: { port: true, timeout: 30s } }
`,
    },
  });
  stopServicesAfter(repo.home);
  return repo;
}

describe.skipIf(noServices)('killed at a random instant, with services in the tasks', () => {
  const trials: Trial[] = [];

  it(
    `warren new with a redis and a sandboxed dev server, killed ${SERVICE_KILLS.new} times: no service of a gone task runs, and new succeeds`,
    { timeout: 900_000 },
    async () => {
      const repo = repoWithServices();
      const full = await runKilledAt(repo, ['new', 'feat', 'calibrate'], null);
      expect(full.code, full.stderr).toBe(0);
      await ok(repo, 'rm', 'calibrate', '--delete-branch');
      const window = await killWindow(repo, full.ms);
      const random = seeded(SEED + 2);
      for (
        let n = 0;
        killedSoFar(trials, 'new') < scaled(SERVICE_KILLS.new) && n < scaled(SERVICE_KILLS.new) * 3;
        n++
      ) {
        const id = `s${n}`;
        const delayMs = Math.round(window.from + random() * (window.to - window.from));
        const run = await runKilledAt(repo, ['new', 'feat', id], delayMs);
        adapt(window, run);
        const problems: string[] = [];
        await ok(repo, 'gc');
        await strays(repo, problems);
        leftBehind(repo, problems);
        await noServiceOfAGoneTask(repo, problems);
        const state = await taskState(repo, id);
        if (state === null) {
          const again = await repo.warren('new', 'feat', id);
          if (again.code !== 0) problems.push(`new again: ${again.stderr.trim()}`);
        } else if (state !== 'ready') {
          problems.push(`task ${id} left ${state}`);
        }
        if ((await taskState(repo, id)) === 'ready') {
          const show = await repo.warrenJson<{ services: { name: string; state: string }[] }>('show', id);
          for (const s of show.json.services ?? [])
            if (s.state !== 'running') problems.push(`service ${s.name} of ready task ${id} is ${s.state}`);
        }
        if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
        trials.push({ op: 'new', n, delayMs, killed: run.killed, problems });
        await repo.warren('rm', id, '--delete-branch');
      }
      report(
        'random-kills-new-services',
        trials.filter((t) => t.op === 'new'),
      );
      expect(trials.filter((t) => t.op === 'new' && t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'new')).toBe(scaled(SERVICE_KILLS.new));
    },
  );

  it(
    `warren rm of a task with services, killed ${SERVICE_KILLS.rm} times: removed or removable, no service left running`,
    { timeout: 900_000 },
    async () => {
      const repo = repoWithServices();
      await ok(repo, 'new', 'feat', 'calibrate');
      const full = await runKilledAt(repo, ['rm', 'calibrate', '--delete-branch'], null);
      expect(full.code, full.stderr).toBe(0);
      const window = await killWindow(repo, full.ms);
      const random = seeded(SEED + 3);
      for (let n = 0; killedSoFar(trials, 'rm') < scaled(SERVICE_KILLS.rm) && n < scaled(SERVICE_KILLS.rm) * 3; n++) {
        const id = `t${n}`;
        await ok(repo, 'new', 'feat', id);
        const delayMs = Math.round(window.from + random() * (window.to - window.from));
        const run = await runKilledAt(repo, ['rm', id, '--delete-branch'], delayMs);
        adapt(window, run);
        const problems: string[] = [];
        await ok(repo, 'gc');
        if ((await taskState(repo, id)) !== null) {
          const again = await repo.warren('rm', id, '--delete-branch');
          if (again.code !== 0) problems.push(`rm again: ${again.stderr.trim()}`);
        }
        await strays(repo, problems);
        leftBehind(repo, problems);
        await noServiceOfAGoneTask(repo, problems);
        if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
        trials.push({ op: 'rm', n, delayMs, killed: run.killed, problems });
      }
      report(
        'random-kills-rm-services',
        trials.filter((t) => t.op === 'rm'),
      );
      expect(trials.filter((t) => t.op === 'rm' && t.problems.length > 0)).toEqual([]);
      expect(killedSoFar(trials, 'rm')).toBe(scaled(SERVICE_KILLS.rm));
    },
  );
});
