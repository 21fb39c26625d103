import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { tmpDir } from '../helpers/repo.js';
import type { Task } from '../../src/state/types.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { formatBytes, overBudget, parseBytes } from '../../src/provision/modes/budget.js';
import { watchCopy } from '../../src/provision/modes/copy.js';
import {
  excludedByOurLine,
  ignoredAsInMain,
  joinBlock,
  literalPattern,
  splitBlock,
} from '../../src/provision/modes/exclude.js';
import { diffManifests, type Manifest } from '../../src/provision/status/manifest.js';
import { dedupe, normalizeProvisionPath } from '../../src/provision/modes/sources.js';
import { opacityProbes, upperChanges } from '../../src/provision/status/status.js';
import { SameVerdicts } from '../../src/provision/status/same-content.js';
import { fsNow, sharedChangesSince, treeChangesSince } from '../../src/provision/status/since.js';
import { selectIncluded, vcsMetadataOf } from '../../src/provision/modes/include.js';
import { keyOf, parsePnpmDir, summarise } from '../../src/provision/status/packages.js';
import {
  findingsForCopy,
  newFindings,
  noteEntry,
  scanListings,
  staysInside,
} from '../../src/provision/modes/contain.js';
import { copyGroups } from '../../src/provision/provision.js';
import { expandGlob, isGlob } from '../../src/provision/modes/glob.js';
import { npmWorkspaces, pnpmWorkspaces } from '../../src/provision/modes/workspaces.js';
import { workspaceInstall } from '../../src/provision/snapshots/installed.js';
import { walkTree } from '../../src/provision/status/manifest.js';
import { execFileSync } from 'node:child_process';

describe('normalizeProvisionPath', () => {
  it.each([
    ['node_modules', 'node_modules'],
    ['./node_modules/', 'node_modules'],
    ['packages/a//node_modules', 'packages/a/node_modules'],
    ['.env', '.env'],
    ['.github', '.github'],
  ])('accepts %j as %j', (raw, expected) => {
    expect(normalizeProvisionPath(raw)).toEqual({ ok: true, path: expected });
  });

  it.each([
    ['/etc/passwd', 'is absolute'],
    ['\\\\server\\share', 'is absolute'],
    ['C:/Windows', 'is absolute'],
    ['../sibling', 'contains ".."'],
    ['a/../../b', 'contains ".."'],
    ['.git', 'is inside .git'],
    ['.git/hooks', 'is inside .git'],
    ['sub/.GIT/config', 'is inside .git'],
    ['.', 'names the repository root itself'],
    ['a\0b', 'contains a NUL byte'],
  ])('refuses %j (%s)', (raw, detail) => {
    expect(normalizeProvisionPath(raw)).toEqual({ ok: false, detail });
  });
});

describe('dedupe', () => {
  it('keeps the first entry for a path and skips overlapping ones', () => {
    const { kept, skipped } = dedupe([
      { path: 'node_modules', mode: 'cow', from: 'warren.yaml' },
      { path: 'node_modules', mode: 'copy', from: '.worktreeinclude' },
      { path: 'node_modules/.cache', mode: 'copy', from: '.worktreeinclude' },
      { path: '.env', mode: 'copy', from: '.worktreeinclude' },
    ]);
    expect(kept.map((k) => `${k.path}:${k.mode}`)).toEqual(['node_modules:cow', '.env:copy']);
    expect(skipped.map((s) => [s.path, s.reason])).toEqual([
      ['node_modules', 'duplicate'],
      ['node_modules/.cache', 'duplicate'],
    ]);
  });
});

describe('info/exclude block', () => {
  it('escapes gitignore syntax in a literal path', () => {
    expect(literalPattern('node_modules')).toBe('/node_modules');
    expect(literalPattern('#weird[1]*?!')).toBe('/\\#weird\\[1\\]\\*\\?\\!');
  });

  it("keeps the user's lines and replaces only warren's block", () => {
    const user = '# user stuff\n*.swp\n';
    const withOurs = joinBlock(splitBlock(user).outside, ['/node_modules']);
    expect(withOurs).toContain('*.swp\n# >>> warren');
    const { outside, ours } = splitBlock(withOurs);
    expect(outside).toEqual(['# user stuff', '*.swp']);
    expect(ours).toEqual(['/node_modules']);
    expect(joinBlock(outside, [])).toBe(user);
  });
});

describe('diffManifests', () => {
  it('reports added, modified (size, mtime or inode) and deleted entries; directories only when they come or go', () => {
    const before: Manifest = {
      entries: {
        '': ['d', 0, 1, 1],
        a: ['f', 1, 1, 2],
        b: ['f', 1, 1, 3],
        c: ['f', 1, 1, 4],
        d: ['d', 0, 1, 5],
        e: ['l', 3, 1, 6],
      },
    };
    const after: Manifest = {
      entries: {
        '': ['d', 0, 9, 1],
        a: ['f', 1, 1, 2],
        b: ['f', 2, 1, 3],
        c: ['f', 1, 1, 99],
        d: ['d', 0, 9, 5],
        n: ['f', 1, 1, 7],
      },
    };
    expect(diffManifests(before, after)).toEqual([
      { path: 'b', change: 'modified' },
      { path: 'c', change: 'modified' },
      { path: 'e', change: 'deleted' },
      { path: 'n', change: 'added' },
    ]);
  });
});

describe('upper layer without a mount (namespaced cow)', () => {
  function layers(): { upper: string; lower: string } {
    const dir = tmpDir();
    const files: Record<string, string> = {
      'lower/dep/lib/main.js': '1',
      'lower/dep/package.json': '{}',
      'lower/pad/index.js': 'x',
      'lower/pad/README': 'r',
      'upper/dep/package.json': '{"v":2}',
      'upper/pad/index.js': 'y',
      'upper/new.js': 'n',
    };
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    }
    return { upper: path.join(dir, 'upper'), lower: path.join(dir, 'lower') };
  }

  it('probes one lower entry missing from the upper layer per shared directory', () => {
    const { upper, lower } = layers();
    expect([...opacityProbes(upper, lower)].sort()).toEqual([
      ['dep/lib', 'dep'],
      ['pad/README', 'pad'],
    ]);
  });

  it('lists what an opaque directory hides only when told which entries are hidden', () => {
    const { upper, lower } = layers();
    const base = [
      { path: 'dep/package.json', change: 'modified' },
      { path: 'new.js', change: 'added' },
      { path: 'pad/index.js', change: 'modified' },
    ];
    expect(upperChanges(upper, lower, null)).toEqual(base);
    expect(upperChanges(upper, lower, { hidden: new Set(['dep/lib']) })).toEqual([
      { path: 'dep/lib', change: 'deleted' },
      ...base,
    ]);
  });
});

describe("a layer's changes are content, not presence (issue 41)", () => {
  it("an entry the upper layer holds identical to the snapshot's is no change: same type, permissions, size and bytes, or link target", () => {
    const dir = tmpDir();
    const upper = path.join(dir, 'upper');
    const lower = path.join(dir, 'lower');
    const big = Buffer.alloc(200 * 1024, 7);
    const bigger = Buffer.from(big);
    bigger[bigger.length - 1] = 8; // differs only in the last chunk
    const write = (rel: string, data: string | Buffer, mode = 0o644): void => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), data, { mode });
      fs.chmodSync(path.join(dir, rel), mode);
    };
    for (const layer of ['lower', 'upper']) {
      write(`${layer}/same/index.js`, 'module.exports = 1;\n');
      write(`${layer}/same/big.bin`, big);
      write(`${layer}/same/bin.js`, '#!/usr/bin/env node\n', 0o755);
      fs.symlinkSync('../same/bin.js', path.join(dir, layer, 'link'));
    }
    write('lower/bytes.js', 'aaaa');
    write('upper/bytes.js', 'aaab'); // same size, other bytes
    write('lower/size.js', 'a');
    write('upper/size.js', 'aa');
    write('lower/mode.js', 'x', 0o644);
    write('upper/mode.js', 'x', 0o755);
    write('lower/tail.bin', big);
    write('upper/tail.bin', bigger);
    fs.symlinkSync('a', path.join(lower, 'retarget'));
    fs.symlinkSync('b', path.join(upper, 'retarget'));
    fs.mkdirSync(path.join(lower, 'was-dir'));
    write('upper/was-dir', '');
    expect(upperChanges(upper, lower, null)).toEqual(
      ['bytes.js', 'mode.js', 'retarget', 'size.js', 'tail.bin', 'was-dir'].map((p) => ({
        path: p,
        change: 'modified',
      })),
    );
  });
});

describe('the identical entries a status found, remembered', () => {
  it('answers from the cache only while the entry is as it was: a rewrite of the same size is read again', () => {
    const dir = tmpDir();
    const upper = path.join(dir, 'upper');
    const lower = path.join(dir, 'lower');
    for (const layer of [upper, lower]) {
      fs.mkdirSync(layer);
      fs.writeFileSync(path.join(layer, 'a.js'), 'same');
    }
    const cache = path.join(dir, 'same.json');
    const first = new SameVerdicts(cache);
    expect(upperChanges(upper, lower, null, first)).toEqual([]);
    first.save();
    expect(fs.readFileSync(cache, 'utf8').split('\0')[0]).toBe('a.js');
    expect(upperChanges(upper, lower, null, new SameVerdicts(cache))).toEqual([]);
    fs.writeFileSync(path.join(upper, 'a.js'), 'diff'); // same size, new ctime
    expect(upperChanges(upper, lower, null, new SameVerdicts(cache))).toEqual([{ path: 'a.js', change: 'modified' }]);
    // An unreadable cache is an empty one.
    fs.writeFileSync(cache, 'not json');
    expect(upperChanges(upper, lower, null, new SameVerdicts(cache))).toEqual([{ path: 'a.js', change: 'modified' }]);
  });

  it('answers from the upper entry alone only for the snapshot the cache was made against', () => {
    const dir = tmpDir();
    const upper = path.join(dir, 'upper');
    const lower = path.join(dir, 'lower');
    const other = path.join(dir, 'other'); // another snapshot: the same name, other bytes of the same size
    for (const [layer, text] of [
      [upper, 'same'],
      [lower, 'same'],
      [other, 'diff'],
    ] as const) {
      fs.mkdirSync(layer);
      fs.writeFileSync(path.join(layer, 'a.js'), text);
    }
    const cache = path.join(dir, 'same');
    const first = new SameVerdicts(cache).forLower(fs.lstatSync(lower));
    expect(upperChanges(upper, lower, null, first)).toEqual([]);
    first.save();
    const again = new SameVerdicts(cache).forLower(fs.lstatSync(lower));
    expect(again.knownSame('a.js', fs.lstatSync(path.join(upper, 'a.js')))).toBe(true);
    // Against another snapshot the cache is dropped and the bytes are read.
    const moved = new SameVerdicts(cache).forLower(fs.lstatSync(other));
    expect(moved.knownSame('a.js', fs.lstatSync(path.join(upper, 'a.js')))).toBeUndefined();
    expect(upperChanges(upper, other, null, moved)).toEqual([{ path: 'a.js', change: 'modified' }]);
  });
});

describe("overlay's markers in an upper layer", () => {
  it('reads whiteout files and opaque markers as the deletions they are, never as files', () => {
    const dir = tmpDir();
    const files: Record<string, string> = {
      'lower/dep/lib/main.js': '1',
      'lower/dep/package.json': '{}',
      'lower/.bin/pad': 'x',
      'lower/pad/index.js': 'x',
      // fuse-overlayfs without mknod rights: `rm -rf dep && mkdir dep && echo > dep/package.json`
      'upper/dep/.wh..wh..opq': '',
      'upper/dep/.wh..opq': '',
      'upper/dep/package.json': '{"new":1}',
      // `rm .bin/pad`, and the whiteout of a file the snapshot never had (made and removed in the task)
      'upper/.bin/.wh.pad': '',
      'upper/.bin/.wh.scratch': '',
    };
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    }
    const changes = [
      { path: '.bin/pad', change: 'deleted' },
      { path: 'dep/lib', change: 'deleted' },
      { path: 'dep/package.json', change: 'modified' },
    ];
    const upper = path.join(dir, 'upper');
    const lower = path.join(dir, 'lower');
    expect(upperChanges(upper, lower, null)).toEqual(changes);
  });
});

describe('budget', () => {
  it('parses sizes and names what goes over', () => {
    expect(parseBytes('2 GiB')).toBe(2 * 1024 ** 3);
    expect(parseBytes('1.5KiB')).toBe(1536);
    expect(parseBytes(10)).toBe(10);
    const limit = { entries: 10, bytes: 1000 };
    expect(overBudget({ entries: 5, bytes: 0 }, limit, { entries: 5, bytes: 10 })).toBeNull();
    expect(overBudget({ entries: 5, bytes: 0 }, limit, { entries: 6, bytes: 10 })).toMatch(/over the budget of 10/);
    expect(overBudget({ entries: 0, bytes: 900 }, limit, { entries: 1, bytes: 200 })).toMatch(
      /over the budget of 1000 B/,
    );
    expect(formatBytes(3 * 1024 ** 2)).toBe('3.0 MiB');
  });
});

describe('audit section', () => {
  it('lists provisioned paths with mode, and isolation only as far as it was verified', async () => {
    const { provisionAudit: section } = await import('../../src/provision/provision-steps.js');
    const record = (p: string, mode: string, isolated: boolean, extra: object = {}) => ({
      path: p,
      mode,
      requested: mode,
      isolated,
      method: 'm',
      source: `/main/${p}`,
      entries: 2,
      bytes: 2048,
      ms: 1,
      ...extra,
    });
    const relocation = { from: '/main', to: '/ws', checked: 3, rewritten: [], left: [] };
    const links = [
      {
        path: '.env',
        target: '/home/me/secret.env',
        action: 'materialised',
        why: 'copied in from /home/me/secret.env',
      },
      {
        path: '.env.old',
        target: '/gone',
        action: 'removed',
        why: 'removed: its target does not resolve in the main checkout (ENOENT), so there is nothing to copy',
      },
    ];
    const task = {
      id: 't1',
      data: {
        provision: [
          record('node_modules', 'cow', true, { contained: true, relocation }),
          record('.env', 'copy', true, { contained: true, outsideLinks: links.slice(0, 1), relocation }),
          record('.env.old', 'copy', true, { contained: true, outsideLinks: links.slice(1) }),
          record('venv', 'cow', true, {
            contained: true,
            relocation: { ...relocation, left: [{ path: 'bin/pip', why: 'names /main/other' }] },
          }),
          record('old', 'copy', true),
          record('vendor', 'share', false),
        ],
      },
    } as unknown as Task;
    const out = await section?.collect({} as ProjectContext, task);
    expect(out?.lines).toEqual([
      'node_modules: cow (m), isolated (verified when provisioned: no symlink leads outside the workspace; nothing names the main checkout by absolute path); 2 entries, 2.0 KiB',
      '.env: copy (m), isolated (verified when provisioned: 1 symlink(s) pointed outside: 1 copied in; nothing names the main checkout by absolute path); 2 entries, 2.0 KiB',
      '  .env -> /home/me/secret.env: copied in from /home/me/secret.env',
      '.env.old: copy (m), isolated (verified when provisioned: 1 symlink(s) pointed outside: 1 removed; not checked for absolute paths to the main checkout (`warren provision t1 --refresh` checks)); 2 entries, 2.0 KiB',
      '  .env.old -> /gone: removed: its target does not resolve in the main checkout (ENOENT), so there is nothing to copy',
      'venv: cow (m), NOT isolated: 1 file(s) still name the main checkout by absolute path (bin/pip: names /main/other); 2 entries, 2.0 KiB',
      'old: copy (m), isolation NOT verified: provisioned by an older warren, which did not check for symlinks that lead outside (`warren provision t1 --refresh` provisions it again, checked); 2 entries, 2.0 KiB',
      'vendor: share (m), NOT isolated: shared with the main checkout and every workspace that shares it; 2 entries, 2.0 KiB',
    ]);
    const absolutePaths = { checked: 3, rewritten: 0, left: [] };
    expect(out?.data).toEqual([
      {
        path: 'node_modules',
        mode: 'cow',
        requested: 'cow',
        isolated: true,
        method: 'm',
        source: '/main/node_modules',
        absolutePaths,
      },
      {
        path: '.env',
        mode: 'copy',
        requested: 'copy',
        isolated: true,
        method: 'm',
        source: '/main/.env',
        outsideLinks: links.slice(0, 1),
        absolutePaths,
      },
      {
        path: '.env.old',
        mode: 'copy',
        requested: 'copy',
        isolated: true,
        method: 'm',
        source: '/main/.env.old',
        outsideLinks: links.slice(1),
      },
      {
        path: 'venv',
        mode: 'cow',
        requested: 'cow',
        isolated: false,
        method: 'm',
        source: '/main/venv',
        absolutePaths: { ...absolutePaths, left: [{ path: 'bin/pip', why: 'names /main/other' }] },
      },
      { path: 'old', mode: 'copy', requested: 'copy', isolated: false, method: 'm', source: '/main/old' },
      { path: 'vendor', mode: 'share', requested: 'share', isolated: false, method: 'm', source: '/main/vendor' },
    ]);
  });
});

describe('ignoredAsInMain: when git need not be asked again in the workspace', () => {
  function pair(): { main: string; ws: string } {
    const base = tmpDir('warren-ign-');
    const main = path.join(base, 'main');
    const ws = path.join(base, 'ws');
    for (const root of [main, ws]) {
      fs.mkdirSync(path.join(root, 'app/node_modules'), { recursive: true });
      fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
    }
    return { main, ws };
  }

  it('is true when every .gitignore above the path reads the same and the path is the same kind', () => {
    const { main, ws } = pair();
    expect(ignoredAsInMain(main, ws, 'app/node_modules')).toBe(true);
  });

  it('is false when a .gitignore above differs, exists on one side only, or is a symlink', () => {
    let { main, ws } = pair();
    fs.writeFileSync(path.join(ws, '.gitignore'), 'other/\n');
    expect(ignoredAsInMain(main, ws, 'app/node_modules')).toBe(false);
    ({ main, ws } = pair());
    fs.writeFileSync(path.join(main, 'app/.gitignore'), '!node_modules/\n');
    expect(ignoredAsInMain(main, ws, 'app/node_modules')).toBe(false);
    ({ main, ws } = pair());
    fs.rmSync(path.join(ws, '.gitignore'));
    fs.symlinkSync(path.join(main, '.gitignore'), path.join(ws, '.gitignore'));
    expect(ignoredAsInMain(main, ws, 'app/node_modules')).toBe(false);
  });

  it('is false when the path is another kind in the workspace (a share symlink against a dir-only pattern)', () => {
    const { main, ws } = pair();
    fs.rmdirSync(path.join(ws, 'app/node_modules'));
    fs.symlinkSync(path.join(main, 'app/node_modules'), path.join(ws, 'app/node_modules'));
    expect(ignoredAsInMain(main, ws, 'app/node_modules')).toBe(false);
  });

  it("a share symlink is known excluded once warren's own line for it stands and the .gitignore files read the same", () => {
    const { main, ws } = pair();
    fs.rmdirSync(path.join(ws, 'app/node_modules'));
    fs.symlinkSync(path.join(main, 'app/node_modules'), path.join(ws, 'app/node_modules'));
    const ours = [literalPattern('app/node_modules')];
    expect(excludedByOurLine(ours, main, ws, 'app/node_modules')).toBe(true);
    expect(excludedByOurLine([literalPattern('node_modules')], main, ws, 'app/node_modules')).toBe(false);
    expect(excludedByOurLine([], main, ws, 'app/node_modules')).toBe(false);
    fs.writeFileSync(path.join(ws, 'app/.gitignore'), '!node_modules\n');
    expect(excludedByOurLine(ours, main, ws, 'app/node_modules')).toBe(false);
    expect(excludedByOurLine(ours, main, ws, 'app/missing')).toBe(false);
  });
});

const noProcIo = unavailable(import.meta.filename, 'proc-io');

describe.skipIf(noProcIo !== null)('copy progress', () => {
  it('reports the bytes a running process has written, as they grow, and stops when told', async () => {
    const dir = tmpDir('warren-progress-');
    // A writer that takes its time: 1 MiB, a pause, five times.
    const script = `const fs=require('fs');let i=0;const t=setInterval(()=>{fs.writeFileSync(${JSON.stringify(dir)}+'/f'+i,Buffer.alloc(1<<20));if(++i===5)clearInterval(t)},120)`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const seen: number[] = [];
    const stop = watchCopy(child.pid ?? -1, (n) => seen.push(n), 40);
    await new Promise((resolve) => child.once('exit', resolve));
    stop();
    const after = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(seen.length).toBe(after); // stopped
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] ?? 0); // only changes, only growth
    expect(seen.at(-1)).toBeGreaterThanOrEqual(3 << 20);
    expect(seen.at(-1)).toBeLessThan(6 << 20);
  });
});

describe("selectIncluded: git's two answers, intersected and grouped", () => {
  const base = { tracked: ['README.md', '.worktreeinclude'], claimed: [] as string[] };
  it('copies a folder whole only when every file in it is selected', () => {
    const ignored = ['nm/a/1', 'nm/a/2', 'nm/big/1', 'nm/.lock', 'cache/x'];
    const out = selectIncluded({
      ...base,
      matching: ['nm/a/1', 'nm/a/2', 'nm/.lock', 'cache/x'],
      ignored,
      unignored: [],
    });
    expect(out.paths).toEqual(['cache', 'nm/.lock', 'nm/a']);
    expect(out.files).toBe(4);
  });
  it('keeps only what git also ignores, never a folder holding a tracked file', () => {
    const out = selectIncluded({
      ...base,
      tracked: ['cache/keep'],
      matching: ['cache/a', 'cache/b/c', 'notes.txt'],
      ignored: ['cache/a', 'cache/b/c'],
      unignored: ['notes.txt'],
    });
    expect(out.paths).toEqual(['cache/a', 'cache/b']);
    expect(out.notIgnored).toEqual(['notes.txt']);
  });
  it('leaves out nested repositories, VCS metadata and what warren.yaml provisions, each named once', () => {
    const ignored = ['.worktrees/wt/', 'c/.hg/store/a', 'c/.hg/store/b', 'c/f', 'nm/x/1', 'nm/x/2'];
    const out = selectIncluded({ ...base, claimed: ['nm'], matching: ignored, ignored, unignored: [] });
    expect(out.paths).toEqual(['c/f']);
    expect(out.excluded).toEqual([
      { path: '.worktrees/wt', why: 'nested-repository', files: 1 },
      { path: 'c/.hg', why: 'vcs-metadata', files: 2 },
      { path: 'nm', why: 'claimed', files: 2, claimedBy: 'nm' },
    ]);
  });
  it('finds VCS metadata at any depth', () => {
    expect(vcsMetadataOf('a/.jj/repo')).toBe('a/.jj');
    expect(vcsMetadataOf('.svn/entries')).toBe('.svn');
    expect(vcsMetadataOf('a/b.git/c')).toBeNull();
  });
});

describe('packages: status per package', () => {
  it('reads pnpm store folder names', () => {
    expect(parsePnpmDir('left-pad@1.3.0')).toEqual({ name: 'left-pad', version: '1.3.0' });
    expect(parsePnpmDir('@scope+name@2.0.0(react@18.2.0)')).toEqual({ name: '@scope/name', version: '2.0.0' });
    expect(parsePnpmDir('foo@1.0.0_peer@2.0.0')).toEqual({ name: 'foo', version: '1.0.0' });
    expect(parsePnpmDir('lock.yaml')).toBeNull();
  });
  it('keys a path by its package, scope included', () => {
    expect(keyOf('@babel/core/lib/x.js', true)).toEqual({ name: '@babel/core', kind: 'package', root: false });
    expect(keyOf('.bin/tsc', true)).toEqual({ name: '.bin', kind: 'entry', root: false });
    expect(keyOf('.pnpm/is-odd@3.0.1', true)).toEqual({
      name: 'is-odd',
      kind: 'package',
      root: true,
      version: '3.0.1',
    });
    expect(keyOf('acme/lib/a.php', false)).toEqual({ name: 'acme', kind: 'entry', root: false });
  });
  it("summarises pnpm add, update and remove from the store folders' names", () => {
    const changes = [
      { path: '.pnpm/is-odd@3.0.1', change: 'added' as const },
      { path: '.pnpm/is-odd@3.0.1/node_modules/is-odd/index.js', change: 'added' as const },
      { path: 'is-odd', change: 'added' as const },
      { path: '.pnpm/left-pad@1.3.0', change: 'deleted' as const },
      { path: '.pnpm/left-pad@1.3.1', change: 'added' as const },
      { path: 'left-pad', change: 'modified' as const },
      { path: '.pnpm/dep@2.0.0', change: 'deleted' as const },
      { path: 'dep', change: 'deleted' as const },
      { path: '.pnpm/lock.yaml', change: 'modified' as const },
    ];
    expect(
      summarise(
        changes,
        true,
        () => undefined,
        () => undefined,
      ),
    ).toEqual([
      { name: 'is-odd', kind: 'package', change: 'added', after: '3.0.1', changes: 3 },
      { name: '.pnpm/lock.yaml', kind: 'entry', change: 'changed', changes: 1 },
      { name: 'left-pad', kind: 'package', change: 'changed', before: '1.3.0', after: '1.3.1', changes: 3 },
      { name: 'dep', kind: 'package', change: 'removed', before: '2.0.0', changes: 2 },
    ]);
  });
  it("reads npm packages' versions on each side; a share has no past to read", () => {
    const changes = [{ path: 'left-pad/index.js', change: 'modified' as const }];
    expect(
      summarise(
        changes,
        true,
        () => '1.3.0',
        () => '1.3.1',
      ),
    ).toEqual([{ name: 'left-pad', kind: 'package', change: 'changed', before: '1.3.0', after: '1.3.1', changes: 1 }]);
    expect(summarise(changes, true, null, () => '1.3.1')).toEqual([
      { name: 'left-pad', kind: 'package', change: 'changed', after: '1.3.1', changes: 1 },
    ]);
  });
});

describe('staysInside: where a link leads, from its place in the workspace', () => {
  function tree(): string {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'pkg/lib'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'deep/a/b'), { recursive: true });
    const links: Record<string, string> = {
      'bin-x': 'pkg/lib/x.js',
      monorepo: '../packages/app',
      abs: '/etc/passwd',
      climb: '../../../x',
      up: '..',
      'through-up': 'up/../../x',
      'through-deep': 'deep-link/../../x',
      'deep-link': 'deep/a/b',
      loop1: 'loop2',
      loop2: 'loop1',
      dangling: 'nowhere/file',
      'through-file': 'pkg/file.js/x',
    };
    fs.writeFileSync(path.join(dir, 'pkg/file.js'), 'a file\n');
    for (const [name, target] of Object.entries(links)) fs.symlinkSync(target, path.join(dir, name));
    return dir;
  }
  it.each([
    ['bin-x', true],
    ['monorepo', true], // node_modules/../packages/app: still inside the workspace (the branch's own files)
    ['abs', false],
    ['climb', false],
    ['up', true],
    ['through-up', false], // the kernel follows `up` first: ../../x from node_modules's parent
    ['through-deep', true], // deep/a/b/../../x = node_modules/deep/x
    ['loop1', false],
    ['dangling', true],
    ['through-file', true], // ENOTDIR: nothing can be written through it
  ])('%s → %s', (name, inside) => {
    expect(staysInside(tree(), 'node_modules', name)).toBe(inside);
  });
});

describe('findingsForCopy: the source walk stands for the copy only when they saw the same entries', () => {
  const walk = (dir: string) => {
    const found = newFindings();
    walkTree(dir, (rel, st) => noteEntry(found, rel, st));
    return found;
  };
  it('trusts the source walk when every folder of the copy has the mtime the walk saw', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'src/a'), { recursive: true });
    fs.symlinkSync('/etc/passwd', path.join(dir, 'src/a/out'));
    execFileSync('cp', ['-a', path.join(dir, 'src'), path.join(dir, 'copy')]);
    const checked = findingsForCopy(walk(path.join(dir, 'src')), path.join(dir, 'copy'));
    expect(checked).toMatchObject({ rewalked: false, found: { links: ['a/out'] } });
  });
  it('walks the copy when the main checkout changed between the copy and the walk (a link the walk never saw)', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'src/a'), { recursive: true });
    fs.symlinkSync('/etc/passwd', path.join(dir, 'src/a/out'));
    execFileSync('cp', ['-a', path.join(dir, 'src'), path.join(dir, 'copy')]);
    // npm replaces the link by a file after cp read the folder, before the walk did.
    fs.rmSync(path.join(dir, 'src/a/out'));
    fs.writeFileSync(path.join(dir, 'src/a/out'), 'now a file\n');
    const stale = walk(path.join(dir, 'src'));
    expect(stale.links).toEqual([]);
    const checked = findingsForCopy(stale, path.join(dir, 'copy'));
    expect(checked).toMatchObject({ rewalked: true, found: { links: ['a/out'] } });
  });
});

describe('scanListings of a tree cp -al just made: the listings alone, no folder read by lstat', () => {
  it('finds the same links, devices, VCS metadata and entries as the scan that reads each folder, and counts the folders', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'src/a/b/.git'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src/a/b/.git/HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(dir, 'src/a/f.js'), 'x\n');
    fs.writeFileSync(path.join(dir, 'src/a/.hg'), 'not a folder, still VCS metadata\n');
    fs.symlinkSync('/etc/passwd', path.join(dir, 'src/a/b/out'));
    fs.symlinkSync('../f.js', path.join(dir, 'src/a/b/in'));
    execFileSync('cp', ['-al', path.join(dir, 'src'), path.join(dir, 'copy')]);
    const made = scanListings(path.join(dir, 'copy'), { made: true });
    const read = scanListings(path.join(dir, 'copy'));
    expect(made.found.links.sort()).toEqual(['a/b/in', 'a/b/out']);
    expect(made.found.vcs.sort()).toEqual(['a/.hg', 'a/b/.git']);
    expect(made).toMatchObject({ entries: 7, folders: 2 }); // a, a/b, and five entries below; not what .git holds
    expect({ ...made, found: { ...made.found, dirs: null, rootDev: null } }).toEqual({
      ...read,
      found: { ...read.found, dirs: null, rootDev: null },
    });
    expect(made.found.dirs.size).toBe(1); // the root alone: nothing below was read by lstat
  });
});

describe('copyGroups: one cp per parent folder for what .worktreeinclude selects', () => {
  it('groups .worktreeinclude copies by parent, and leaves every other path on its own', () => {
    const r = (
      p: string,
      from: '.worktreeinclude' | 'warren.yaml' = '.worktreeinclude',
      mode: 'copy' | 'cow' = 'copy',
    ) => ({ item: { path: p, mode, from } });
    const groups = copyGroups([
      r('node_modules', 'warren.yaml', 'cow'),
      r('nm/a'),
      r('nm/a-b'),
      r('nm/c/d'),
      r('nm/e'),
      r('.env'),
      r('.env.local', 'warren.yaml'),
    ]);
    expect(groups.map((g) => g.map((x) => x.item.path))).toEqual([
      ['node_modules'],
      ['nm/a', 'nm/a-b', 'nm/e'],
      ['nm/c/d'],
      ['.env'],
      ['.env.local'],
    ]);
  });
});

describe('provision globs and workspaces (issue 30)', () => {
  it('expands a glob one segment at a time, never through a link, never into node_modules or .git', () => {
    const root = tmpDir('warren-glob-');
    for (const d of [
      'packages/a/node_modules',
      'packages/b/node_modules',
      'packages/c',
      'apps/x/node_modules/y/node_modules',
    ])
      fs.mkdirSync(path.join(root, d), { recursive: true });
    fs.symlinkSync(path.join(root, 'packages'), path.join(root, 'linked'));
    fs.mkdirSync(path.join(root, 'outside/node_modules'), { recursive: true });
    fs.symlinkSync(path.join(root, 'outside'), path.join(root, 'packages/evil'));
    expect(expandGlob(root, 'packages/*/node_modules')).toEqual(['packages/a/node_modules', 'packages/b/node_modules']);
    expect(expandGlob(root, '**/node_modules')).toEqual([
      'apps/x/node_modules',
      'outside/node_modules',
      'packages/a/node_modules',
      'packages/b/node_modules',
    ]);
    expect(expandGlob(root, 'linked/*/node_modules')).toEqual([]);
    expect(expandGlob(root, 'nothing/*')).toEqual([]);
    expect(isGlob('packages/*/node_modules')).toBe(true);
    expect(isGlob('node_modules')).toBe(false);
  });

  it('reads npm, yarn and pnpm workspace lists', () => {
    expect(npmWorkspaces('{"workspaces":["packages/*","apps/web"]}')).toEqual(['packages/*', 'apps/web']);
    expect(npmWorkspaces('{"workspaces":{"packages":["libs/*"]}}')).toEqual(['libs/*']);
    expect(npmWorkspaces('{"name":"x"}')).toBeNull();
    expect(npmWorkspaces('not json')).toBeNull();
    expect(pnpmWorkspaces({ packages: ['packages/*', '!packages/skip'] })).toEqual(['packages/*', '!packages/skip']);
    expect(pnpmWorkspaces(null)).toBeNull();
  });

  it('a package of a workspace takes its lockfile from the install at the workspace root', () => {
    const files = new Set(['pnpm-lock.yaml', 'packages/a/package.json']);
    expect(workspaceInstall((r) => files.has(r), 'packages/a/node_modules')).toBe('node_modules');
    expect(workspaceInstall((r) => files.has(r), 'node_modules')).toBeNull();
    expect(workspaceInstall(() => false, 'packages/a/node_modules')).toBeNull();
  });
});

describe('changes since provisioning, by the file system clock (issue 41: no walk at new)', () => {
  /** A source tree, its copy (cp -a) or hard-linked copy (cp -al), and the instant taken once it is made. */
  function made(how: '-a' | '-al'): { src: string; tree: string; since: number } {
    const base = tmpDir();
    const src = path.join(base, 'src');
    for (const [rel, text] of Object.entries({
      'a/index.js': 'a\n',
      'a/package.json': '{"version":"1.0.0"}\n',
      'b/lib/main.js': 'b\n',
      'b/package.json': '{"version":"2.0.0"}\n',
    })) {
      fs.mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
      fs.writeFileSync(path.join(src, rel), text);
    }
    fs.symlinkSync('../a/index.js', path.join(src, 'link'));
    const tree = path.join(base, 'tree');
    execFileSync('cp', [how, src, tree]);
    return { src, tree, since: fsNow(path.join(base, 'home')) };
  }

  it('copy: names what was added, modified and deleted (a folder entry by entry), not what was rewritten identically', () => {
    const { src, tree, since } = made('-a');
    expect(treeChangesSince(tree, src, since).changes).toEqual([]);
    fs.writeFileSync(path.join(tree, 'a/index.js'), 'changed\n');
    fs.writeFileSync(path.join(tree, 'a/new.js'), 'new\n');
    fs.rmSync(path.join(tree, 'b'), { recursive: true });
    // An install's write-then-rename of the same bytes: a new file, identical to the main checkout's.
    fs.writeFileSync(path.join(tree, 'a/package.json.tmp'), '{"version":"1.0.0"}\n');
    fs.renameSync(path.join(tree, 'a/package.json.tmp'), path.join(tree, 'a/package.json'));
    expect(treeChangesSince(tree, src, since).changes).toEqual([
      { path: 'a/index.js', change: 'modified' },
      { path: 'a/new.js', change: 'added' },
      { path: 'b', change: 'deleted' },
      { path: 'b/lib', change: 'deleted' },
      { path: 'b/lib/main.js', change: 'deleted' },
      { path: 'b/package.json', change: 'deleted' },
    ]);
    // What the copy never had (stripped at provisioning) is not a deletion.
    fs.rmSync(path.join(tree, 'link'));
    expect(treeChangesSince(tree, src, since, { left: new Set(['link']) }).changes).not.toContainEqual({
      path: 'link',
      change: 'deleted',
    });
    fs.rmSync(tree, { recursive: true });
    expect(treeChangesSince(tree, src, since).changes.filter((c) => c.change !== 'deleted')).toEqual([]);
  });

  it('hardlink: a write in place is written through; a link made elsewhere (another cp -al) is no change', () => {
    const { src, tree, since } = made('-al');
    execFileSync('cp', ['-al', src, `${tree}-other`]); // every inode's ctime moves, no content does
    fs.chmodSync(path.join(src, 'b/package.json'), 0o600); // a chmod in the main checkout: ctime only
    expect(treeChangesSince(tree, src, since)).toEqual({ changes: [], writtenThrough: [] });
    fs.appendFileSync(path.join(tree, 'a/index.js'), 'in place\n');
    fs.rmSync(path.join(tree, 'b/lib/main.js'));
    fs.writeFileSync(path.join(tree, 'b/lib/main.js'), 'replaced\n');
    expect(treeChangesSince(tree, src, since)).toEqual({
      changes: [
        { path: 'a/index.js', change: 'modified' },
        { path: 'b/lib/main.js', change: 'modified' },
      ],
      writtenThrough: ['a/index.js'],
    });
  });

  it('share: what anyone changed in the shared folder since', () => {
    const { src, since } = made('-a');
    expect(sharedChangesSince(src, since)).toEqual([]);
    fs.writeFileSync(path.join(src, 'a/index.js'), 'changed by another workspace\n');
    fs.mkdirSync(path.join(src, 'c'));
    fs.writeFileSync(path.join(src, 'c/index.js'), 'c\n');
    expect(sharedChangesSince(src, since)).toEqual([
      { path: '', change: 'modified' },
      { path: 'a/index.js', change: 'modified' },
      { path: 'c', change: 'added' },
      { path: 'c/index.js', change: 'added' },
    ]);
  });
});
