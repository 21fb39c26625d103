import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { gitIn, runCli, trustRepo } from '../helpers/repo.js';
import { makeNodeModules, treeDigest, unmountUnder } from '../helpers/tree.js';

/**
 * The clone rung of copy (and of cow's fallback ladder) on a file system that can clone: an XFS
 * image mounted through a loop device (root). This machine's own disk is ext4, which cannot.
 * Skipped, with the reason printed, where XFS cannot be made or mounted.
 */

const IMAGE_MB = 320;
const BIG_MB = 64;

const noXfs = unavailable(import.meta.filename, 'xfs');
let base = '';
let mnt = '';

beforeAll(() => {
  if (noXfs) return;
  base = fs.realpathSync(fs.mkdtempSync('/tmp/warren-xfs-'));
  const image = path.join(base, 'xfs.img');
  mnt = path.join(base, 'mnt');
  fs.mkdirSync(mnt);
  fs.closeSync(fs.openSync(image, 'w'));
  fs.truncateSync(image, IMAGE_MB * 1024 * 1024);
  const made = spawnSync('mkfs.xfs', ['-q', '-m', 'reflink=1', image], { encoding: 'utf8' });
  const mounted = made.status === 0 ? spawnSync('mount', ['-o', 'loop', image, mnt], { encoding: 'utf8' }) : made;
  // The probe made and mounted one just now: failing here is this suite's failure, not a skip.
  if (mounted.status !== 0)
    throw new Error(`could not make and loop-mount an XFS image: ${(mounted.stderr || '').trim()}`);
});

afterAll(() => {
  if (!base) return;
  // Anything mounted inside first, then the loop mount itself.
  unmountUnder(mnt);
  fs.rmSync(base, { recursive: true, force: true });
});

/** Bytes in use on the file system holding `dir`. */
function usedBytes(dir: string): number {
  const st = fs.statfsSync(dir);
  return (st.blocks - st.bfree) * st.bsize;
}

describe.skipIf(noXfs !== null)('the clone rung (reflink on XFS)', () => {
  it('copies by reflink: isolated, shares the data blocks, and cow with overlay off falls back to the clone', async () => {
    const root = path.join(mnt, 'app');
    const home = path.join(mnt, 'home');
    fs.mkdirSync(root);
    gitIn(root, 'init', '-q', '-b', 'main');
    gitIn(root, 'config', 'user.email', 'test@example.invalid');
    gitIn(root, 'config', 'user.name', 'Warren Test');
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: copy }\n');
    gitIn(root, 'add', '-A');
    gitIn(root, 'commit', '-q', '-m', 'init');
    makeNodeModules(root);
    // One large file: a real copy would take its size again; a clone shares its blocks.
    const big = path.join(root, 'node_modules/dep/big.bin');
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const fd = fs.openSync(big, 'w');
    for (let i = 0; i < BIG_MB; i++) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
    execFileSync('sync');
    const digest = treeDigest(path.join(root, 'node_modules'));

    const before = usedBytes(mnt);
    const made = await runCli(['--json', 'new', 'feat', 'one'], { cwd: root, home });
    expect(made.code, made.stderr).toBe(0);
    execFileSync('sync');
    const grew = usedBytes(mnt) - before;
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    const shown = JSON.parse((await runCli(['--json', 'show', 'one'], { cwd: root, home })).stdout) as {
      data: { provision: { path: string; mode: string; method: string; isolated: boolean }[] };
    };
    expect(shown.data.provision[0]).toMatchObject({
      path: 'node_modules',
      mode: 'copy',
      method: 'reflink',
      isolated: true,
    });
    // The workspace holds the same bytes, while the file system grew by far less than the big file.
    expect(treeDigest(path.join(ws, 'node_modules'))).toBe(digest);
    expect(grew).toBeLessThan((BIG_MB / 4) * 1024 * 1024);

    // Isolated: a write in the clone leaves the main checkout as it was.
    fs.writeFileSync(path.join(ws, 'node_modules/dep/big.bin'), 'changed in the workspace\n');
    fs.writeFileSync(path.join(ws, 'node_modules/left-pad/index.js'), 'patched\n');
    expect(treeDigest(path.join(root, 'node_modules'))).toBe(digest);

    // cow's ladder where overlay is off: the best copy this file system offers is the clone.
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n');
    trustRepo(root, home); // provision is in the trusted set: the user trusts the change
    const off = await runCli(['--json', 'new', 'feat', 'two'], { cwd: root, home, env: { WARREN_COW: 'off' } });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toContain('node_modules: cow fell back to reflink because overlay disabled by WARREN_COW=off');
    const two = JSON.parse((await runCli(['--json', 'show', 'two'], { cwd: root, home })).stdout) as {
      data: { provision: { mode: string; requested: string; method: string }[] };
    };
    expect(two.data.provision[0]).toMatchObject({ mode: 'copy', requested: 'cow', method: 'reflink' });

    for (const id of ['one', 'two']) expect((await runCli(['rm', id], { cwd: root, home })).code).toBe(0);
    expect(treeDigest(path.join(root, 'node_modules'))).toBe(digest);
  }, 60_000);
});
