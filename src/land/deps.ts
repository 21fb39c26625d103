import path from 'node:path';
import { LOCKFILES, readSnapshotMeta, sha256File, snapshotsDir } from '../provision/snapshots/snapshot.js';
import { listDir } from '../util/list-dir.js';
import type { ProjectContext } from '../workspace/context.js';

/** The lockfiles among the paths a landed change touched. Pure. */
export function lockfilesAmong(changed: readonly string[]): string[] {
  const names = new Set<string>(LOCKFILES);
  return changed.filter((p) => names.has(path.posix.basename(p)));
}

/**
 * A landed change that touched a lockfile leaves what is installed in the checkout of the base
 * (the main checkout) stale: said as an event and a warning `land` prints. What new workspaces
 * get then depends on whether a snapshot of that lockfile exists — the merge queue's gate keeps
 * its install of the integrated lockfile as one — so the message says which (issue 41: it said
 * "the last good snapshot, marked stale" when the next task got the gate's, not stale).
 */
export function recordDepsStale(
  ctx: ProjectContext,
  taskId: string,
  commit: string,
  checkout: string | null,
  changed: readonly string[],
): string[] {
  const lockfiles = lockfilesAmong(changed);
  if (checkout === null || lockfiles.length === 0) return [];
  const snapshots = snapshotsOf(ctx.store.home, checkout, lockfiles);
  const message = depsStaleMessage(lockfiles, checkout, snapshots);
  ctx.store.addEvent({
    project: ctx.key,
    taskId,
    kind: 'land.deps_stale',
    level: 'warn',
    message,
    data: { lockfiles, checkout, commit },
  });
  return [message];
}

/** What a landed lockfile change means, given how many snapshots each landed lockfile content has. Pure. */
export function depsStaleMessage(
  lockfiles: readonly string[],
  checkout: string,
  snapshots: ReadonlyMap<string, number>,
): string {
  const covered = lockfiles.filter((l) => (snapshots.get(l) ?? 0) > 0);
  const bare = lockfiles.filter((l) => !covered.includes(l));
  const count = covered.reduce((n, l) => n + (snapshots.get(l) ?? 0), 0);
  const parts = [
    `the landed change touched ${lockfiles.join(', ')}: the dependencies installed in ${checkout} are now stale. Reinstall there (e.g. \`npm ci\`, \`pnpm install --frozen-lockfile\`)`,
    ...(covered.length > 0
      ? [
          `new workspaces get the ${count === 1 ? 'snapshot' : `${count} snapshots`} already installed from the landed ${covered.join(', ')} (the merge queue's gate keeps its install), not stale`,
        ]
      : []),
    ...(bare.length > 0
      ? [
          `until then new workspaces get the last good snapshot${covered.length > 0 ? ` of ${bare.join(', ')}` : ''} and are marked stale`,
        ]
      : []),
  ];
  return parts.join('; ');
}

/** How many snapshots each lockfile's content in `checkout` has (by the lockfile each snapshot was keyed by). */
function snapshotsOf(home: string, checkout: string, lockfiles: readonly string[]): Map<string, number> {
  const wanted = new Map(lockfiles.map((l) => [l, sha256File(path.join(checkout, l))]));
  const out = new Map<string, number>();
  const dir = snapshotsDir(home);
  for (const name of listDir(dir)) {
    const lock = readSnapshotMeta(path.join(dir, name))?.lockfile;
    if (lock && wanted.get(lock.path) === lock.sha256) out.set(lock.path, (out.get(lock.path) ?? 0) + 1);
  }
  return out;
}
