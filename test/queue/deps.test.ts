import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { processQueue } from '../../src/queue/processor.js';
import { createTask } from '../../src/workspace/create.js';
import { gc } from '../../src/workspace/gc.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { unavailable } from '../helpers/capabilities.js';
import { depsRepo, packageTarball, requireIn, snapshotsOf } from '../helpers/deps.js';
import { tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * The gate tests what will land (issue 30 §1): the integration workspace gets the integrated
 * tree's dependencies — a snapshot keyed by its own lockfile, or the install the setup names,
 * run there and kept — and an integrated tree that cannot install bounces with the install's log.
 * Real npm, offline: the packages are tarballs in the repository (`file:vendor/…`).
 */

const DEPS_TIMEOUT = 300_000;
const noOverlay = unavailable(import.meta.filename, 'overlay-root');

const NPM_FLAGS = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];

function npm(cwd: string, cache: string, ...args: string[]): void {
  execFileSync('npm', [...args, ...NPM_FLAGS, `--cache=${cache}`], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

/**
 * An npm project using alpha 1.0.0, installed in the main checkout, whose setup installs with
 * `npm ci` and whose gate runs `node check.js` (which the tasks write).
 */
function npmRepo(cache: string): TestRepo {
  const repo = depsRepo(
    { name: 'app', version: '1.0.0', dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' } },
    {
      'check.js': "console.log(require('alpha'));\n",
      'warren.yaml': [
        'provision:',
        '  - { path: node_modules, mode: cow }',
        'setup:',
        `  - { id: deps, run: "npm ci ${NPM_FLAGS.join(' ')} --cache=${cache}", timeout: 2m }`,
        'verify:',
        '  - { id: check, run: "node check.js" }',
        '',
      ].join('\n'),
    },
  );
  npm(repo.root, cache, 'install');
  repo.commit('lockfile');
  return repo;
}

describe.skipIf(noOverlay !== null)("the gate runs with the integrated tree's dependencies", () => {
  it(
    'a task that upgrades a dependency is gated with the new version (installed once, kept), and the next task gets that snapshot',
    { timeout: DEPS_TIMEOUT },
    async () => {
      const cache = tmpDir('warren-npm-cache-');
      const repo = npmRepo(cache);
      const ctx = await project(repo);
      const a = await createTask(ctx, { type: 'feat', id: 'up', setup: false });
      // The task upgrades alpha to 2.0.0 with npm itself, and its code needs 2.0.0.
      packageTarball(path.join(a.path, 'vendor'), 'alpha', '2.0.0');
      npm(a.path, cache, 'install', 'file:vendor/alpha-2.0.0.tgz');
      fs.writeFileSync(
        path.join(a.path, 'check.js'),
        "const v = require('alpha'); if (v !== 'alpha 2.0.0') { console.error('needs alpha 2, got ' + v); process.exit(1); }\n",
      );
      await checkpointTask(ctx, 'up', { message: 'alpha 2' });
      const before = snapshotsOf(repo);

      await queueLand(ctx, 'up', { wait: false });
      const worked = await processQueue(ctx);
      expect(worked.gateRuns).toBe(1);
      const entry = listQueue(ctx).entries[0];
      expect(entry?.state, entry?.reason ?? '').toBe('landed');

      // The gate installed the integrated lockfile, kept the result, and said which snapshot it ran with.
      const made = snapshotsOf(repo).filter((s) => !before.includes(s));
      expect(made).toHaveLength(1);
      const gateEvent = ctx.store.eventsSince(0).find((e) => e.kind === 'queue.gate');
      expect(gateEvent?.kind === 'queue.gate' && gateEvent.data.snapshots).toEqual([
        { path: 'node_modules', key: made[0], lockfile: 'package-lock.json', how: 'installed' },
      ]);
      expect(gateEvent?.message).toContain(
        `node_modules: snapshot ${made[0]?.slice(0, 12)} (installed from the integrated package-lock.json)`,
      );

      // Its install became the snapshot by a rename, not a copy (issue 41), and the gate's check
      // (which needs alpha 2) ran on it, mounted back copy-on-write.
      const kept = ctx.store.eventsSince(0).find((e) => e.kind === 'provision.snapshot' && e.message.includes('gate'));
      expect(kept?.message).toContain('moved into place: no copy');
      expect(
        fs.readFileSync(path.join(repo.home, 'snapshots', made[0] ?? '', 'tree', 'alpha', 'index.js'), 'utf8'),
      ).toContain('2.0.0');

      // The land says what the next task gets: the gate's snapshot, not stale (issue 41).
      const stale = ctx.store.eventsSince(0).find((e) => e.kind === 'land.deps_stale');
      expect(stale?.message).toMatch(
        /new workspaces get the snapshot already installed from the landed package-lock\.json \(the merge queue's gate keeps its install\), not stale$/,
      );

      // gc keeps it (no task uses it yet, and the main checkout's node_modules could not give it again), and says so.
      const collected = await gc(ctx);
      const dir = path.join(repo.home, 'snapshots', made[0] ?? '');
      expect(collected.kept).toContainEqual(
        expect.objectContaining({ kind: 'snapshot', path: dir, reason: expect.stringContaining(`rm -r -- ${dir}`) }),
      );
      expect(fs.existsSync(dir)).toBe(true);

      // A task made after the land (the main checkout's own node_modules still holds alpha 1) gets the gate's snapshot.
      expect(requireIn(repo.root, 'alpha')).toBe('alpha 1.0.0');
      const b = await createTask(ctx, { type: 'feat', id: 'next', setup: false });
      expect(requireIn(b.path, 'alpha')).toBe('alpha 2.0.0');
      expect(ctx.store.getTask(ctx.key, 'next')?.data.provision?.[0]?.snapshot).toBe(made[0]);
      // gc lists the snapshot a task mounts among what it keeps, and how it goes.
      expect((await gc(ctx)).kept).toContainEqual(
        expect.objectContaining({
          kind: 'snapshot',
          path: dir,
          reason: 'a dependency snapshot in use by task(s) next; gc removes it once no task uses it (`warren rm next`)',
        }),
      );

      // The next gate on the same lockfile reuses it, installing nothing.
      fs.writeFileSync(path.join(b.path, 'b.txt'), 'b\n');
      await checkpointTask(ctx, 'next', { message: 'b' });
      await queueLand(ctx, 'next', { wait: false });
      await processQueue(ctx);
      expect(listQueue(ctx).entries.map((e) => e.state)).toEqual(['landed', 'landed']);
      const second = ctx.store
        .eventsSince(0)
        .filter((e) => e.kind === 'queue.gate')
        .at(-1);
      expect(second?.kind === 'queue.gate' && second.data.snapshots?.[0]).toMatchObject({
        key: made[0],
        how: 'main',
      });
      expect(second?.kind === 'queue.gate' && second.data.setupLog).toBeNull();
    },
  );

  it(
    'a lockfile that cannot install bounces with the install log; the base stays installable',
    { timeout: DEPS_TIMEOUT },
    async () => {
      const cache = tmpDir('warren-npm-cache-');
      const repo = npmRepo(cache);
      const ctx = await project(repo);
      const t = await createTask(ctx, { type: 'feat', id: 'broken', setup: false });
      // A lockfile out of sync with package.json, as npm 11 left luxon's: `npm ci` refuses it.
      const lockPath = path.join(t.path, 'package-lock.json');
      const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as { packages: Record<string, unknown> };
      delete lock.packages['node_modules/alpha'];
      fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
      await checkpointTask(ctx, 'broken', { message: 'a lockfile without alpha' });
      const base = repo.git('rev-parse', 'main');

      await queueLand(ctx, 'broken', { wait: false });
      await processQueue(ctx);
      const entry = listQueue(ctx).entries[0];
      expect(entry).toMatchObject({ state: 'bounced', code: 'GATE_FAILED' });
      expect(entry?.reason).toContain('cannot be set up: setup deps (exit 1)');
      expect(entry?.log && fs.readFileSync(entry.log, 'utf8')).toMatch(/npm ci[\s\S]*(in sync|npm error)/);
      // Nothing landed, and the base still installs.
      expect(repo.git('rev-parse', 'main')).toBe(base);
      const clone = tmpDir('warren-base-');
      execFileSync('git', ['clone', '-q', repo.root, clone]);
      npm(clone, cache, 'ci');
      expect(requireIn(clone, 'alpha')).toBe('alpha 1.0.0');
    },
  );
});
