import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectContainment } from '../system/containment.js';
import type { SandboxKind } from '../config/sandbox.js';
import { SANDBOX_UID, sandboxMapsRoot } from '../system/sandbox-uid.js';
import { bootKey, recall, remember } from '../system/boot-cache.js';
import { removeTree } from '../system/remove-tree.js';
import { runTool } from '../system/tool.js';
import {
  checkLayerPaths,
  firstLine,
  inUserNamespace,
  mountOverlay,
  overlayAt,
  overlayOptions,
  unmount,
} from '../system/overlay.js';

/**
 * Which overlay a `cow` path or checkout gets on this machine (the mounts themselves are
 * src/system/overlay.ts): a read-only lower layer shared by every workspace, a private upper
 * layer per workspace. As root the mount is global, and the mount itself is the probe (a failed
 * mount falls back, with mount's own error as the reason). Otherwise the ladder is:
 * - `fuse`: fuse-overlayfs, an unprivileged mount on the host, seen by every process of the user
 *   (an editor, a language server, an agent started in the workspace folder);
 * - `namespaced`: made in a user namespace by every command warren runs, and seen by those
 *   commands only;
 * a throwaway mount (and a directory deleted through it) tells which works here.
 */

export type OverlaySupport =
  | { ok: true; how: 'global' | 'fuse' }
  | { ok: true; how: 'namespaced'; /** Why fuse-overlayfs was not used. */ noFuse?: string }
  | { ok: false; reason: string };

/**
 * Test and benchmark seam: WARREN_COW=off forces the fallback ladder; WARREN_COW=userns skips
 * fuse-overlayfs (the namespaced rung).
 */
export const COW_ENV = 'WARREN_COW';

/** Per process, by what the answer depends on here: WARREN_COW, the user, and where tools are found. */
const cached = new Map<string, OverlaySupport>();

/**
 * Probed once per process (and setting); a namespaced probe that worked (a throwaway mount, ~30 ms) is also remembered
 * under `$WARREN_HOME/cache` for as long as the facts it depends on stay the same — the boot,
 * namespaces, sysctls (src/system/boot-cache.ts) and the file system under `home`.
 */
export async function overlaySupport(home: string): Promise<OverlaySupport> {
  const settings = [process.env[COW_ENV] ?? '', String(process.getuid?.()), process.env.PATH ?? ''].join('\0');
  const known = cached.get(settings);
  if (known) return known;
  const found = await findSupport(home);
  cached.set(settings, found);
  return found;
}

async function findSupport(home: string): Promise<OverlaySupport> {
  if (process.env[COW_ENV] === 'off' || os.platform() !== 'linux' || process.getuid?.() === 0) return probe(home);
  const cacheDir = path.join(home, 'cache');
  let dev = '-';
  try {
    dev = String(fs.statSync(home).dev);
  } catch {
    // not made yet: the probe makes it
  }
  const key = bootKey([home, dev, process.env[COW_ENV] ?? '']);
  const recalled = recall(cacheDir, 'overlay', key, isSupport);
  const found = recalled ?? (await probe(home));
  // Only success is remembered: a failure may be passing (a full disk, a timeout) and leads to a copy.
  if (!recalled && found.ok) remember(cacheDir, 'overlay', key, found);
  return found;
}

/**
 * As root, whether the cow layers and checkout of a task whose commands run in `sandbox` must be
 * ones the sandbox can be given: a bwrap sandbox runs as another uid outside
 * (src/system/sandbox-uid.ts), and an overlay mounted for everyone shows root's files, which
 * overlayfs cannot map to it. Its layers are then mounted in each command's own namespace (as a
 * user's without fuse are), and its checkout is a plain one.
 */
export function layersForSandbox(sandbox: SandboxKind): boolean {
  return sandboxMapsRoot() && sandbox === 'bwrap';
}

/** Why a checkout for such a task is not a cow one. */
export const SANDBOXED_CHECKOUT = `as root, a bwrap task's commands run as uid ${SANDBOX_UID}, and a copy-on-write checkout is an overlay every process sees, whose files (root's) overlayfs cannot map to that uid`;

function isSupport(v: unknown): v is OverlaySupport {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return s.ok === true && (s.how === 'namespaced' || s.how === 'fuse');
}

async function probe(home: string): Promise<OverlaySupport> {
  if (process.env[COW_ENV] === 'off') return { ok: false, reason: `overlay disabled by ${COW_ENV}=off` };
  if (os.platform() !== 'linux') return { ok: false, reason: `overlayfs is Linux-only and this is ${os.platform()}` };
  if (process.getuid?.() === 0) return { ok: true, how: 'global' };
  const noFuse =
    process.env[COW_ENV] === 'userns' ? `fuse-overlayfs skipped by ${COW_ENV}=userns` : await probeFuse(home);
  if (noFuse === null) return { ok: true, how: 'fuse' };
  // Not root, no fuse: the layer is mounted in each run's namespace, so runs must get one.
  const containment = await detectContainment(path.join(home, 'cache'));
  if (containment.kind !== 'user-namespace') {
    return {
      ok: false,
      reason: `not root, and commands cannot run in a user namespace here, so none would see a namespaced overlay (${containment.reason}); ${noFuse}`,
    };
  }
  const dir = path.join(home, 'overlays', `.probe-${process.pid}`);
  const checked = checkLayerPaths(dir);
  if (!checked.ok) return { ok: false, reason: checked.error };
  const [l, u, w, m] = ['l', 'u', 'w', 'm'].map((n) => path.join(dir, n)) as [string, string, string, string];
  for (const d of [path.join(l, 'd'), u, w, m]) fs.mkdirSync(d, { recursive: true });
  try {
    // The mount every run makes, and the delete `npm install` makes: a lower directory removed
    // through the overlay, which needs overlay's xattrs kept in user.* on the upper file system.
    const script = 'mount -t overlay overlay -o "$1" "$2" || exit 10; rmdir "$2/d" || exit 11';
    const inNs = await runTool(inUserNamespace(script, 'warren-probe', overlayOptions(l, u, w, true), m), {
      timeoutMs: 10_000,
    });
    if (inNs.exitCode === 0) return { ok: true, how: 'namespaced', noFuse };
    if (inNs.exitCode === 11) {
      return {
        ok: false,
        reason: `not root: overlay mounts in a user namespace here, but deleting a directory through it fails (${firstLine(inNs.stderr)}), so the file system under ${home} does not keep user.* extended attributes; ${noFuse}`,
      };
    }
    return {
      ok: false,
      reason: `not root, and unprivileged user namespaces cannot mount overlay here (${firstLine(inNs.stderr)}); ${noFuse}`,
    };
  } finally {
    removeTree(dir); // as the same user: overlay leaves its work dir mode 000, removeTree allows for that
  }
}

/**
 * Whether fuse-overlayfs can give this user a cow mount here: a throwaway mount, a lower
 * directory deleted through it (what `npm install` does), and fusermount -u. Null when it can.
 */
async function probeFuse(home: string): Promise<string | null> {
  const dir = path.join(home, 'overlays', `.fuse-probe-${process.pid}`);
  const checked = checkLayerPaths(dir);
  if (!checked.ok) return checked.error;
  const [l, u, w, m] = ['l', 'u', 'w', 'm'].map((n) => path.join(dir, n)) as [string, string, string, string];
  for (const d of [path.join(l, 'd'), u, w, m]) fs.mkdirSync(d, { recursive: true });
  try {
    const mounted = await mountOverlay(l, u, w, m, true);
    if (!mounted.ok) return `fuse-overlayfs cannot mount here (${mounted.error})`;
    let deleted: string | null = null;
    try {
      fs.rmdirSync(path.join(m, 'd'));
    } catch (err) {
      deleted = `fuse-overlayfs mounts here, but deleting a directory through it fails (${(err as NodeJS.ErrnoException).code})`;
    }
    const off = await unmount(m);
    return deleted ?? (off.ok ? null : `fuse-overlayfs mounts here, but fusermount -u fails (${off.error})`);
  } finally {
    if (!overlayAt(m)) removeTree(dir);
  }
}
