import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { fuseMountsTouching, NOBODY, nobodyRepo, shellAsNobody, type NobodyRepo } from '../helpers/nobody.js';
import { alive } from '../helpers/procs.js';
import { makeNodeModules, treeDigest } from '../helpers/tree.js';

/**
 * cow without root, on the host: fuse-overlayfs mounts the layer where the user's own processes
 * (an editor, a language server, a shell, an agent started in the folder) see it. Run as uid
 * 65534 through setpriv; what it sees is checked from a plain shell as that user, outside warren.
 */

const noFuse = unavailable(import.meta.filename, 'fuse-overlayfs');

interface Provisioned {
  path: string;
  mode: string;
  method: string;
  fuse?: boolean;
  namespaced?: boolean;
  upper?: string;
  lower?: string;
}

function cowRepo(): NobodyRepo {
  return nobodyRepo((root) => {
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n');
    makeNodeModules(root);
  });
}

function provisionOf(repo: NobodyRepo, id: string): Provisioned {
  const [rec] = repo.json<{ data: { provision: Provisioned[] } }>(['show', id]).data.provision;
  if (!rec) throw new Error(`no provision record for ${id}`);
  return rec;
}

describe.skipIf(noFuse !== null)('cow as an unprivileged user, through fuse-overlayfs', () => {
  it('a plain shell in the workspace sees the tree; its writes stay in the task; rm unmounts and never deletes through the mount', () => {
    const repo = cowRepo();
    const main = path.join(repo.root, 'node_modules');
    const before = treeDigest(main);
    const made = repo.warren(['--json', 'new', 'feat', 'one']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).not.toContain('cow fell back');
    expect(made.stderr).not.toContain('visible only to commands run through warren');
    const one = (JSON.parse(made.stdout) as { path: string }).path;
    const two = repo.json<{ path: string }>(['new', 'feat', 'two']).path;
    const rec = provisionOf(repo, 'one');
    expect(rec).toMatchObject({ mode: 'cow', method: 'fuse-overlayfs', fuse: true });
    expect(rec.namespaced).toBeUndefined();
    expect(fuseMountsTouching(repo.base).sort()).toEqual(
      [path.join(one, 'node_modules'), path.join(two, 'node_modules')].sort(),
    );
    const lowerBefore = treeDigest(rec.lower ?? '');

    // Outside warren, as the user: the tree is there.
    const ls = shellAsNobody(one, 'ls -A node_modules && cat node_modules/left-pad/index.js');
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toContain('left-pad\n');
    expect(ls.stdout).toContain('module.exports = (s, n) => String(s).padStart(n);');

    // A write, a delete and an npm-install-like replace from a plain shell land in one's upper layer only.
    const wrote = shellAsNobody(
      one,
      'echo patched > node_modules/left-pad/index.js && rm node_modules/.bin/left-pad && rm -rf node_modules/dep && mkdir node_modules/dep && echo new > node_modules/added.js',
    );
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(fs.readFileSync(path.join(rec.upper ?? '', 'left-pad/index.js'), 'utf8')).toBe('patched\n');
    expect(fs.statSync(path.join(rec.upper ?? '', 'added.js')).uid).toBe(NOBODY);
    const seenByTwo = shellAsNobody(
      two,
      'cat node_modules/left-pad/index.js && readlink node_modules/.bin/left-pad && ls node_modules/dep',
    );
    expect(seenByTwo.stdout).toBe(
      'module.exports = (s, n) => String(s).padStart(n);\n../left-pad/cli.js\nlib\nnode_modules\npackage.json\n',
    );
    expect(treeDigest(main)).toBe(before);
    expect(treeDigest(rec.lower ?? '')).toBe(lowerBefore);

    // exec (in its own namespace) sees the same mount, changes included.
    const exec = repo.warren(['exec', 'one', '--', 'cat', 'node_modules/left-pad/index.js', 'node_modules/added.js']);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toBe('patched\nnew\n');

    // status reads the merged view.
    const status = repo.json<{ provisioned: { changed: { path: string; change: string }[] }[] }>(['status', 'one']);
    // Every change, and none of fuse-overlayfs's markers (`.wh..wh..opq`, `.wh.NAME`).
    expect(status.provisioned[0]?.changed).toEqual([
      { path: 'node_modules/.bin/left-pad', change: 'deleted' },
      { path: 'node_modules/added.js', change: 'added' },
      { path: 'node_modules/dep/lib', change: 'deleted' },
      { path: 'node_modules/dep/node_modules', change: 'deleted' },
      { path: 'node_modules/dep/package.json', change: 'deleted' },
      { path: 'node_modules/left-pad/index.js', change: 'modified' },
    ]);

    // rm: fusermount -u first, then the layers; the snapshot and the main checkout untouched.
    const layers = path.dirname(rec.upper ?? '');
    const removed = repo.warren(['rm', 'one']);
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(fuseMountsTouching(one)).toEqual([]);
    expect(fs.existsSync(one)).toBe(false);
    expect(fs.existsSync(layers)).toBe(false);
    expect(treeDigest(rec.lower ?? '')).toBe(lowerBefore);
    expect(treeDigest(main)).toBe(before);
    expect(repo.warren(['rm', 'two']).code).toBe(0);
    expect(fuseMountsTouching(repo.base)).toEqual([]);
  });

  it('a dead daemon or a lost mount is mounted again on next use, keeping the private changes', () => {
    const repo = cowRepo();
    const ws = repo.json<{ path: string }>(['new', 'feat', 'a']).path;
    const target = path.join(ws, 'node_modules');
    expect(shellAsNobody(ws, 'echo kept > node_modules/mine.js').code).toBe(0);
    // A lost mount (a reboot): unmounted behind warren's back.
    expect(shellAsNobody(ws, `fusermount3 -u ${target}`).code).toBe(0);
    expect(shellAsNobody(ws, 'ls node_modules').stdout).toBe('');
    const again = repo.json<{ remounted: string[] }>(['provision', 'a']);
    expect(again.remounted).toEqual(['node_modules']);
    expect(shellAsNobody(ws, 'cat node_modules/mine.js').stdout).toBe('kept\n');

    // A killed daemon: the mount stays, dead (ENOTCONN); exec mounts it again before running.
    const daemon = fs
      .readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .find((p) => {
        try {
          const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
          return argv[0]?.endsWith('fuse-overlayfs') === true && argv.includes(target);
        } catch {
          return false;
        }
      });
    expect(daemon).toBeDefined();
    process.kill(Number(daemon), 'SIGKILL');
    // A signal is delivered, not waited for: the mount is dead once the daemon is.
    for (let waited = 0; alive(Number(daemon)) && waited < 5000; waited += 20) execFileSync('sleep', ['0.02']);
    const dead = shellAsNobody(ws, 'ls node_modules');
    expect(dead.stderr).toContain('Transport endpoint is not connected');
    const cat = repo.warren(['exec', 'a', '--', 'cat', 'node_modules/mine.js']);
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toBe('kept\n');
    expect(shellAsNobody(ws, 'cat node_modules/left-pad/index.js').code).toBe(0);
    expect(repo.warren(['rm', 'a']).code).toBe(0);
  });

  it('gc unmounts the layer of a task whose record is gone, then deletes it; never through the mount', () => {
    const repo = cowRepo();
    const before = treeDigest(path.join(repo.root, 'node_modules'));
    const ws = repo.json<{ path: string }>(['new', 'feat', 'lost']).path;
    const target = path.join(ws, 'node_modules');
    const rec = provisionOf(repo, 'lost');
    // A crash that lost the record: the mount and layers stay behind.
    const db = new Database(path.join(repo.home, 'state.db'));
    db.prepare("DELETE FROM tasks WHERE id = 'lost'").run();
    db.close();
    const gc = repo.json<{ removed: { kind: string; action: string; path: string }[] }>(['gc']);
    expect(gc.removed).toContainEqual(expect.objectContaining({ kind: 'mounted', action: 'unmount', path: target }));
    expect(fuseMountsTouching(repo.base)).toEqual([]);
    expect(fs.existsSync(path.dirname(rec.upper ?? ''))).toBe(false);
    // The snapshot: no task uses it and, unmounted first, nothing mounts it.
    expect(fs.existsSync(rec.lower ?? '')).toBe(false);
    expect(treeDigest(path.join(repo.root, 'node_modules'))).toBe(before);
  });
});
