import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diskUsage } from '../src/system/disk-usage.js';
import { tmpDir } from './helpers/repo.js';

/** diskUsage against du itself on the same folders: links not followed, an inode counted once. */
function du(paths: string[]): number {
  const out = execFileSync('du', ['-scx', '-B1', ...paths], { encoding: 'utf8' });
  return Number(/^(\d+)\s+total$/m.exec(out)?.[1]);
}

describe('diskUsage', () => {
  it('counts as du -sx does: hard links once, symlinks not followed, across several folders', async () => {
    const dir = tmpDir();
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    const outside = path.join(dir, 'outside');
    for (const d of [a, b, outside, path.join(a, 'deep', 'er')]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(a, 'one.bin'), Buffer.alloc(300_000, 1));
    fs.writeFileSync(path.join(a, 'deep', 'er', 'two.txt'), 'x'.repeat(5000));
    fs.linkSync(path.join(a, 'one.bin'), path.join(a, 'again.bin'));
    fs.linkSync(path.join(a, 'one.bin'), path.join(b, 'elsewhere.bin'));
    fs.writeFileSync(path.join(outside, 'big.bin'), Buffer.alloc(1_000_000, 2));
    fs.symlinkSync(path.join(outside, 'big.bin'), path.join(b, 'link.bin'));
    fs.symlinkSync(outside, path.join(b, 'dirlink'));

    expect((await diskUsage([a])).bytes).toBe(du([a]));
    expect((await diskUsage([b])).bytes).toBe(du([b]));
    // Together: the file linked into both is counted once, as du counts it.
    expect((await diskUsage([a, b])).bytes).toBe(du([a, b]));
    expect((await diskUsage([a, b])).bytes).toBeLessThan((await diskUsage([a])).bytes + (await diskUsage([b])).bytes);
    expect(await diskUsage([path.join(dir, 'missing')])).toEqual({ bytes: 0, unreadable: 0 });
  });
});
