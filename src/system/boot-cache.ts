import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic.js';

/**
 * What the machine lets this process do with namespaces is tried for real (there is no other
 * reliable sign), and each try starts processes: ~20 ms on every `exec`. The answer cannot
 * change without one of the facts below changing, so it is remembered under a key made of them:
 * - the boot (`/proc/sys/kernel/random/boot_id`): a reboot, a new kernel, new modules;
 * - the namespaces this process is in (user, mount, pid): another container, an `unshare`;
 * - uid, gid and PATH: another user, other `unshare`/`setpriv`/`mount` binaries;
 * - the sysctls that allow or forbid unprivileged namespaces (`user.max_*_namespaces`,
 *   Debian's `kernel.unprivileged_userns_clone`, Ubuntu's AppArmor restriction), read afresh
 *   each time, so an administrator who turns them off is obeyed on the next command;
 * - whatever the caller adds (e.g. the file system a probe writes on).
 * Where `/proc` cannot be read there is no key and nothing is remembered.
 */
const SYSCTLS = [
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/user/max_pid_namespaces',
  '/proc/sys/user/max_mnt_namespaces',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];

function read(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '-';
  }
}

export function bootKey(extra: readonly string[] = []): string | null {
  const boot = read('/proc/sys/kernel/random/boot_id');
  if (boot === '-') return null;
  const parts = [boot];
  try {
    for (const ns of ['user', 'mnt', 'pid']) parts.push(fs.readlinkSync(`/proc/self/ns/${ns}`));
  } catch {
    return null;
  }
  parts.push(String(process.getuid?.()), String(process.getgid?.()), process.env.PATH ?? '');
  for (const f of SYSCTLS) parts.push(read(f));
  parts.push(...extra);
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);
}

function file(dir: string, name: string, key: string): string {
  return path.join(dir, `${name}-${key}.json`);
}

/** The remembered answer, or undefined (none, unreadable, or not what `valid` accepts). */
export function recall<T>(dir: string, name: string, key: string | null, valid: (v: unknown) => v is T): T | undefined {
  if (!key) return undefined;
  try {
    const value: unknown = JSON.parse(fs.readFileSync(file(dir, name, key), 'utf8'));
    return valid(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Best effort: a cache that cannot be written only means the next command probes again. */
export function remember(dir: string, name: string, key: string | null, value: unknown): void {
  if (!key) return;
  try {
    writeFileAtomic(file(dir, name, key), JSON.stringify(value));
  } catch {
    // read-only or full: probe again next time
  }
}
