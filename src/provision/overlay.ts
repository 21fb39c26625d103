import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectContainment } from '../run/containment.js';
import { bootKey, recall, remember } from '../system/boot-cache.js';
import { readMounts, type MountEntry } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { runTool } from '../system/tool.js';

/**
 * overlayfs for `cow`: a read-only lower layer shared by every workspace, a private upper
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

/** The fstype of a fuse-overlayfs mount in /proc/self/mountinfo. */
export const FUSE_OVERLAY_FSTYPE = 'fuse.fuse-overlayfs';

let cached: OverlaySupport | null = null;

/**
 * Probed once per process; a namespaced probe that worked (a throwaway mount, ~30 ms) is also remembered
 * under `$WARREN_HOME/cache` for as long as the facts it depends on stay the same — the boot,
 * namespaces, sysctls (src/system/boot-cache.ts) and the file system under `home`.
 */
export async function overlaySupport(home: string): Promise<OverlaySupport> {
  if (cached) return cached;
  if (process.env[COW_ENV] === 'off' || os.platform() !== 'linux' || process.getuid?.() === 0) {
    cached = await probe(home);
    return cached;
  }
  const cacheDir = path.join(home, 'cache');
  let dev = '-';
  try {
    dev = String(fs.statSync(home).dev);
  } catch {
    // not made yet: the probe makes it
  }
  const key = bootKey([home, dev, process.env[COW_ENV] ?? '']);
  const recalled = recall(cacheDir, 'overlay', key, isSupport);
  cached = recalled ?? (await probe(home));
  // Only success is remembered: a failure may be passing (a full disk, a timeout) and leads to a copy.
  if (!recalled && cached.ok) remember(cacheDir, 'overlay', key, cached);
  return cached;
}

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
    const inNs = await runTool(
      [
        'unshare',
        '--user',
        '--map-root-user',
        '--mount',
        '--',
        'sh',
        '-c',
        script,
        'warren-probe',
        overlayOptions(l, u, w, true),
        m,
      ],
      { timeoutMs: 10_000 },
    );
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
 * The `-o` string of a cow mount. A namespaced one keeps overlay's own marks (opaque
 * directories, redirects) in `user.overlay.*` xattrs (`userxattr`): a user namespace may not
 * write `trusted.*`, and without them deleting a lower directory fails with EIO.
 */
export function overlayOptions(lower: string, upper: string, work: string, namespaced: boolean): string {
  return `${namespaced ? 'userxattr,' : ''}lowerdir=${lower},upperdir=${upper},workdir=${work}`;
}

/** Paths overlay's option parser would split (`,` `:`) or misread (`\`). */
export function overlayUnsafePath(p: string): boolean {
  return /[,:\\\n]/.test(p);
}

/** Whether overlay's mount options can carry these paths. */
export function checkLayerPaths(...paths: string[]): { ok: true } | { ok: false; error: string } {
  const unsafe = paths.find(overlayUnsafePath);
  return unsafe === undefined
    ? { ok: true }
    : { ok: false, error: `${unsafe} contains , : or \\, which overlay mount options cannot carry` };
}

/**
 * A global overlay on `target`: the kernel's (root), or with `fuse` fuse-overlayfs, whose daemon
 * detaches once the mount is made and serves it until it is unmounted.
 */
export async function mountOverlay(
  lower: string,
  upper: string,
  work: string,
  target: string,
  fuse = false,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const checked = checkLayerPaths(lower, upper, work, target);
  if (!checked.ok) return checked;
  const argv = fuse
    ? ['fuse-overlayfs', '-o', overlayOptions(lower, upper, work, false), target]
    : ['mount', '-t', 'overlay', 'overlay', '-o', overlayOptions(lower, upper, work, false), target];
  const result = await runTool(argv, { timeoutMs: 30_000 });
  return result.exitCode === 0
    ? { ok: true }
    : { ok: false, error: firstLine(result.stderr) || `${argv[0]} exited ${result.exitCode}` };
}

/** Unmounts a cow mount: root with umount(8); a user, who can only have made a fuse one, with fusermount. */
export async function unmount(target: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const argv = process.getuid?.() === 0 ? ['umount', target] : ['fusermount3', '-u', target];
  let result = await runTool(argv, { timeoutMs: 30_000 });
  if (result.exitCode === 127 && argv[0] === 'fusermount3')
    result = await runTool(['fusermount', '-u', target], { timeoutMs: 30_000 });
  return result.exitCode === 0
    ? { ok: true }
    : { ok: false, error: firstLine(result.stderr) || `${argv[0]} exited ${result.exitCode}` };
}

export function isOverlayMount(m: MountEntry): boolean {
  return m.fsType === 'overlay' || m.fsType === FUSE_OVERLAY_FSTYPE;
}

export function overlayAt(target: string, table: readonly MountEntry[] = readMounts()): MountEntry | undefined {
  return table.find((m) => m.mountPoint === target && isOverlayMount(m));
}

/**
 * True when the overlay on `target` is there but dead: a fuse-overlayfs whose daemon was killed
 * leaves its mount, and every access fails with ENOTCONN.
 */
export function deadMount(target: string): boolean {
  try {
    fs.statSync(target);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOTCONN';
  }
}

/**
 * The value of one option (`upperdir`, `lowerdir`) of an overlay mount: the kernel's shows it in
 * its super options; a fuse-overlayfs mount does not, so it is read from its daemon's argv.
 */
export function overlayOption(mount: MountEntry, name: string): string | null {
  const options =
    mount.fsType === FUSE_OVERLAY_FSTYPE ? (fuseDaemonOptions().get(mount.mountPoint) ?? '') : mount.options;
  for (const part of options.split(',')) if (part.startsWith(`${name}=`)) return part.slice(name.length + 1);
  return null;
}

/** Mount point → `-o` string, of every fuse-overlayfs daemon this user can read (/proc/PID/cmdline). */
function fuseDaemonOptions(): Map<string, string> {
  const out = new Map<string, string>();
  let pids: string[] = [];
  try {
    pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const pid of pids) {
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
    } catch {
      continue;
    }
    if (path.basename(argv[0] ?? '') !== 'fuse-overlayfs') continue;
    const o = argv.indexOf('-o');
    const target = argv[argv.length - 1];
    if (o >= 0 && argv[o + 1] !== undefined && target !== undefined) out.set(target, argv[o + 1] as string);
  }
  return out;
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

/**
 * Which of `probes` a namespaced overlay hides. Each probe is a lower entry absent from the upper
 * layer, so it is hidden exactly when its directory in the upper layer is opaque (replaced, as
 * `rm -rf dir && mkdir dir` does). overlay keeps that mark in a user.overlay.opaque xattr, which
 * Node cannot read; a read-only overlay of the two layers, mounted on `mountPoint` in a
 * throwaway user namespace, answers instead. Probes travel on stdin, one per line.
 */
export async function hiddenInNamespace(
  upper: string,
  lower: string,
  mountPoint: string,
  probes: readonly string[],
): Promise<{ ok: true; hidden: Set<string> } | { ok: false; error: string }> {
  if (probes.length === 0) return { ok: true, hidden: new Set() };
  const script =
    'mount -t overlay overlay -o "$1" "$2" || exit 1; cd "$2" || exit 1; while IFS= read -r p; do [ -e "$p" ] || [ -h "$p" ] || printf "%s\\n" "$p"; done';
  const result = await runTool(
    [
      'unshare',
      '--user',
      '--map-root-user',
      '--mount',
      '--',
      'sh',
      '-c',
      script,
      'warren-status',
      `ro,userxattr,lowerdir=${upper}:${lower}`,
      mountPoint,
    ],
    {
      input: `${probes.join('\n')}\n`,
      timeoutMs: 60_000,
    },
  );
  if (result.exitCode !== 0) return { ok: false, error: firstLine(result.stderr) || `exit ${result.exitCode}` };
  return { ok: true, hidden: new Set(result.stdout.split('\n').filter((l) => l !== '')) };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
