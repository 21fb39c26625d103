import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { processQueue } from '../../src/queue/processor.js';
import { createTask } from '../../src/workspace/create.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { unavailable } from '../helpers/capabilities.js';
import { packageTarball } from '../helpers/deps.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { unmountUnder } from '../helpers/tree.js';

/**
 * Monorepos provisioned whole (issue 30 §3): a real pnpm workspace of ten packages and a real
 * npm workspace, installed offline from tarballs in the repository. Every package's
 * node_modules is provisioned (by detection, or by one glob), checked against the workspace's
 * one lockfile, and a task in each lands through the gate, which needs every package's
 * dependencies.
 */

const TIMEOUT = 300_000;
const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noPnpm = unavailable(import.meta.filename, 'pnpm');

interface Status {
  stale: boolean;
  provisioned: { path: string }[];
  staleLockfiles: { path: string; tree?: string }[];
}

async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

/** A gate that loads every package, each of which needs its own dependencies. */
const CHECK = `const fs = require('fs');
for (const p of fs.readdirSync('packages')) console.log(p, require('./packages/' + p));
`;

/** What a task lands: a README change, which the gate (loading every package) must still pass. */
async function landReadme(ctx: ProjectContext, repo: TestRepo): Promise<void> {
  const t = await createTask(ctx, { type: 'docs', id: 'readme', setup: false });
  fs.writeFileSync(path.join(t.path, 'README.md'), 'docs\n');
  await checkpointTask(ctx, 'readme', { message: 'readme' });
  await queueLand(ctx, 'readme', { wait: false });
  await processQueue(ctx);
  const entry = listQueue(ctx).entries[0];
  expect(entry?.state, `${entry?.reason ?? ''} ${entry?.log ? fs.readFileSync(entry.log, 'utf8') : ''}`).toBe('landed');
  expect(fs.readFileSync(path.join(repo.root, 'README.md'), 'utf8')).toBe('docs\n');
}

describe.skipIf(noOverlay !== null)('monorepos provisioned whole', () => {
  it.skipIf(noPnpm !== null)(
    'a pnpm workspace of 10 packages: every package node_modules provisioned by detection, matching the one lockfile; a task lands through the gate',
    { timeout: TIMEOUT },
    async () => {
      const files: Record<string, string> = {
        '.gitignore': 'node_modules/\n',
        'package.json': '{"name":"mono","version":"1.0.0","private":true}\n',
        'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
        'check.js': CHECK,
        'warren.yaml':
          'provision:\n  - { path: node_modules, mode: cow }\nverify:\n  - { id: check, run: "node check.js" }\n',
      };
      for (let i = 0; i < 10; i++) {
        const deps: Record<string, string> = { alpha: 'file:../../vendor/alpha-1.0.0.tgz' };
        if (i > 0) deps.p0 = 'workspace:*';
        files[`packages/p${i}/package.json`] = JSON.stringify({ name: `p${i}`, version: '1.0.0', dependencies: deps });
        files[`packages/p${i}/index.js`] =
          `module.exports = require('alpha')${i > 0 ? " + ' / ' + require('p0')" : ''};\n`;
      }
      const repo = makeRepo({ files });
      onTestFinished(() => unmountUnder(path.dirname(repo.root)));
      packageTarball(path.join(repo.root, 'vendor'), 'alpha', '1.0.0');
      const store = tmpDir('warren-pnpm-store-');
      execFileSync('pnpm', ['install', '--offline', `--store-dir=${store}`, '--config.confirmModulesPurge=false'], {
        cwd: repo.root,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, CI: '1' },
      });
      repo.commit('install');
      const ctx = await project(repo);

      const t = await createTask(ctx, { type: 'feat', id: 'look', setup: false });
      const records = ctx.store.getTask(ctx.key, 'look')?.data.provision ?? [];
      expect(records.map((r) => r.path).sort()).toEqual(
        ['node_modules', ...Array.from({ length: 10 }, (_, i) => `packages/p${i}/node_modules`)].sort(),
      );
      for (const r of records) {
        expect(r, r.path).toMatchObject({ mode: 'cow', lockfile: { path: 'pnpm-lock.yaml' } });
        expect(r.installed?.state, `${r.path}: ${r.installed?.why ?? ''}`).toBe('matches');
      }
      // One snapshot per path, every one keyed by the one lockfile; and the task's packages load.
      expect(new Set(records.map((r) => r.snapshot)).size).toBe(11);
      expect(execFileSync('node', ['check.js'], { cwd: t.path, encoding: 'utf8' })).toContain(
        'p9 alpha 1.0.0 / alpha 1.0.0',
      );
      const detected = ctx.store.eventsSince(0).find((e) => e.kind === 'provision.workspace');
      expect(detected?.message).toContain(
        'the repository is a workspace of 10 package(s) (pnpm-workspace.yaml); 10 of them',
      );
      // Status per package: none stale.
      const status = (await repo.warrenJson<Status>('status', 'look')).json;
      expect(status.stale).toBe(false);
      expect(status.provisioned.map((p) => p.path)).toContain('packages/p7/node_modules');

      await landReadme(ctx, repo);

      // A task upgrades alpha in p3 with pnpm itself; its code needs 2.0.0. The gate installs the
      // integrated lockfile (setup's pnpm install) and keeps a snapshot of every package's folder.
      repo.write(
        'warren.yaml',
        `provision:\n  - { path: node_modules, mode: cow }\nsetup:\n  - { id: deps, run: "pnpm install --offline --frozen-lockfile --store-dir=${store} --config.confirmModulesPurge=false", gate: install }\nverify:\n  - { id: check, run: "node check.js" }\n`,
      );
      repo.commit('setup names the install');
      const ctx2 = await project(repo);
      const up = await createTask(ctx2, { type: 'feat', id: 'up', setup: false });
      packageTarball(path.join(up.path, 'vendor'), 'alpha', '2.0.0');
      const p3 = path.join(up.path, 'packages/p3/package.json');
      const pkg = JSON.parse(fs.readFileSync(p3, 'utf8')) as { dependencies: Record<string, string> };
      pkg.dependencies.alpha = 'file:../../vendor/alpha-2.0.0.tgz';
      fs.writeFileSync(p3, JSON.stringify(pkg));
      fs.writeFileSync(
        path.join(up.path, 'packages/p3/index.js'),
        "const v = require('alpha'); if (v !== 'alpha 2.0.0') throw new Error('needs alpha 2, got ' + v); module.exports = v;\n",
      );
      try {
        const args = ['install', '--offline', '--no-frozen-lockfile', `--store-dir=${store}`];
        execFileSync('pnpm', [...args, '--config.confirmModulesPurge=false'], {
          cwd: up.path,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, CI: '1' },
        });
      } catch (e) {
        throw new Error(`${String((e as { stdout?: unknown }).stdout)}\n${String((e as { stderr?: unknown }).stderr)}`);
      }
      await checkpointTask(ctx2, 'up', { message: 'alpha 2 in p3' });
      await queueLand(ctx2, 'up', { wait: false });
      await processQueue(ctx2);
      const upEntry = listQueue(ctx2).entries.find((e) => e.id === 'up');
      expect(upEntry?.state, `${upEntry?.reason ?? ''}`).toBe('landed');
      const gate = ctx2.store
        .eventsSince(0)
        .filter((e) => e.kind === 'queue.gate')
        .at(-1);
      const used = gate?.kind === 'queue.gate' ? (gate.data.snapshots ?? []) : [];
      expect(used).toHaveLength(11);
      for (const u of used) expect(u, u.path).toMatchObject({ how: 'installed', lockfile: 'pnpm-lock.yaml' });
      expect(used.every((u) => u.key !== null)).toBe(true);
      // A task made after the land gets every package's new folder from those snapshots.
      const next = await createTask(ctx2, { type: 'feat', id: 'next', setup: false });
      expect(execFileSync('node', ['check.js'], { cwd: next.path, encoding: 'utf8' })).toContain('p3 alpha 2.0.0');
    },
  );

  it(
    'an npm workspace: packages/*/node_modules provisioned by one glob, checked against the root lockfile; a task lands through the gate',
    { timeout: TIMEOUT },
    async () => {
      // Two packages want different alphas: npm hoists one and nests the other in its package's node_modules.
      const repo = makeRepo({
        files: {
          '.gitignore': 'node_modules/\n',
          'package.json': '{"name":"mono","version":"1.0.0","private":true,"workspaces":["packages/*"]}\n',
          'packages/one/package.json': JSON.stringify({
            name: 'one',
            version: '1.0.0',
            dependencies: { alpha: 'file:../../vendor/alpha-1.0.0.tgz' },
          }),
          'packages/one/index.js': "module.exports = require('alpha');\n",
          'packages/two/package.json': JSON.stringify({
            name: 'two',
            version: '1.0.0',
            dependencies: { alpha: 'file:../../vendor/alpha-2.0.0.tgz' },
          }),
          'packages/two/index.js': "module.exports = require('alpha');\n",
          'check.js': CHECK,
          'warren.yaml': [
            'provision:',
            '  - { path: node_modules, mode: cow }',
            "  - { path: 'packages/*/node_modules', mode: cow }",
            'verify:',
            '  - { id: check, run: "node check.js" }',
            '',
          ].join('\n'),
        },
      });
      onTestFinished(() => unmountUnder(path.dirname(repo.root)));
      packageTarball(path.join(repo.root, 'vendor'), 'alpha', '1.0.0');
      packageTarball(path.join(repo.root, 'vendor'), 'alpha', '2.0.0');
      const cache = tmpDir('warren-npm-cache-');
      execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', `--cache=${cache}`], {
        cwd: repo.root,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      repo.commit('install');
      const nested = ['one', 'two'].filter((p) => fs.existsSync(path.join(repo.root, 'packages', p, 'node_modules')));
      expect(nested).toHaveLength(1);
      const ctx = await project(repo);

      const t = await createTask(ctx, { type: 'feat', id: 'look', setup: false });
      const records = ctx.store.getTask(ctx.key, 'look')?.data.provision ?? [];
      expect(records.map((r) => r.path).sort()).toEqual(['node_modules', `packages/${nested[0]}/node_modules`]);
      for (const r of records) {
        expect(r, r.path).toMatchObject({ mode: 'cow', lockfile: { path: 'package-lock.json' } });
        expect(r.installed?.state, `${r.path}: ${r.installed?.why ?? ''}`).toBe('matches');
      }
      const out = execFileSync('node', ['check.js'], { cwd: t.path, encoding: 'utf8' });
      expect(out).toContain('one alpha 1.0.0');
      expect(out).toContain('two alpha 2.0.0');
      expect((await repo.warrenJson<Status>('status', 'look')).json.stale).toBe(false);
      // The lockfile changes in the task without an install, as a merge brings one: every
      // package's folder is stale against it, each named.
      const lockPath = path.join(t.path, 'package-lock.json');
      const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as { packages: Record<string, { version?: string }> };
      const hoisted = lock.packages['node_modules/alpha'];
      if (hoisted) hoisted.version = '1.0.1';
      fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
      const stale = (await repo.warrenJson<Status>('status', 'look')).json;
      expect(stale.stale).toBe(true);
      expect(stale.staleLockfiles.map((e) => e.tree).sort()).toEqual([
        'node_modules',
        `packages/${nested[0]}/node_modules`,
      ]);
      expect(stale.staleLockfiles.every((e) => e.path === 'package-lock.json')).toBe(true);

      await landReadme(ctx, repo);
    },
  );
});
