import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mountOverlay, overlayAt, unmount, unmountAll } from '../../src/system/overlay.js';
import { unavailable } from '../helpers/capabilities.js';
import { tmpDir } from '../helpers/repo.js';

const noOverlay = unavailable(import.meta.filename, 'overlay-root');

/** A real overlay mount at `target` (made), over a lower layer holding one file. */
async function overlay(base: string, name: string, target: string): Promise<string> {
  const [lower, upper, work] = ['lower', 'upper', 'work'].map((d) => path.join(base, `${name}-${d}`)) as [
    string,
    string,
    string,
  ];
  for (const d of [lower, upper, work, target]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(lower, 'file.txt'), `${name}\n`);
  const made = await mountOverlay(lower, upper, work, target);
  expect(made).toEqual({ ok: true });
  onTestFinished(async () => {
    if (overlayAt(target)) await unmount(target);
  });
  return target;
}

describe.skipIf(noOverlay !== null)('unmounting several overlays at once (root: one umount)', () => {
  it('takes every one off, a mount inside another first whatever the order given, and names the one that will not come off', async () => {
    const base = tmpDir('warren-unmount-all-');
    const outer = await overlay(base, 'outer', path.join(base, 'ws', 'node_modules'));
    // Inside the outer mount: it must come off first, though it is given last.
    const inner = await overlay(base, 'inner', path.join(outer, 'nested'));
    const plain = await overlay(base, 'plain', path.join(base, 'ws', 'packages', 'a', 'node_modules'));
    const busy = await overlay(base, 'busy', path.join(base, 'ws', 'packages', 'b', 'node_modules'));
    // A process working inside it: the kernel refuses to unmount it (EBUSY).
    const holder = spawn('sleep', ['600'], { cwd: busy, stdio: 'ignore' });
    onTestFinished(() => void holder.kill('SIGKILL'));
    await new Promise((resolve) => holder.once('spawn', resolve));

    const out = await unmountAll([outer, plain, busy, inner]);
    expect([...out.keys()]).toEqual([outer, plain, busy, inner]);
    expect(out.get(outer)).toEqual({ ok: true });
    expect(out.get(inner)).toEqual({ ok: true });
    expect(out.get(plain)).toEqual({ ok: true });
    const refused = out.get(busy);
    expect(refused?.ok).toBe(false);
    expect(refused && !refused.ok && refused.error).toMatch(/busy/);
    expect(refused && !refused.ok && refused.error).toContain(busy);
    for (const gone of [outer, inner, plain]) expect(overlayAt(gone)).toBeUndefined();
    expect(overlayAt(busy)).toBeDefined();
    expect(fs.readFileSync(path.join(busy, 'file.txt'), 'utf8')).toBe('busy\n');
  });
});
