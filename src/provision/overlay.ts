import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readMounts, type MountEntry } from '../system/mounts.js';
import { runTool } from '../system/tool.js';

/**
 * overlayfs for `cow`: a read-only lower layer shared by every workspace, a private upper
 * layer per workspace. As root the mount itself is the probe (a failed mount falls back, with
 * mount's own error as the reason); otherwise a throwaway mount in a user namespace tells
 * whether only a namespaced mount would work.
 */

export type OverlaySupport = { ok: true; how: 'global' } | { ok: false; reason: string };

/** Test and benchmark seam: WARREN_COW=off forces the fallback ladder. */
export const COW_ENV = 'WARREN_COW';

let cached: OverlaySupport | null = null;

export async function overlaySupport(home: string): Promise<OverlaySupport> {
  cached ??= await probe(home);
  return cached;
}

async function probe(home: string): Promise<OverlaySupport> {
  if (process.env[COW_ENV] === 'off') return { ok: false, reason: `overlay disabled by ${COW_ENV}=off` };
  if (os.platform() !== 'linux') return { ok: false, reason: `overlayfs is Linux-only and this is ${os.platform()}` };
  if (process.getuid?.() === 0) return { ok: true, how: 'global' };
  // Not root: an overlay is possible only inside a user namespace, visible only to processes in it.
  const dir = path.join(home, 'overlays', `.probe-${process.pid}`);
  const [l, u, w, m] = ['l', 'u', 'w', 'm'].map((n) => path.join(dir, n)) as [string, string, string, string];
  for (const d of [l, u, w, m]) fs.mkdirSync(d, { recursive: true });
  try {
    const opts = `lowerdir=${l},upperdir=${u},workdir=${w}`;
    const inNs = await runTool(['unshare', '-Urm', 'mount', '-t', 'overlay', 'overlay', '-o', opts, m], { timeoutMs: 10_000 });
    if (inNs.exitCode === 0) {
      return {
        ok: false,
        reason: 'not root: overlay mounts work here only inside a user namespace, and tools run outside warren (an editor, a shell) would see an empty folder',
      };
    }
    return { ok: false, reason: `not root, and unprivileged user namespaces cannot mount overlay here (${firstLine(inNs.stderr)})` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Paths overlay's option parser would split (`,` `:`) or misread (`\`). */
export function overlayUnsafePath(p: string): boolean {
  return /[,:\\\n]/.test(p);
}

export async function mountOverlay(lower: string, upper: string, work: string, target: string): Promise<{ ok: true } | { ok: false; error: string }> {
  for (const p of [lower, upper, work, target]) {
    if (overlayUnsafePath(p)) return { ok: false, error: `${p} contains , : or \\, which overlay mount options cannot carry` };
  }
  const result = await runTool(['mount', '-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, target], { timeoutMs: 30_000 });
  return result.exitCode === 0 ? { ok: true } : { ok: false, error: firstLine(result.stderr) || `mount exited ${result.exitCode}` };
}

export async function unmount(target: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const result = await runTool(['umount', target], { timeoutMs: 30_000 });
  return result.exitCode === 0 ? { ok: true } : { ok: false, error: firstLine(result.stderr) || `umount exited ${result.exitCode}` };
}

export function overlayAt(target: string, table: readonly MountEntry[] = readMounts()): MountEntry | undefined {
  return table.find((m) => m.mountPoint === target && m.fsType === 'overlay');
}

/** The value of one option (`upperdir`, `lowerdir`) of an overlay mount, from its super options. */
export function overlayOption(mount: MountEntry, name: string): string | null {
  for (const part of mount.options.split(',')) if (part.startsWith(`${name}=`)) return part.slice(name.length + 1);
  return null;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
