import fs from 'node:fs';
import path from 'node:path';
import { readMounts, type MountEntry } from './mounts.js';
import { runTool } from './tool.js';

/**
 * overlayfs mounts, as copy-on-write provisioning and copy-on-write checkouts both make them: a
 * read-only lower layer, a private upper layer, a work dir. The kernel's overlay as root;
 * fuse-overlayfs for a user's mount on the host; a namespaced mount (made by each run) for a
 * user without fuse. Which of these works here is provisioning's probe (src/provision/cow-support.ts).
 */

/** The fstype of a fuse-overlayfs mount in /proc/self/mountinfo. */
export const FUSE_OVERLAY_FSTYPE = 'fuse.fuse-overlayfs';

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

/**
 * Unmounts several cow mounts. As root, one umount(8) for all of them — it goes on past one that
 * will not come off, and a process for each of a pnpm workspace's 17 layers was most of an
 * `rm` — then each target is off when the mount table no longer has an overlay there; a user's
 * fuse mounts, one fusermount each (it takes one). Each target's outcome, in the order given.
 */
export async function unmountAll(
  targets: readonly string[],
): Promise<Map<string, { ok: true } | { ok: false; error: string }>> {
  const out = new Map<string, { ok: true } | { ok: false; error: string }>();
  if (process.getuid?.() !== 0 || targets.length < 2) {
    for (const t of targets) out.set(t, await unmount(t));
    return out;
  }
  // Deepest first: a mount inside another must come off before it.
  const deepestFirst = [...targets].sort((a, b) => b.length - a.length);
  const result = await runTool(['umount', ...deepestFirst], { timeoutMs: 30_000 });
  const table = readMounts();
  for (const t of targets) {
    if (!overlayAt(t, table)) {
      out.set(t, { ok: true });
      continue;
    }
    const said = result.stderr.split('\n').find((l) => l.includes(`${t}:`));
    out.set(t, { ok: false, error: said?.trim() || firstLine(result.stderr) || `umount exited ${result.exitCode}` });
  }
  return out;
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
    inUserNamespace(script, 'warren-status', `ro,userxattr,lowerdir=${upper}:${lower}`, mountPoint),
    {
      input: `${probes.join('\n')}\n`,
      timeoutMs: 60_000,
    },
  );
  if (result.exitCode !== 0) return { ok: false, error: firstLine(result.stderr) || `exit ${result.exitCode}` };
  return { ok: true, hidden: new Set(result.stdout.split('\n').filter((l) => l !== '')) };
}

/** `sh -c script name args…` as root of a throwaway user namespace with a mount namespace of its own. */
export function inUserNamespace(script: string, name: string, ...args: string[]): string[] {
  return ['unshare', '--user', '--map-root-user', '--mount', '--', 'sh', '-c', script, name, ...args];
}

export function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
