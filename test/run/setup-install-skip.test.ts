import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProvisionRecord } from '../../src/provision/types.js';
import { exactInstall, installDecision, runsInstall } from '../../src/run/install-skip.js';
import { perCheckoutScripts } from '../../src/run/install-scripts.js';
import { unavailable } from '../helpers/capabilities.js';
import { depsRepo } from '../helpers/deps.js';
import { tmpDir } from '../helpers/repo.js';

/**
 * Issue 31: the README's warren.yaml provisions node_modules as cow and runs `setup: npm ci`.
 * The install is skipped when the provisioned tree is what the lockfile pins, so a task is ready
 * in well under a second and `status` lists only the task's own edit; real npm, offline.
 */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

/** The README's example, as it is there. */
const README_YAML = `provision:
  - { path: node_modules, mode: cow }    # isolated copy-on-write (copy where the machine cannot)
  - { path: .env, mode: copy }
setup:
  - { id: deps, run: "npm ci" }          # runs in each new workspace before it is ready
verify:
  - { id: test, run: "npm test" }
protected: [".env.testing"]              # never lands
`;

function npmInstall(cwd: string): void {
  const cache = tmpDir('warren-npm-cache-');
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', `--cache=${cache}`], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

interface Made {
  path: string;
  state: string;
  setupSkipped?: { id: string; why: string }[];
  warnings: { kind: string; message: string }[];
}

describe.skipIf(noOverlay !== null)("the README's warren.yaml: `npm ci` over a cow node_modules", () => {
  it('skips the install the snapshot already is: ready in well under a second, status lists only the edit', async () => {
    const repo = depsRepo(
      {
        name: 'app',
        version: '1.0.0',
        scripts: { test: 'node -e 0' },
        dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' },
      },
      { 'app.js': 'export const a = 1;\n', '.gitignore': 'node_modules/\n.env\n' },
    );
    npmInstall(repo.root);
    fs.writeFileSync(path.join(repo.root, '.env'), 'SECRET=1\n');
    repo.write('warren.yaml', README_YAML);
    repo.commit('lockfile and warren.yaml');

    // The first task takes the snapshot (once per lockfile); the second is the everyday cost.
    expect((await repo.warren('new', 'feat', 'first')).code).toBe(0);
    // Not timed here (a loaded CI machine makes any bound flaky; bench/ measures speed): the install is proven skipped.
    const made = await repo.warrenJson<Made>('new', 'feat', 'cart');
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.state).toBe('ready');
    expect(made.json.setupSkipped?.map((s) => s.id)).toEqual(['deps']);
    expect(made.json.warnings.map((w) => w.kind)).not.toContain('setup.reinstalls');
    // What does not run adds no risk: the skipped install is not "a package manager" here.
    expect(made.stderr).not.toMatch(/runs a package manager/);
    const human = await repo.warren('new', 'feat', 'human');
    expect(human.stdout).toMatch(/^setup deps skipped: node_modules \(cow\) is already what package-lock\.json pins/m);
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'cart');
    expect(shown.json.events.find((e) => e.kind === 'setup.install_skipped')?.message).toMatch(
      /^setup deps \(npm ci\) skipped: .*; `warren setup cart` runs the whole install$/,
    );
    // The tree is the snapshot's, and node resolves from it.
    expect(execFileSync('node', ['-p', 'require("alpha")'], { cwd: made.json.path, encoding: 'utf8' }).trim()).toBe(
      'alpha 1.0.0',
    );

    // The real edit, and nothing of node_modules.
    fs.writeFileSync(path.join(made.json.path, 'app.js'), 'export const a = 2;\n');
    const status = await repo.warrenJson<{
      tracked: { code: string; path: string }[];
      provisioned: { path: string; changedCount: number }[];
    }>('status', 'cart');
    expect(status.json.tracked).toEqual([{ code: ' M', path: 'app.js' }]);
    expect(status.json.provisioned.map((p) => [p.path, p.changedCount])).toEqual([
      ['node_modules', 0],
      ['.env', 0],
    ]);

    // `warren setup` runs every step, the install included (asked for by name).
    const setup = await repo.warrenJson<{ state: string; log: string }>('setup', 'cart');
    expect(fs.readFileSync(setup.json.log, 'utf8')).toContain('### setup deps: npm ci');
    // It rewrote every file of node_modules into the layer, identically: content, not presence,
    // so status still lists nothing there (issue 41).
    const after = await repo.warrenJson<{ provisioned: { path: string; changedCount: number }[] }>('status', 'cart');
    expect(after.json.provisioned.map((p) => [p.path, p.changedCount])).toEqual([
      ['node_modules', 0],
      ['.env', 0],
    ]);
  }, 300_000);
});

/**
 * husky's `prepare`, as husky 9 does it (honouring HUSKY=0): generates `.husky/_` with a hook that
 * runs the project's `.husky/pre-commit`, and sets `core.hooksPath`. Each lifecycle script run
 * is logged to `.ran` in the checkout it ran in.
 */
const HUSKY_LIKE = `const fs = require('fs');
const { execFileSync } = require('child_process');
fs.appendFileSync('.ran', process.env.npm_lifecycle_event + '\\n');
if (process.env.HUSKY === '0') process.exit(0);
fs.mkdirSync('.husky/_', { recursive: true });
fs.writeFileSync('.husky/_/.gitignore', '*\\n');
fs.writeFileSync('.husky/_/pre-commit', '#!/bin/sh\\nsh .husky/pre-commit\\n', { mode: 0o755 });
execFileSync('git', ['config', 'core.hooksPath', '.husky/_']);
`;

interface Event {
  kind: string;
  message: string;
}

describe.skipIf(noOverlay !== null)('an install with lifecycle scripts over a cow node_modules (issue 41)', () => {
  function huskyRepo(setup: string) {
    const repo = depsRepo(
      {
        name: 'app',
        version: '1.0.0',
        scripts: { prepare: 'node scripts/husky.js', postinstall: 'node scripts/husky.js', test: 'node -e 0' },
        dependencies: { alpha: 'file:vendor/alpha-1.0.0.tgz' },
      },
      {
        '.gitignore': 'node_modules/\n.ran\n',
        'scripts/husky.js': HUSKY_LIKE,
        '.husky/pre-commit': 'exit 0\n',
        'warren.yaml': `provision:\n  - { path: node_modules, mode: cow }\nsetup:\n  - { id: deps, run: "${setup}" }\n`,
      },
    );
    // The main checkout's install, scripts included, with husky off (as in CI): no core.hooksPath there.
    execFileSync(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', `--cache=${tmpDir()}`],
      {
        cwd: repo.root,
        env: { ...process.env, HUSKY: '0' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    expect(fs.readFileSync(path.join(repo.root, '.ran'), 'utf8')).toBe('postinstall\nprepare\n');
    repo.commit('lockfile');
    return repo;
  }

  it("skips the install of a root `prepare` (husky) + `postinstall` project, runs only those scripts in the workspace, and husky's core.hooksPath is the project's own", async () => {
    const repo = huskyRepo('npm ci');
    const made = await repo.warrenJson<Made>('new', 'feat', 'hooks');
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.state).toBe('ready');
    expect(made.json.setupSkipped).toEqual([
      {
        id: 'deps',
        why: expect.stringMatching(
          /; the root package's own postinstall, prepare write outside node_modules .*, so they run per checkout$/,
        ),
        ran: {
          scripts: ['postinstall', 'prepare'],
          command: expect.stringMatching(
            /npm_lifecycle_event=postinstall npm_lifecycle_script='node scripts\/husky\.js' sh -c 'node scripts\/husky\.js' && npm_lifecycle_event=prepare /,
          ),
          summary: 'postinstall (node scripts/husky.js), prepare (node scripts/husky.js), directly as npm runs them',
        },
      },
    ]);
    expect(made.json.warnings.map((w) => w.kind)).not.toContain('setup.reinstalls');
    // Exactly the per-checkout scripts ran, in the install's order, in the workspace, once each.
    const ws = made.json.path;
    expect(fs.readFileSync(path.join(ws, '.ran'), 'utf8')).toBe('postinstall\nprepare\n');
    expect(fs.statSync(path.join(ws, '.husky/_/pre-commit')).mode & 0o111).not.toBe(0);
    expect(repo.git('config', 'core.hooksPath')).toBe('.husky/_');
    // The layer holds none of the install: status lists nothing in node_modules.
    const status = await repo.warrenJson<{ provisioned: { path: string; changedCount: number }[] }>('status', 'hooks');
    expect(status.json.provisioned.map((p) => [p.path, p.changedCount])).toEqual([['node_modules', 0]]);

    const shown = await repo.warrenJson<{ events: Event[] }>('show', 'hooks');
    expect(shown.json.events.find((e) => e.kind === 'setup.install_skipped')?.message).toMatch(
      /^setup deps \(npm ci\) skipped: .*so they run per checkout; ran instead: postinstall \(node scripts\/husky\.js\), prepare \(node scripts\/husky\.js\), directly as npm runs them; `warren setup hooks` runs the whole install$/,
    );
    expect(shown.json.events.find((e) => e.kind === 'hooks.project_own')?.message).toMatch(
      /^the project's own setup set core\.hooksPath=\.husky\/_ /,
    );
    const human = await repo.warren('new', 'feat', 'human');
    expect(human.stdout).toMatch(
      /^setup deps ran only postinstall \(node scripts\/husky\.js\), prepare \(node scripts\/husky\.js\), directly as npm runs them$/m,
    );

    // The hook-drift guard: the project's own core.hooksPath is not drift, so the checkpoint commits.
    fs.writeFileSync(path.join(ws, 'app.js'), 'export const a = 1;\n');
    const checkpoint = await repo.warrenJson<{ commit: string }>('checkpoint', 'hooks', '-m', 'work');
    expect(checkpoint.code, checkpoint.stderr).toBe(0);
    expect(checkpoint.json.commit).toMatch(/^[0-9a-f]{40}$/);
  }, 300_000);

  it('`npm ci --ignore-scripts` is skipped without running any script', async () => {
    const repo = huskyRepo('npm ci --ignore-scripts');
    const made = await repo.warrenJson<Made>('new', 'feat', 'quiet');
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.setupSkipped).toEqual([
      { id: 'deps', why: expect.stringMatching(/, and --ignore-scripts runs no script$/) },
    ]);
    expect(fs.existsSync(path.join(made.json.path, '.ran'))).toBe(false);
    expect(fs.existsSync(path.join(made.json.path, '.husky/_'))).toBe(false);
  }, 300_000);
});

describe('which setup steps are an install warren can skip (pure, on files)', () => {
  function workspace(packageJson: object, lock = '{"lockfileVersion":3}\n'): { root: string; record: ProvisionRecord } {
    const root = tmpDir();
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify(packageJson));
    fs.writeFileSync(path.join(root, 'package-lock.json'), lock);
    const sha256 = execFileSync('sha256sum', [path.join(root, 'package-lock.json')], { encoding: 'utf8' }).split(
      ' ',
    )[0];
    const record = {
      path: 'node_modules',
      mode: 'cow',
      source: '/main/node_modules',
      lockfile: { path: 'package-lock.json', sha256 },
      installed: { lockfile: 'package-lock.json', manager: 'npm', state: 'matches' },
    } as ProvisionRecord;
    return { root, record };
  }

  it('an exact install of a tree that matches its unchanged lockfile is skipped; anything else is run, warned about over cow', async () => {
    const { root, record } = workspace({ name: 'app' });
    expect((await installDecision('npm ci', [record], root)).kind).toBe('skip');
    expect((await installDecision(['npm', 'ci', '--no-audit'], [record], root)).kind).toBe('skip');
    expect(await installDecision('npm ci && npm run build', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^it is more than an install \(.*\); the install rewrites the whole node_modules/),
    });
    expect((await installDecision('npm ci --omit=dev', [record], root)).kind).toBe('warn');
    expect(await installDecision('pnpm install', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^node_modules was installed by npm/),
    });
    expect((await installDecision('make build', [record], root)).kind).toBe('run');
    expect((await installDecision('npm ci', [{ ...record, mode: 'copy' }], root)).kind).toBe('skip');
    expect((await installDecision('npm ci && true', [{ ...record, mode: 'copy' }], root)).kind).toBe('run');
    expect(
      await installDecision('npm ci', [{ ...record, installed: { ...record.installed!, state: 'differs' } }], root),
    ).toMatchObject({ kind: 'warn' });
    expect((await installDecision('npm ci', [], root)).kind).toBe('run');

    // The lockfile changed since provisioning, or the install runs the project's own scripts: run.
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"x":1}\n');
    expect(await installDecision('npm ci', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^package-lock\.json changed/),
    });
  });

  it("an install with the root package's lifecycle scripts is skipped and only those scripts run; --ignore-scripts runs none", async () => {
    const scripted = workspace({ name: 'app', scripts: { prepare: 'husky', postinstall: 'node x.js', test: 'jest' } });
    expect(await installDecision('npm ci', [scripted.record], scripted.root)).toMatchObject({
      kind: 'skip',
      why: expect.stringMatching(
        /; the root package's own postinstall, prepare write outside node_modules .*, so they run per checkout$/,
      ),
      perCheckout: {
        scripts: ['postinstall', 'prepare'],
        command: expect.stringContaining(
          "npm_lifecycle_event=postinstall npm_lifecycle_script='node x.js' sh -c 'node x.js'",
        ),
        summary: 'postinstall (node x.js), prepare (husky), directly as npm runs them',
      },
    });
    expect(await installDecision('npm ci --ignore-scripts', [scripted.record], scripted.root)).toMatchObject({
      kind: 'skip',
      why: expect.stringMatching(/--ignore-scripts runs no script$/),
      perCheckout: null,
    });
    // A workspace package with a lifecycle script of its own: warren runs only the root's, so the install runs.
    const mono = workspace({ name: 'app', workspaces: ['packages/*'], scripts: { prepare: 'husky' } });
    fs.mkdirSync(path.join(mono.root, 'packages/lib'), { recursive: true });
    fs.writeFileSync(path.join(mono.root, 'packages/lib/package.json'), '{"scripts":{"postinstall":"node build.js"}}');
    expect(await installDecision('npm ci', [mono.record], mono.root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^the workspace package\(s\) packages\/lib have lifecycle scripts/),
      fastPath: expect.stringMatching(/--ignore-scripts/),
    });
    // Every warning names the fast path.
    expect(await installDecision('npm ci && npm run build', [scripted.record], scripted.root)).toMatchObject({
      fastPath: expect.stringMatching(/^make the install a setup step of its own, exactly `npm ci`/),
    });
  });

  it.each([
    // [manager, scripts, scripts the install runs, the command that runs exactly them]
    [
      'npm',
      { prepare: 'husky' },
      ['prepare'],
      /\nnpm_lifecycle_event=prepare npm_lifecycle_script='husky' sh -c 'husky'$/,
    ],
    [
      'pnpm',
      { preinstall: 'node check.js', postinstall: 'simple-git-hooks', prepublish: 'x' },
      ['preinstall', 'postinstall'],
      /\nnpm_lifecycle_event=preinstall npm_lifecycle_script='node check\.js' sh -c 'node check\.js' && npm_lifecycle_event=postinstall npm_lifecycle_script='simple-git-hooks' sh -c 'simple-git-hooks'$/,
    ],
    // yarn classic's `run install` runs preinstall and postinstall too: invoked once.
    [
      'yarn-classic',
      { preinstall: 'a', install: 'b', postinstall: 'c', prepare: 'd' },
      ['preinstall', 'install', 'postinstall', 'prepare'],
      'yarn run install && yarn run prepare',
    ],
    ['yarn-classic', { postinstall: 'c' }, ['postinstall'], 'yarn run postinstall'],
    // yarn 2+ runs no prepare on install.
    ['yarn-berry', { postinstall: 'c', prepare: 'd' }, ['postinstall'], 'yarn run postinstall'],
  ] as const)('per package manager: %s with %j runs %j by `%s`', (manager, scripts, names, command) => {
    const tool = manager.startsWith('yarn') ? 'yarn' : manager;
    expect(perCheckoutScripts(manager, tool, { scripts })).toMatchObject({
      scripts: names,
      command: typeof command === 'string' ? command : expect.stringMatching(command),
    });
  });

  it('yarn classic: a script its `run` would add that the install does not run is refused, not run', () => {
    expect(perCheckoutScripts('yarn-classic', 'yarn', { scripts: { prepare: 'd', preprepare: 'e' } })).toEqual({
      refused: '`yarn run prepare` would also run preprepare, which the install does not',
    });
  });

  it('reads the command: exact installs by tool, and installs inside longer commands', () => {
    expect(exactInstall('npm ci')).toBe('npm');
    expect(exactInstall('  npm   install ')).toBe('npm');
    expect(exactInstall('pnpm install --frozen-lockfile')).toBe('pnpm');
    expect(exactInstall('yarn')).toBe('yarn');
    expect(exactInstall('yarn install --immutable')).toBe('yarn');
    expect(exactInstall('npm ci; rm -rf /')).toBeNull();
    expect(exactInstall('npm install left-pad')).toBeNull();
    // How it talks, logs and caches is still only the install; a value with shell in it is not.
    expect(exactInstall('npm ci --offline --no-audit --no-fund --loglevel=error --cache=/work/.cache/npm')).toBe('npm');
    expect(exactInstall('pnpm install --frozen-lockfile --store-dir=/srv/pnpm-store --reporter=silent')).toBe('pnpm');
    expect(exactInstall('npm ci --cache=$(touch /tmp/x)')).toBeNull();
    expect(exactInstall('npm ci --registry=http://example.invalid')).toBeNull();
    expect(runsInstall('cd web && npm ci')).toBe(true);
    expect(runsInstall('yarn && yarn build')).toBe(true);
    expect(runsInstall('make')).toBe(false);
  });
});
