import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import {
  buildWheel,
  filesNaming,
  makeVenv,
  pnpmInstall,
  pnpmProjectFiles,
  pythonPackageFiles,
} from '../helpers/ecosystems.js';
import { fuseMountsTouching, nobodyRepo, shellAsNobody } from '../helpers/nobody.js';
import { BIN, makeRepo, type TestRepo } from '../helpers/repo.js';
import { treeDigest, unmountUnder } from '../helpers/tree.js';

/**
 * Trees that name the main checkout by absolute path (issue 13 §3), with a real venv (`python3
 * -m venv`, `pip install -e`, a local wheel) and real pnpm (`pnpm install --offline`, local
 * packages): in a workspace they must name the workspace, so `pip install` writes into the
 * task's venv, the task's tests import the task's code, and pnpm's shims resolve in the task.
 */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noVenv = unavailable(import.meta.filename, 'python-venv');
const noPnpm = unavailable(import.meta.filename, 'pnpm');
const noUserns = unavailable(import.meta.filename, 'nobody') ?? unavailable(import.meta.filename, 'overlay-userns');
const noFuse = unavailable(import.meta.filename, 'fuse-overlayfs');
const NOBODY = 65534;

interface Relocation {
  from: string;
  to: string;
  checked: number;
  rewritten: { path: string }[];
  left: { path: string; why: string }[];
}
interface Provisioned {
  path: string;
  mode: string;
  isolated: boolean;
  relocation?: Relocation;
}
interface Shown {
  path: string;
  data: { provision: Provisioned[] };
  events: { kind: string; level: string; message: string }[];
}

function sitePackages(root: string): string {
  const lib = path.join(root, '.venv/lib');
  const py = fs.readdirSync(lib).find((n) => n.startsWith('python'));
  if (py === undefined) throw new Error(`no python in ${lib}`);
  return path.join(lib, py, 'site-packages');
}

async function show(repo: TestRepo, id: string): Promise<Shown> {
  const shown = await repo.warrenJson<Shown>('show', id);
  expect(shown.code, shown.stderr).toBe(0);
  return shown.json;
}

/** One venv for the file: `python3 -m venv` costs seconds. Each test makes its own tasks in it. */
function venvRepo(mode: string): { repo: TestRepo; wheel: string } {
  const repo = makeRepo({
    files: {
      ...pythonPackageFiles('mypkg'),
      '.gitignore': '.venv/\n__pycache__/\nwheels/\n*-src/\n',
      'check.py': 'import mypkg, sys\nsys.exit(0 if mypkg.VALUE == 1 else 1)\n',
      'warren.yaml': `provision:\n  - { path: .venv, mode: ${mode} }\n`,
    },
  });
  makeVenv(repo.root);
  const wheel = buildWheel(path.join(repo.root, '.venv/bin/pip'), repo.root, 'extra');
  return { repo, wheel };
}

describe.skipIf(noVenv !== null)('a venv in a workspace names the workspace', () => {
  for (const mode of ['cow', 'copy', 'hardlink'] as const) {
    const noMount = mode === 'cow' ? noOverlay : null;
    // One test per mode: `python3 -m venv` costs seconds.
    it.skipIf(noMount !== null)(
      `${mode}: scripts, pyvenv.cfg and the editable .pth name the task; pip install writes into the task's venv; the task's tests import the task's code`,
      async () => {
        const { repo, wheel } = venvRepo(mode);
        onTestFinished(() => unmountUnder(path.dirname(repo.root)));
        const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
        expect(made.code, made.stderr).toBe(0);
        const ws = made.json.path;
        const task = await show(repo, 'a');
        const record = task.data.provision[0];
        expect(record).toMatchObject({ path: '.venv', mode, isolated: mode !== 'hardlink' });
        const rewritten = record?.relocation?.rewritten.map((f) => f.path) ?? [];
        expect(rewritten).toEqual(expect.arrayContaining(['pyvenv.cfg', 'bin/pip', 'bin/activate', 'bin/mypkg-tool']));
        expect(rewritten.some((p) => /site-packages\/__editable__\.mypkg-0\.1\.pth$/.test(p))).toBe(true);
        expect(record?.relocation?.left).toEqual([]);
        expect(task.events.map((e) => e.kind)).toContain('provision.relocated');
        // Checked independently of warren's list: every byte of the task's venv.
        expect(filesNaming(path.join(ws, '.venv'), repo.root)).toEqual([]);
        expect(fs.readFileSync(path.join(ws, '.venv/bin/pip'), 'utf8').split('\n')[0]).toBe(
          `#!${ws}/.venv/bin/python3`,
        );
        expect(fs.readFileSync(path.join(repo.root, '.venv/bin/pip'), 'utf8').split('\n')[0]).toBe(
          `#!${repo.root}/.venv/bin/python3`,
        );
        // status does not count warren's own rewrites as the task's changes.
        const clean = await repo.warrenJson<{ provisioned: { changedCount: number; isolated: boolean }[] }>(
          'status',
          'a',
        );
        expect(clean.json.provisioned[0]).toMatchObject({ changedCount: 0, isolated: mode !== 'hardlink' });

        // pip install in the task writes into the task's venv, not the main checkout's.
        const installed = await repo.warren('exec', 'a', '--', '.venv/bin/pip', 'install', '-q', '--no-index', wheel);
        expect(installed.code, installed.stderr).toBe(0);
        expect(fs.existsSync(path.join(sitePackages(ws), 'extra/__init__.py'))).toBe(true);
        expect(fs.existsSync(path.join(sitePackages(repo.root), 'extra'))).toBe(false);
        expect(fs.existsSync(path.join(repo.root, '.venv/bin/extra-tool'))).toBe(false);
        const status = await repo.warrenJson<{ provisioned: { changed: { path: string; change: string }[] }[] }>(
          'status',
          'a',
        );
        const changed = status.json.provisioned[0]?.changed.map((c) => c.path) ?? [];
        expect(changed).toContain('.venv/bin/extra-tool');
        expect(changed.filter((p) => p === '.venv/bin/pip' || p === '.venv/pyvenv.cfg')).toEqual([]);

        // The editable install runs the task's code: broken in the task, the task's check fails, the main checkout's passes.
        const tool = await repo.warren('exec', 'a', '--', '.venv/bin/mypkg-tool');
        expect(tool.code, tool.stderr).toBe(0);
        expect(tool.stdout + tool.stderr).toContain(path.join(ws, 'src/mypkg/__init__.py'));
        expect((await repo.warren('exec', 'a', '--', '.venv/bin/python', 'check.py')).code).toBe(0);
        fs.writeFileSync(path.join(ws, 'src/mypkg/__init__.py'), 'VALUE = 2\n');
        expect((await repo.warren('exec', 'a', '--', '.venv/bin/python', 'check.py')).code).not.toBe(0);
        execFileSync(path.join(repo.root, '.venv/bin/python'), ['check.py'], { cwd: repo.root }); // throws if it fails
      },
      300_000,
    );
  }

  describe.skipIf(noOverlay !== null)('what cannot be made to name the workspace', () => {
    it('a .pth naming a folder only the main checkout has is left, and the path is reported NOT isolated (event, status, audit)', async () => {
      const { repo } = venvRepo('cow');
      onTestFinished(() => unmountUnder(path.dirname(repo.root)));
      // An untracked, unprovisioned folder of the main checkout on the venv's path.
      fs.mkdirSync(path.join(repo.root, 'local-lib'));
      fs.appendFileSync(path.join(repo.root, '.gitignore'), 'local-lib/\n');
      repo.commit('ignore local-lib');
      fs.writeFileSync(path.join(sitePackages(repo.root), 'local.pth'), `${repo.root}/local-lib\n`);
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'leak');
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).toMatch(/\.venv is NOT isolated: 1 file\(s\) still name the main checkout/);
      const task = await show(repo, 'leak');
      expect(task.data.provision[0]?.isolated).toBe(false);
      expect(task.data.provision[0]?.relocation?.left).toEqual([
        expect.objectContaining({ path: expect.stringMatching(/site-packages\/local\.pth$/) }),
      ]);
      expect(task.events).toContainEqual(expect.objectContaining({ kind: 'provision.not_isolated', level: 'warn' }));
      const status = await repo.warren('status', 'leak');
      expect(status.stdout).toContain('.venv (cow): unchanged — not isolated');
      const audit = await repo.warren('audit', 'leak');
      expect(audit.stdout).toMatch(/\.venv: cow \(overlay\), NOT isolated: 1 file\(s\) still name the main checkout/);
      // The rest was still rewritten.
      expect(fs.readFileSync(path.join(made.json.path, '.venv/bin/pip'), 'utf8')).toContain(made.json.path);
    }, 300_000);
  });
});

describe.skipIf(noVenv !== null || noUserns !== null)('a venv in a workspace of a user who is not root', () => {
  it('the rewrites go into the upper layer of the overlay each run mounts; pip install and the editable install stay in the task', () => {
    const { repo, wheel } = venvRepo('cow');
    fs.chmodSync(path.dirname(repo.root), 0o755);
    fs.mkdirSync(repo.home, { recursive: true });
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, repo.root, repo.home]);
    const asNobody = (...args: string[]): { code: number; stdout: string; stderr: string } => {
      // WARREN_COW=userns: the overlay each run mounts in its own namespace (fuse-overlayfs, the rung before it, has its own test).
      const env = [`HOME=${repo.home}`, `WARREN_HOME=${repo.home}`, 'WARREN_COW=userns'];
      const r = spawnSync(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', ...env, process.execPath, BIN, ...args],
        { cwd: repo.root, encoding: 'utf8' },
      );
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    };
    const made = asNobody('--json', 'new', 'feat', 'n');
    expect(made.code, made.stderr).toBe(0);
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    const record = (
      JSON.parse(asNobody('--json', 'show', 'n').stdout) as Shown & {
        data: { provision: (Provisioned & { namespaced?: boolean; upper: string })[] };
      }
    ).data.provision[0];
    expect(record).toMatchObject({ mode: 'cow', namespaced: true, isolated: true });
    expect(record?.relocation?.rewritten.map((f) => f.path)).toEqual(expect.arrayContaining(['bin/pip', 'pyvenv.cfg']));
    // Nothing is mounted on the host: the rewritten files are in the upper layer, owned by the user.
    expect(fs.statSync(path.join(record?.upper ?? '', 'bin/pip')).uid).toBe(NOBODY);
    expect(filesNaming(record?.upper ?? '', repo.root)).toEqual([]);
    const head = asNobody('exec', 'n', '--', 'head', '-1', '.venv/bin/pip');
    expect(head.stdout + head.stderr).toContain(`#!${ws}/.venv/bin/python3`);
    // A relative command is looked up where the layer is mounted (on the host it is an empty folder).
    const installed = asNobody('exec', 'n', '--', '.venv/bin/pip', 'install', '-q', '--no-index', wheel);
    expect(installed.code, installed.stderr).toBe(0);
    expect(fs.existsSync(path.join(sitePackages(repo.root), 'extra'))).toBe(false);
    expect(asNobody('exec', 'n', '--', '.venv/bin/python', '-c', 'import extra').code).toBe(0);
    expect(asNobody('exec', 'n', '--', '.venv/bin/python', 'check.py').code).toBe(0);
    fs.writeFileSync(path.join(ws, 'src/mypkg/__init__.py'), 'VALUE = 2\n');
    expect(asNobody('exec', 'n', '--', '.venv/bin/python', 'check.py').code).not.toBe(0);
    execFileSync(path.join(repo.root, '.venv/bin/python'), ['check.py'], { cwd: repo.root });
    const status = JSON.parse(asNobody('--json', 'status', 'n').stdout) as {
      provisioned: { changed: { path: string }[] }[];
    };
    const changed = status.provisioned[0]?.changed.map((c) => c.path) ?? [];
    expect(changed).toContain('.venv/bin/extra-tool');
    expect(changed).not.toContain('.venv/bin/pip');
  }, 300_000);
});

describe.skipIf(noVenv !== null || noFuse !== null)(
  'a venv in a fuse-overlayfs workspace of a user who is not root',
  () => {
    it("rewritten through the fuse mount; pip install from a plain shell and through exec lands in the task; the editable install runs the task's src; the main checkout's venv is unchanged", () => {
      let wheel = '';
      const repo = nobodyRepo((root) => {
        for (const [rel, content] of Object.entries({
          ...pythonPackageFiles('mypkg'),
          '.gitignore': '.venv/\n__pycache__/\nwheels/\n*-src/\n',
          'check.py': 'import mypkg, sys\nsys.exit(0 if mypkg.VALUE == 1 else 1)\n',
          'warren.yaml': 'provision:\n  - { path: .venv, mode: cow }\n',
        })) {
          fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
          fs.writeFileSync(path.join(root, rel), content);
        }
        makeVenv(root);
        wheel = buildWheel(path.join(root, '.venv/bin/pip'), root, 'extra');
      });
      const mainVenv = path.join(repo.root, '.venv');
      const before = treeDigest(mainVenv);
      const made = repo.warren(['--json', 'new', 'feat', 'f']);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).not.toContain('fell back');
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      const record = repo.json<{
        data: { provision: (Provisioned & { fuse?: boolean; namespaced?: boolean; upper: string; lower: string })[] };
      }>(['show', 'f']).data.provision[0];
      expect(record).toMatchObject({
        path: '.venv',
        mode: 'cow',
        method: 'fuse-overlayfs',
        fuse: true,
        isolated: true,
      });
      expect(record?.namespaced).toBeUndefined();
      expect(fuseMountsTouching(repo.base)).toEqual([path.join(ws, '.venv')]);
      const rewritten = record?.relocation?.rewritten.map((f) => f.path) ?? [];
      expect(rewritten).toEqual(expect.arrayContaining(['pyvenv.cfg', 'bin/pip', 'bin/activate', 'bin/mypkg-tool']));
      expect(rewritten.some((p) => /site-packages\/__editable__\.mypkg-0\.1\.pth$/.test(p))).toBe(true);
      expect(record?.relocation?.left).toEqual([]);
      // The rewrites went through the mount into the task's upper layer, as the user; the snapshot still names the main checkout.
      expect(fs.statSync(path.join(record?.upper ?? '', 'bin/pip')).uid).toBe(65534);
      expect(filesNaming(record?.upper ?? '', repo.root)).toEqual([]);
      expect(execFileSync('find', [record?.upper ?? '', '-name', '*.warren-*'], { encoding: 'utf8' })).toBe(''); // no rewrite's temp file left
      expect(fs.readFileSync(path.join(record?.lower ?? '', 'bin/pip'), 'utf8').split('\n')[0]).toBe(
        `#!${repo.root}/.venv/bin/python3`,
      );
      // What a plain shell of the user sees in the workspace (root may not enter the user's fuse mount): every byte of the venv.
      const naming = shellAsNobody(
        ws,
        'grep -rlF --exclude-dir=__pycache__ "$MAIN" .venv; test $? -eq 1'.replace('"$MAIN"', `'${repo.root}'`),
      );
      expect(naming.code, naming.stdout + naming.stderr).toBe(0);
      expect(shellAsNobody(ws, 'head -1 .venv/bin/pip').stdout).toBe(`#!${ws}/.venv/bin/python3\n`);
      expect(
        repo.json<{ provisioned: { changedCount: number; isolated: boolean }[] }>(['status', 'f']).provisioned[0],
      ).toMatchObject({ changedCount: 0, isolated: true });

      // pip install from a plain shell in the workspace, outside warren: into the task's venv.
      const plain = shellAsNobody(
        ws,
        `HOME=${repo.home} PIP_NO_INDEX=1 .venv/bin/pip install -q --no-index '${wheel}' && .venv/bin/python -c 'import extra, sys; print(extra.__file__)'`,
      );
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout.trim().startsWith(`${ws}/.venv/lib/`)).toBe(true);
      expect(fs.existsSync(path.join(record?.upper ?? '', 'bin/extra-tool'))).toBe(true);
      // And through exec (in warren's own run namespace, which sees the same mount).
      const viaExec = repo.warren(
        ['exec', 'f', '--', '.venv/bin/pip', 'install', '-q', '--no-index', '--force-reinstall', wheel],
        { PIP_NO_INDEX: '1' },
      );
      expect(viaExec.code, viaExec.stderr).toBe(0);
      expect(treeDigest(mainVenv)).toBe(before);
      expect(fs.existsSync(path.join(sitePackages(repo.root), 'extra'))).toBe(false);
      const status = repo.json<{
        provisioned: { changed: { path: string }[]; packages?: { name: string; change: string }[] }[];
      }>(['status', 'f']).provisioned[0];
      const changed = status?.changed.map((c) => c.path) ?? [];
      expect(changed).toContain('.venv/bin/extra-tool');
      expect(changed.filter((p) => p === '.venv/bin/pip' || p === '.venv/pyvenv.cfg')).toEqual([]);

      // The editable install runs the task's src: broken in the task, the task's check fails and the main checkout's passes.
      const tool = shellAsNobody(ws, '.venv/bin/mypkg-tool');
      expect(tool.code, tool.stderr).toBe(0);
      expect(tool.stdout.trim()).toBe(path.join(ws, 'src/mypkg/__init__.py'));
      expect(repo.warren(['exec', 'f', '--', '.venv/bin/python', 'check.py']).code).toBe(0);
      expect(shellAsNobody(ws, "sed -i 's/VALUE = 1/VALUE = 2/' src/mypkg/__init__.py").code).toBe(0);
      expect(repo.warren(['exec', 'f', '--', '.venv/bin/python', 'check.py']).code).not.toBe(0);
      expect(shellAsNobody(ws, '.venv/bin/python check.py').code).not.toBe(0);
      expect(shellAsNobody(repo.root, '.venv/bin/python check.py').code).toBe(0);
      expect(treeDigest(mainVenv)).toBe(before);

      const removed = repo.warren(['rm', '--discard', 'f']);
      expect(removed.code, removed.stdout + removed.stderr).toBe(0);
      expect(fuseMountsTouching(repo.base)).toEqual([]);
      expect(treeDigest(mainVenv)).toBe(before);
    }, 300_000);
  },
);

describe.skipIf(noPnpm !== null || noOverlay !== null)(
  'pnpm .bin shims in a workspace resolve in the workspace',
  () => {
    it("rewrites NODE_PATH in the shims; the task's bin resolves its dependency in the task", async () => {
      const repo = makeRepo({
        files: {
          ...pnpmProjectFiles(),
          '.gitignore': 'node_modules/\n',
          'warren.yaml': 'provision:\n  - { path: node_modules, mode: cow }\n',
        },
      });
      onTestFinished(() => unmountUnder(path.dirname(repo.root)));
      pnpmInstall(repo.root, path.join(path.dirname(repo.root), 'pnpm-store'));
      repo.commit('pnpm lockfile');
      expect(filesNaming(path.join(repo.root, 'node_modules'), repo.root)).toContain('.bin/tool');
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'p');
      expect(made.code, made.stderr).toBe(0);
      const task = await show(repo, 'p');
      expect(task.data.provision[0]?.isolated).toBe(true);
      expect(task.data.provision[0]?.relocation?.rewritten.map((f) => f.path)).toContain('.bin/tool');
      expect(filesNaming(path.join(made.json.path, 'node_modules'), repo.root)).toEqual([]);
      const ran = await repo.warren('exec', 'p', '--', 'node_modules/.bin/tool');
      expect(ran.code, ran.stderr).toBe(0);
      const out = JSON.parse((ran.stdout + ran.stderr).split('\n').find((l) => l.startsWith('{')) ?? '{}') as {
        lib: string;
        nodePath: string;
      };
      expect(out.lib.startsWith(`${made.json.path}/node_modules/`)).toBe(true);
      const entries = out.nodePath.split(':');
      expect(entries.length).toBeGreaterThan(1);
      for (const entry of entries) expect(entry.startsWith(`${made.json.path}/node_modules/`)).toBe(true);
      // The main checkout's shim still names the main checkout.
      expect(fs.readFileSync(path.join(repo.root, 'node_modules/.bin/tool'), 'utf8')).toContain(
        `${repo.root}/node_modules/.pnpm`,
      );
    }, 300_000);
  },
);
