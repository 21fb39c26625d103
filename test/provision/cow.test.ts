import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, unmountUnder, treeDigest } from '../helpers/tree.js';

/** cow provisioning against real overlay mounts (root). Skipped, with the reason printed, where the machine cannot mount. */

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

interface Provisioned {
  path: string;
  mode: string;
  isolated: boolean;
  entries: number;
  snapshot?: string;
  upper?: string;
}
interface Status {
  tracked: { code: string; path: string }[];
  provisioned: { path: string; mode: string; changed: { path: string; change: string }[] }[];
  stale: boolean;
}

function cowRepo(): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n',
      'package.json': '{"name":"app","dependencies":{"left-pad":"1.3.0","dep":"2.0.0"}}\n',
      'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
      'warren.yaml': 'provision:\n  - { path: node_modules, mode: cow }\n',
    },
  });
  makeNodeModules(repo.root);
  // Registered after makeRepo's cleanup, so it runs first: a mounted folder cannot be deleted.
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return repo;
}

async function newTask(repo: TestRepo, id: string): Promise<{ path: string; provision: Provisioned[] }> {
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(made.code, made.stderr).toBe(0);
  const shown = await repo.warrenJson<{ data: { provision: Provisioned[] } }>('show', id);
  return { path: made.json.path, provision: shown.json.data.provision };
}

function isMounted(p: string): boolean {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === p);
}

describe.skipIf(noOverlay !== null)('cow provisioning (overlay)', () => {
  it('isolates: a write, a delete and an npm-install-like replace in A leave B and the main checkout byte-identical', async () => {
    const repo = cowRepo();
    const a = await newTask(repo, 'a');
    const b = await newTask(repo, 'b');
    expect(a.provision).toMatchObject([{ path: 'node_modules', mode: 'cow', isolated: true }]);
    expect(b.provision[0]?.snapshot).toBe(a.provision[0]?.snapshot); // one snapshot, shared
    const main = path.join(repo.root, 'node_modules');
    const before = { main: treeDigest(main), b: treeDigest(path.join(b.path, 'node_modules')) };
    expect(before.b).toBe(before.main);

    const nmA = path.join(a.path, 'node_modules');
    fs.writeFileSync(path.join(nmA, 'left-pad/index.js'), 'module.exports = "patched";\n');
    fs.rmSync(path.join(nmA, '.bin/left-pad'));
    // What `npm install` does to a package: remove the folder, write a new one in its place.
    fs.rmSync(path.join(nmA, 'dep'), { recursive: true });
    fs.mkdirSync(path.join(nmA, 'dep'));
    fs.writeFileSync(path.join(nmA, 'dep/package.json'), '{"name":"dep","version":"3.0.0"}\n');

    expect(treeDigest(main)).toBe(before.main);
    expect(treeDigest(path.join(b.path, 'node_modules'))).toBe(before.b);
    expect(fs.readFileSync(path.join(nmA, 'left-pad/index.js'), 'utf8')).toContain('patched');

    const status = await repo.warrenJson<Status>('status', 'a');
    expect(status.code).toBe(0);
    expect(status.json.tracked).toEqual([]);
    const changed = status.json.provisioned[0]?.changed ?? [];
    expect(changed).toEqual(
      expect.arrayContaining([
        { path: 'node_modules/left-pad/index.js', change: 'modified' },
        { path: 'node_modules/.bin/left-pad', change: 'deleted' },
        { path: 'node_modules/dep/lib', change: 'deleted' },
      ]),
    );
    const statusB = await repo.warrenJson<Status>('status', 'b');
    expect(statusB.json.provisioned[0]?.changed).toEqual([]);
  });

  it('two concurrent warren new take the snapshot once and both mount it', async () => {
    const repo = cowRepo();
    const [a, b] = await Promise.all([
      repo.warrenJson<{ path: string }>('new', 'feat', 'a'),
      repo.warrenJson<{ path: string }>('new', 'feat', 'b'),
    ]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    const shown = await Promise.all(
      ['a', 'b'].map((id) =>
        repo.warrenJson<{ data: { provision: Provisioned[] }; events: { kind: string }[] }>('show', id),
      ),
    );
    expect(shown[0]?.json.data.provision[0]?.snapshot).toBe(shown[1]?.json.data.provision[0]?.snapshot);
    const taken = shown.flatMap((s) => s.json.events.filter((e) => e.kind === 'provision.snapshot'));
    expect(taken).toHaveLength(1);
    expect(fs.readdirSync(path.join(repo.home, 'snapshots')).filter((n) => !n.endsWith('.lock'))).toHaveLength(1);
    for (const ws of [a.json.path, b.json.path]) expect(isMounted(path.join(ws, 'node_modules'))).toBe(true);
  });

  it('reports stale after a lockfile edit, and --refresh provisions again', async () => {
    const repo = cowRepo();
    const a = await newTask(repo, 'a');
    expect((await repo.warrenJson<Status>('status', 'a')).json.stale).toBe(false);
    // A lockfile that wants a package the tree does not have (the tree itself is unchanged).
    fs.writeFileSync(
      path.join(a.path, 'package-lock.json'),
      '{"lockfileVersion":3,"packages":{"node_modules/x":{"version":"1.0.0"}}}\n',
    );
    const status = await repo.warrenJson<Status>('status', 'a');
    expect(status.json.stale).toBe(true);
    expect(status.json.tracked).toEqual([{ code: ' M', path: 'package-lock.json' }]);

    fs.writeFileSync(path.join(a.path, 'node_modules/dep/lib/main.js'), 'changed\n');
    const refreshed = await repo.warrenJson<{ provision: Provisioned[] }>('provision', 'a', '--refresh');
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(fs.readFileSync(path.join(a.path, 'node_modules/dep/lib/main.js'), 'utf8')).toBe('exports.x = 1;\n');
  });

  it('rm unmounts before removing, leaves the main checkout intact, and gc drops the unused snapshot', async () => {
    const repo = cowRepo();
    const main = path.join(repo.root, 'node_modules');
    const digest = treeDigest(main);
    const a = await newTask(repo, 'a');
    const mountPoint = path.join(a.path, 'node_modules');
    expect(isMounted(mountPoint)).toBe(true);
    fs.writeFileSync(path.join(mountPoint, 'new-file.js'), 'x\n');
    // The task's own overlay is part of it, not a stray.
    expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);

    const removed = await repo.warren('rm', 'a');
    expect(removed.code, removed.stderr).toBe(0);
    expect(isMounted(mountPoint)).toBe(false);
    expect(fs.existsSync(a.path)).toBe(false);
    expect(treeDigest(main)).toBe(digest);
    expect(fs.existsSync(path.dirname(a.provision[0]?.upper ?? '/nonexistent'))).toBe(false);

    const snapshotDir = path.join(repo.home, 'snapshots', a.provision[0]?.snapshot ?? '');
    expect(fs.existsSync(snapshotDir)).toBe(true);
    const gc = await repo.warrenJson<{ removed: { kind: string; path: string }[] }>('gc');
    expect(gc.json.removed).toContainEqual(expect.objectContaining({ kind: 'snapshot', path: snapshotDir }));
    expect(fs.existsSync(snapshotDir)).toBe(false);
    expect(treeDigest(main)).toBe(digest);
  });

  it('mounts a layer again when it is not mounted (after a reboot), keeping its private changes', async () => {
    const repo = cowRepo();
    const a = await newTask(repo, 'a');
    const mountPoint = path.join(a.path, 'node_modules');
    fs.writeFileSync(path.join(mountPoint, 'mine.js'), 'kept\n');
    execFileSync('umount', [mountPoint]);
    expect(fs.readdirSync(mountPoint)).toEqual([]);
    const again = await repo.warrenJson<{ remounted: string[] }>('provision', 'a');
    expect(again.json.remounted).toEqual(['node_modules']);
    expect(fs.readFileSync(path.join(mountPoint, 'mine.js'), 'utf8')).toBe('kept\n');
    expect(fs.existsSync(path.join(mountPoint, 'left-pad/index.js'))).toBe(true);
    const shown = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
    expect(shown.json.events.map((e) => e.kind)).toContain('provision.remount');

    // exec mounts it again on its own before running anything.
    execFileSync('umount', [mountPoint]);
    const cat = await repo.warrenJson<{ exitCode: number }>('exec', 'a', '--', 'cat', 'node_modules/mine.js');
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stderr).toContain('kept');
    expect(fs.readFileSync(path.join(mountPoint, 'mine.js'), 'utf8')).toBe('kept\n');
  });

  it('gc of a warren new that died after mounting unmounts before removing the worktree', async () => {
    const repo = cowRepo();
    const main = path.join(repo.root, 'node_modules');
    const digest = treeDigest(main);
    const a = await newTask(repo, 'a');
    const mountPoint = path.join(a.path, 'node_modules');
    // What a crash mid-`new` leaves: the row still `creating`, no live lock holder, the layer mounted.
    const db = new Database(path.join(repo.home, 'state.db'));
    db.prepare("UPDATE tasks SET state = 'creating' WHERE id = 'a'").run();
    db.close();
    const gc = await repo.warrenJson<{ removed: { kind: string; path: string }[]; kept: unknown[] }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed).toContainEqual(expect.objectContaining({ kind: 'unclaimed', path: a.path }));
    expect(isMounted(mountPoint)).toBe(false);
    expect(fs.existsSync(a.path)).toBe(false);
    expect(treeDigest(main)).toBe(digest);
  });

  it('gc unmounts and deletes the overlay of a task whose record is gone', async () => {
    const repo = cowRepo();
    const a = await newTask(repo, 'a');
    const mountPoint = path.join(a.path, 'node_modules');
    // A crash that lost the record: the mount and layers stay behind.
    const db = new Database(path.join(repo.home, 'state.db'));
    db.prepare("DELETE FROM tasks WHERE id = 'a'").run();
    db.close();
    const gc = await repo.warrenJson<{ removed: { kind: string; action: string; path: string }[] }>('gc');
    expect(gc.json.removed).toContainEqual(
      expect.objectContaining({ kind: 'mounted', action: 'unmount', path: mountPoint }),
    );
    expect(isMounted(mountPoint)).toBe(false);
  });
});
