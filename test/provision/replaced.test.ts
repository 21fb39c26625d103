import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { nobodyRepo, shellAsNobody, type Cli } from '../helpers/nobody.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, unmountUnder } from '../helpers/tree.js';

/**
 * A cow path whose folder something replaced wholesale (`rm -rf node_modules && cp -r … node_modules`,
 * a package manager swapping the folder), for each rung of the ladder: the kernel overlay as root,
 * fuse-overlayfs and the run's user namespace as uid 65534. The layer is never mounted over what
 * replaced it (which would hide it), `status` says what really happened, and moving the folder
 * away brings the layer back with its own changes.
 */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const noFuse = unavailable(import.meta.filename, 'fuse-overlayfs');
const noUserns = unavailable(import.meta.filename, 'nobody') ?? unavailable(import.meta.filename, 'overlay-userns');

interface Rung {
  main: string;
  warren(args: readonly string[]): Cli;
  /** A plain shell of the workspace's user, outside warren. */
  shell(cwd: string, script: string): Cli;
  /** Takes the layer off the host, as a reboot (or `fusermount -u`) does; nothing for a namespaced one. */
  unmount(target: string): void;
}

const FILES: Record<string, string> = {
  '.gitignore': 'node_modules/\n',
  'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
  'warren.yaml': 'provision:\n  - { path: node_modules, mode: cow }\n',
};

function asRoot(): Rung {
  const repo = makeRepo({ files: FILES });
  makeNodeModules(repo.root);
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return asRootOf(repo);
}

function asRootOf(repo: TestRepo): Rung {
  return {
    main: repo.root,
    warren: (args) => {
      const r = spawnSync(process.execPath, [path.resolve(import.meta.dirname, '../../bin/warren.js'), ...args], {
        cwd: repo.root,
        encoding: 'utf8',
        env: { ...process.env, HOME: repo.home, WARREN_HOME: repo.home },
      });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    shell: (cwd, script) => {
      const r = spawnSync('sh', ['-c', script], { cwd, encoding: 'utf8' });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    unmount: (target) => expect(spawnSync('umount', [target]).status).toBe(0),
  };
}

function asNobody(cow: 'fuse' | 'userns'): Rung {
  const repo = nobodyRepo((root) => {
    for (const [rel, content] of Object.entries(FILES)) fs.writeFileSync(path.join(root, rel), content);
    makeNodeModules(root);
  });
  return {
    main: repo.root,
    warren: (args) => repo.warren(args, cow === 'userns' ? { WARREN_COW: 'userns' } : {}),
    shell: shellAsNobody,
    unmount: (target) => {
      if (cow === 'fuse') expect(shellAsNobody('/', `fusermount3 -u '${target}'`).code).toBe(0);
    },
  };
}

interface Status {
  provisioned: {
    path: string;
    changed: { path: string; change: string }[];
    packages?: { name: string; change: string; before?: string; after?: string }[];
    replaced?: { by: string; entries: number; layerChanges: number };
  }[];
}

function mountedAt(target: string): boolean {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === target);
}

function replacedFolder(rung: Rung, method: string): void {
  const made = rung.warren(['--json', 'new', 'feat', 'r']);
  expect(made.code, made.stderr).toBe(0);
  const ws = (JSON.parse(made.stdout) as { path: string }).path;
  const target = path.join(ws, 'node_modules');
  const shown = JSON.parse(rung.warren(['--json', 'show', 'r']).stdout) as {
    data: { provision: { method: string }[] };
  };
  expect(shown.data.provision[0]?.method).toBe(method);
  // A change of the task's own, in the layer.
  expect(rung.warren(['exec', 'r', '--', 'sh', '-c', 'echo mine > node_modules/mine.js']).code).toBe(0);

  // The layer goes off the host (a reboot; a namespaced one never was on it), and the folder is replaced by another, from a plain shell.
  rung.unmount(target);
  const replace = rung.shell(
    ws,
    `rm -rf node_modules && cp -r '${rung.main}/node_modules' node_modules && rm -rf node_modules/dep && echo new > node_modules/new.js && echo 2 > node_modules/left-pad/index.js`,
  );
  expect(replace.code, replace.stderr).toBe(0);

  const status = rung.warren(['--json', 'status', 'r']);
  expect(status.code, status.stderr).toBe(0);
  const nm = (JSON.parse(status.stdout) as Status).provisioned[0];
  expect(nm?.replaced).toEqual({ by: 'folder', entries: 4, layerChanges: 1 });
  expect(nm?.changed).toEqual([
    { path: 'node_modules/dep', change: 'deleted' },
    { path: 'node_modules/left-pad/index.js', change: 'modified' },
    { path: 'node_modules/new.js', change: 'added' },
  ]);
  expect(nm?.packages).toEqual([
    { name: 'new.js', kind: 'package', change: 'added', changes: 1 },
    { name: 'left-pad', kind: 'package', change: 'changed', before: '1.3.0', after: '1.3.0', changes: 1 },
    { name: 'dep', kind: 'package', change: 'removed', before: '2.0.0', changes: 1 },
  ]);
  // status did not mount the layer over the folder, which would hide it.
  expect(mountedAt(target)).toBe(false);
  const human = rung.warren(['status', 'r']);
  expect(human.stdout).toContain(
    "node_modules (cow): REPLACED by a plain folder (4 entries), not its copy-on-write layer: 3 change(s) in 3 package(s) against the layer's snapshot\n",
  );
  expect(human.stdout).toContain('  removed  dep 2.0.0 (1 change)\n');
  expect(human.stdout).toContain(
    '  the layer is not mounted over it (that would hide it from you); its own 1 change(s) are kept, out of view; move the folder away to use the layer again\n',
  );

  // A command through warren sees the folder, as every other process does, and is told why.
  const ls = rung.warren(['exec', 'r', '--', 'ls', '-A', 'node_modules']);
  expect(ls.code, ls.stderr).toBe(0);
  expect(ls.stdout).toBe('.bin\n.package-lock.json\nleft-pad\nnew.js\n');
  expect(ls.stderr).toContain(
    'warren: warn: node_modules is no longer its copy-on-write layer: a plain folder (4 entries) replaced it, so warren does not mount the layer over it',
  );
  expect(mountedAt(target)).toBe(false);

  // --refresh keeps the folder, and says what to do.
  const refresh = rung.warren(['provision', 'r', '--refresh']);
  expect(refresh.code).toBe(1);
  expect(refresh.stderr).toContain(
    `${target} is no longer its copy-on-write layer: a plain folder (4 entries) replaced it, which is kept; move it away (or delete it) first`,
  );
  expect(rung.shell(ws, 'cat node_modules/new.js').stdout).toBe('new\n');
  const provision = rung.warren(['provision', 'r']);
  expect(provision.code, provision.stderr).toBe(0);
  expect(provision.stdout).toContain(
    'node_modules is no longer its copy-on-write layer: a plain folder (4 entries) replaced it; not mounted over it (`warren status r` says what it holds)',
  );
  expect(mountedAt(target)).toBe(false);

  // Moved away: the layer is back, with the task's own change.
  expect(rung.shell(ws, 'mv node_modules nm.mine').code).toBe(0);
  const back = rung.warren(['exec', 'r', '--', 'cat', 'node_modules/mine.js', 'node_modules/dep/package.json']);
  expect(back.code, back.stderr).toBe(0);
  expect(back.stdout).toBe('mine\n{"name":"dep","version":"2.0.0"}\n');
  const after = JSON.parse(rung.warren(['--json', 'status', 'r']).stdout) as Status;
  expect(after.provisioned[0]?.replaced).toBeUndefined();
  expect(after.provisioned[0]?.changed).toEqual([{ path: 'node_modules/mine.js', change: 'added' }]);
}

describe('a cow folder replaced wholesale', () => {
  it.skipIf(noOverlay !== null)(
    'root, the kernel overlay: status says what replaced it, and nothing mounts over it',
    () => {
      replacedFolder(asRoot(), 'overlay');
    },
  );
  it.skipIf(noFuse !== null)(
    'uid 65534, fuse-overlayfs: status says what replaced it, and nothing mounts over it',
    () => {
      replacedFolder(asNobody('fuse'), 'fuse-overlayfs');
    },
  );
  it.skipIf(noUserns !== null)(
    "uid 65534, the run's user namespace: status says what replaced it, and no run mounts over it",
    () => {
      replacedFolder(asNobody('userns'), 'overlay (user namespace)');
    },
  );
});

describe.skipIf(noOverlay !== null)('a cow layer mounted again (root)', () => {
  it('is never mounted through a parent replaced by a symlink, which would carry the mount out of the workspace', () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'packages/a/package.json': '{"name":"a"}\n',
        'packages/a/package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
        'warren.yaml': 'provision:\n  - { path: packages/a/node_modules, mode: cow }\n',
      },
    });
    makeNodeModules(repo.root, 'packages/a/node_modules');
    onTestFinished(() => unmountUnder(path.dirname(repo.root)));
    const rung = asRootOf(repo);
    const made = rung.warren(['--json', 'new', 'feat', 'p']);
    expect(made.code, made.stderr).toBe(0);
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    rung.unmount(path.join(ws, 'packages/a/node_modules'));
    const outside = path.join(path.dirname(repo.root), 'outside');
    fs.mkdirSync(path.join(outside, 'node_modules'), { recursive: true });
    expect(rung.shell(ws, `rm -rf packages/a && ln -s '${outside}' packages/a`).code).toBe(0);
    const status = rung.warren(['status', 'p']);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(
      `${ws}/packages/a/node_modules, where packages/a/node_modules's copy-on-write layer is mounted, is no longer a plain directory of the workspace`,
    );
    expect(mountedAt(path.join(outside, 'node_modules'))).toBe(false);
    expect(fs.readdirSync(path.join(outside, 'node_modules'))).toEqual([]);
  });
});
