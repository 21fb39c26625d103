import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SEED,
  adapt,
  killWindow,
  killedSoFar,
  leftBehind,
  noCommitLost,
  reachable,
  report,
  runKilledAt,
  scaled,
  seeded,
  strays,
  type Trial,
  whatHappened,
} from '../helpers/random-kill.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { fullTierOnly } from '../helpers/tier.js';

/**
 * `warren sync` killed at random instants (test/helpers/random-kill.ts): a clean rebase, and a
 * conflicting one that rolls back, in turn. After the next commands alone (the repair, `gc`,
 * the same sync again) the task holds its base with its own commit on top — or, conflicting, is
 * exactly as it was — with no commit lost, no stray, no lock held, no merge or rebase half done.
 */

const KILLS = 16;

async function ok(repo: TestRepo, ...args: string[]): Promise<void> {
  const r = await repo.warren(...args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** A task with one commit of its own on `f-ID.txt` (or on the shared `shared.txt`, to conflict), then a base that moved. */
async function movedUnder(repo: TestRepo, id: string, conflicting: boolean): Promise<string> {
  await ok(repo, 'new', 'feat', id);
  const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
  fs.writeFileSync(path.join(ws, conflicting ? 'shared.txt' : `f-${id}.txt`), `${id}\n`);
  await ok(repo, 'checkpoint', id, '-m', `work ${id}`);
  repo.write(conflicting ? 'shared.txt' : `main-${id}.txt`, `main under ${id}\n`);
  repo.commit(`main moves under ${id}`);
  return ws;
}

describe.skipIf(fullTierOnly(import.meta.filename, 'the random-kill trials'))(
  'warren sync killed at a random instant',
  () => {
    it(
      `killed ${KILLS} times: after the next commands, synced or as it was, nothing lost or left`,
      { timeout: 900_000 },
      async () => {
        const repo = makeRepo({ files: { 'shared.txt': 'shared\n' } });
        await movedUnder(repo, 'calibrate', false);
        const full = await runKilledAt(repo, ['sync', 'calibrate'], null);
        expect(full.code, full.stderr).toBe(0);
        const window = await killWindow(repo, full.ms);
        const random = seeded(SEED + 40);
        const trials: Trial[] = [];
        for (let n = 0; killedSoFar(trials, 'sync') < scaled(KILLS) && n < scaled(KILLS) * 3; n++) {
          const id = `s${n}`;
          const conflicting = n % 2 === 1;
          const ws = await movedUnder(repo, id, conflicting);
          const head = repo.git('rev-parse', `feat/${id}`);
          const before = reachable(repo.root);
          const delayMs = Math.round(window.from + random() * (window.to - window.from));
          const run = await runKilledAt(repo, ['sync', id], delayMs);
          adapt(window, run);
          const problems: string[] = [];
          await ok(repo, 'gc');
          const again = await repo.warren('sync', id);
          if (again.code !== (conflicting ? 1 : 0))
            problems.push(`sync again: exit ${again.code}: ${again.stderr.trim()}`);
          const status = repo.git('-C', ws, 'status', '--porcelain');
          if (status !== '') problems.push(`the workspace is not clean: ${status}`);
          if (fs.existsSync(path.join(repo.root, '.git', 'worktrees', id, 'rebase-merge')))
            problems.push('a rebase is half done');
          if (conflicting) {
            if (repo.git('rev-parse', `feat/${id}`) !== head) problems.push('the conflicting task moved');
          } else {
            if (repo.git('merge-base', 'main', `feat/${id}`) !== repo.git('rev-parse', 'main'))
              problems.push('the base is not in the task');
            if (repo.git('log', '-1', '--format=%s', `feat/${id}`) !== `work ${id}`)
              problems.push("the task's commit is not on top");
          }
          noCommitLost(repo.root, before, problems);
          await strays(repo, problems);
          leftBehind(repo, problems);
          if (problems.length > 0) problems.push(whatHappened(repo, id, run.stderr));
          trials.push({ op: 'sync', n, delayMs, killed: run.killed, problems });
        }
        report('random-kills-sync', trials);
        expect(trials.filter((t) => t.problems.length > 0)).toEqual([]);
        expect(killedSoFar(trials, 'sync')).toBe(scaled(KILLS));
      },
    );
  },
);
