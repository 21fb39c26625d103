import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProvisionRecord } from '../src/provision/types.js';
import { exactInstall, installDecision, runsInstall } from '../src/run/install-skip.js';
import { unavailable } from './helpers/capabilities.js';
import { depsRepo } from './helpers/deps.js';
import { tmpDir } from './helpers/repo.js';

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
      /^setup deps \(npm ci\) skipped: .*; `warren setup cart` runs it$/,
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

  it('an exact install of a tree that matches its unchanged lockfile is skipped; anything else is run, warned about over cow', () => {
    const { root, record } = workspace({ name: 'app' });
    expect(installDecision('npm ci', [record], root).kind).toBe('skip');
    expect(installDecision(['npm', 'ci', '--no-audit'], [record], root).kind).toBe('skip');
    expect(installDecision('npm ci && npm run build', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^it does more than install; the install rewrites the whole node_modules/),
    });
    expect(installDecision('npm ci --omit=dev', [record], root).kind).toBe('warn');
    expect(installDecision('pnpm install', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^node_modules was installed by npm/),
    });
    expect(installDecision('make build', [record], root).kind).toBe('run');
    expect(installDecision('npm ci', [{ ...record, mode: 'copy' }], root).kind).toBe('skip');
    expect(installDecision('npm ci && true', [{ ...record, mode: 'copy' }], root).kind).toBe('run');
    expect(
      installDecision('npm ci', [{ ...record, installed: { ...record.installed!, state: 'differs' } }], root),
    ).toMatchObject({ kind: 'warn' });
    expect(installDecision('npm ci', [], root).kind).toBe('run');

    // The lockfile changed since provisioning, or the install runs the project's own scripts: run.
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"x":1}\n');
    expect(installDecision('npm ci', [record], root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^package-lock\.json changed/),
    });
    const scripted = workspace({ name: 'app', scripts: { prepare: 'tsc' } });
    expect(installDecision('npm ci', [scripted.record], scripted.root)).toMatchObject({
      kind: 'warn',
      why: expect.stringMatching(/^the install runs package\.json's prepare script/),
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
    expect(runsInstall('cd web && npm ci')).toBe(true);
    expect(runsInstall('yarn && yarn build')).toBe(true);
    expect(runsInstall('make')).toBe(false);
  });
});
