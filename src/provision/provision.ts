import fs from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import type { NewEvent, Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { budgetOf, formatBytes } from './modes/budget.js';
import { keepOutOfStatus } from './modes/exclude.js';
import { releaseRecords } from './task-mounts.js';
import { installedFacts, isNodeModules } from './snapshots/installed.js';
import { staleEvent } from './modes/cow.js';
import { provisionCopies, type ModeEnv } from './modes/modes.js';
import { relocateRecords } from './relocate/relocate.js';
import { resolveSources, type Sources } from './modes/sources.js';
import type { InstalledFacts, ProvisionItem, ProvisionRecord, ProvisionSkip } from './types.js';
import { overlaySupport } from './cow-support.js';
import { SANDBOX_UID, sandboxMapsRoot } from '../system/sandbox-uid.js';
import { lexists } from '../util/lexists.js';
import { startStep } from '../workspace/reporter.js';
import { modeKind } from './modes/kinds.js';
import { startStaging, type Staging } from './modes/staging.js';

export interface ProvisionResult {
  records: ProvisionRecord[];
  skips: ProvisionSkip[];
}

/**
 * Brings the ignored paths named by `.worktreeinclude` and `warren.yaml` into a workspace.
 * gather (sources, checks) → act per path → record (events, task.data.provision). A failure
 * undoes this call's mounts and links before it is rethrown, so creation can roll back.
 */
export async function provisionPaths(
  ctx: ProjectContext,
  task: Task,
  sources?: Sources,
  options: { lockfileRoot?: string; staging?: Staging } = {},
): Promise<ProvisionResult> {
  const progress = (line: string): void => ctx.reporter.line(line);
  const { items, skips, workspaces } = sources ?? (await resolveSources(ctx));
  const records: ProvisionRecord[] = [];
  const event: ModeEnv['event'] = (kind, level, message, data) =>
    ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind, level, message, data } as NewEvent);
  const env: ModeEnv = {
    ctx,
    task,
    budget: { limit: budgetOf(ctx.config), used: { entries: 0, bytes: 0 } },
    progress,
    event,
    ...(options.lockfileRoot ? { lockfileRoot: options.lockfileRoot } : {}),
    ...(options.staging ? { staging: options.staging } : {}),
  };
  try {
    const ready: Ready[] = [];
    for (const item of items) {
      const dst = path.join(task.path, item.path);
      const parents = unsafeParent(task.path, item.path);
      if (parents !== null) {
        skips.push({
          path: item.path,
          mode: item.mode,
          reason: 'unsafe',
          detail: `${item.path}: ${parents} in the workspace, so the copy could land outside it`,
        });
        continue;
      }
      if (lexists(dst)) {
        skips.push({
          path: item.path,
          mode: item.mode,
          reason: 'exists',
          detail: `${item.path} already exists in the workspace; warren leaves it as it is`,
        });
        continue;
      }
      ready.push({ item, dst, made: makeParents(task.path, item.path) });
    }
    for (const group of copyGroups(ready)) {
      const step = startStep(ctx.reporter, groupLabel(group));
      try {
        const made = await provisionGroup(env, group, records, skips);
        step.done(made ? undefined : 'skipped');
      } catch (err) {
        step.fail();
        throw err;
      }
    }
    const excluded = await keepOutOfStatus(
      ctx,
      task.path,
      records.map((r) => r.path),
    );
    if (excluded.length > 0) {
      event(
        'provision.excluded',
        'info',
        `added ${excluded.join(', ')} to the repository's info/exclude so git status in workspaces does not list warren's own paths`,
        { paths: excluded },
      );
    }
  } catch (err) {
    await releaseRecords(ctx, task, records, { removeFiles: true });
    ctx.store.mergeData(ctx.key, task.id, { provision: [] });
    if (isWarrenError(err)) throw err;
    throw new WarrenError(
      'PROVISION_FAILED',
      `provisioning ${task.id} failed: ${err instanceof Error ? err.message : String(err)}; what it had made was undone`,
      { cause: err },
    );
  }
  for (const ws of workspaces ?? []) {
    const dir = path.posix.dirname(ws.root);
    event(
      'provision.workspace',
      'info',
      `${ws.root}: ${dir === '.' ? 'the repository' : dir} is a workspace of ${ws.packages} package(s) (${ws.file}); ${ws.added.length} of them have a node_modules of their own, provisioned like ${ws.root}${ws.added.length > 0 ? `: ${ws.added.slice(0, 10).join(', ')}${ws.added.length > 10 ? `, and ${ws.added.length - 10} more` : ''}` : ''}`,
      { ...ws, added: ws.added.slice(0, 100) },
    );
  }
  for (const skip of skips) {
    event('provision.skip', 'warn', `skipped ${skip.path} (${skip.reason}): ${skip.detail}`, { ...skip });
  }
  const namespaced = records.filter((r) => r.namespaced).map((r) => r.path);
  if (namespaced.length > 0) {
    const why = sandboxMapsRoot()
      ? `as root: this task's bwrap sandbox runs as uid ${SANDBOX_UID}, which a layer mounted for everyone could not be given`
      : 'not root';
    const message = `${namespaced.join(', ')}: a copy-on-write layer in a user namespace (${why}), visible only to commands run through warren (exec, run, setup, verify); tools outside warren (an editor, a shell) see an empty folder. \`warren exec ${task.id} -- $SHELL\` opens a shell that sees it.${await whyNotFuse(ctx)}`;
    event('provision.namespaced', 'info', message, { paths: namespaced });
    progress(`warren: ${message}`);
  }
  ctx.store.mergeData(ctx.key, task.id, { provision: records, provisionSkips: skips });
  return { records, skips };
}

/**
 * `new`, while git makes the worktree: starts the copy of each path its mode stages and no
 * other path shares a process with (staging.ts); null when there is none.
 */
export function stageCopies(ctx: ProjectContext, taskId: string, sources: Sources): Staging | null {
  const alone = copyGroups(sources.items.map((item) => ({ item })))
    .filter((g) => g.length === 1)
    .map((g) => (g[0] as { item: ProvisionItem }).item);
  return startStaging(
    ctx,
    taskId,
    alone.filter((item) => modeKind(item.mode).staged),
  );
}

/** One group of `copyGroups`: provisioned, recorded as each path is made; false when every path was skipped. */
async function provisionGroup(
  env: ModeEnv,
  group: readonly Ready[],
  records: ProvisionRecord[],
  skips: ProvisionSkip[],
): Promise<boolean> {
  const { ctx, task, event } = env;
  const only = group[0] as Ready;
  const making =
    group.length > 1
      ? provisionCopies(env, group)
      : modeKind(only.item.mode)
          .make(env, only.item, only.dst)
          .then((o) => [o]);
  // A mode's process (cp) is under way once `make` returns: the main checkout's install is read meanwhile.
  const installing = group.map((g) => installedEarly(env, g.item));
  for (const p of installing) p?.catch(() => undefined); // awaited below, or moot once a path is skipped
  const outcomes = await making;
  for (const [i, outcome] of outcomes.entries()) {
    const { item, made } = group[i] as Ready;
    if ('skip' in outcome) {
      removeEmptyDirs(made);
      skips.push({ path: item.path, mode: item.mode, reason: outcome.skip, detail: outcome.detail });
      continue;
    }
    const r = await withInstalled(env, outcome.record, installing[i]);
    records.push(r);
    // Recorded at once: a crash later in `new` leaves a record that rm, gc and scan can act on (unmount first).
    ctx.store.mergeData(ctx.key, task.id, { provision: records });
    await relocateRecords(ctx, task, [r], event); // may set isolated: false, recorded below
    event(
      'provision.path',
      'info',
      `${r.path}: ${r.mode}${r.mode !== r.requested ? ` (asked: ${r.requested})` : ''} by ${r.method}, ${r.entries} entries, ${formatBytes(r.bytes)}, ${r.ms} ms${r.filled ? `, ${r.filled} file(s) copied where linking was refused` : ''}`,
      { ...r },
    );
  }
  return outcomes.some((o) => !('skip' in o));
}

/** What a group's step is called: `provisioning node_modules (cow)`, `provisioning 12 paths in packages (copy)`. Pure. */
function groupLabel(group: readonly Ready[]): string {
  const first = (group[0] as Ready).item;
  return group.length > 1
    ? `provisioning ${group.length} paths in ${path.posix.dirname(first.path)} (${first.mode})`
    : `provisioning ${first.path} (${first.mode})`;
}

/** A path that passed its checks, where it goes, and the folders made above it. */
interface Ready {
  item: ProvisionItem;
  dst: string;
  made: string[];
}

/**
 * The order to provision in: what `.worktreeinclude` selects is copied one `cp` per parent
 * folder (hundreds of packages under `node_modules/*` are one process, not hundreds); every
 * other path on its own. Pure.
 */
export function copyGroups<T extends { item: ProvisionItem }>(ready: readonly T[]): T[][] {
  const groups: T[][] = [];
  const byParent = new Map<string, T[]>();
  for (const r of ready) {
    if (r.item.from !== '.worktreeinclude' || !modeKind(r.item.mode).groups) {
      groups.push([r]);
      continue;
    }
    const parent = path.posix.dirname(r.item.path);
    const group = byParent.get(parent);
    if (group) group.push(r);
    else {
      const fresh = [r];
      byParent.set(parent, fresh);
      groups.push(fresh);
    }
  }
  return groups;
}

/**
 * A `node_modules` copied, linked or shared as it is in the main checkout: checked against its
 * lockfile, so a copy of a stale install is said and `status` calls the task stale (a cow path
 * is checked before its snapshot is taken).
 */
async function withInstalled(
  env: ModeEnv,
  r: ProvisionRecord,
  early: Promise<InstalledFacts> | null = null,
): Promise<ProvisionRecord> {
  if (r.installed || !isNodeModules(r.path)) return r;
  const installed = await (early ?? installedFacts(env.ctx.repo.root, r.path));
  if (installed.state === 'differs')
    staleEvent(
      env,
      r.path,
      installed,
      modeKind(r.mode).sharesSource
        ? `the main checkout's own stale ${r.path} (share)`
        : `a ${r.mode} of the main checkout's stale ${r.path}`,
    );
  return { ...r, installed };
}

/** withInstalled's read of the main checkout, started early; null where the mode checks its own (cow, before its snapshot). */
function installedEarly(env: ModeEnv, item: ProvisionItem): Promise<InstalledFacts> | null {
  if (modeKind(item.mode).layered || !isNodeModules(item.path)) return null;
  return installedFacts(env.ctx.repo.root, item.path);
}

/** Why a namespaced layer was not a fuse-overlayfs one, which every process of the user would see. */
async function whyNotFuse(ctx: ProjectContext): Promise<string> {
  const support = await overlaySupport(ctx.store.home);
  return support.ok && support.how === 'namespaced' && support.noFuse
    ? ` (Not fuse-overlayfs, which they would see: ${support.noFuse}.)`
    : '';
}

/**
 * Why the folders above `rel` in the workspace cannot hold it, or null. Threat: a tracked
 * symlink in the branch (`vendor -> /etc`) would carry a copy or a mount outside the
 * workspace, so every existing folder on the way must be a real folder, never a link.
 */
function unsafeParent(root: string, rel: string): string | null {
  const parts = rel.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const at = parts.slice(0, i).join('/');
    const st = fs.lstatSync(path.join(root, at), { throwIfNoEntry: false });
    if (!st) return null; // the rest is made by makeParents
    if (st.isSymbolicLink()) return `${at} is a symlink`;
    if (!st.isDirectory()) return `${at} is not a folder`;
  }
  return null;
}

/**
 * Makes the missing folders above `rel` (a listed `cache/data.json` whose `cache/` the branch
 * does not have), one `mkdir` at a time so none goes through a link; returns those it made.
 */
function makeParents(root: string, rel: string): string[] {
  const made: string[] = [];
  const parts = rel.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const at = path.join(root, ...parts.slice(0, i));
    if (lexists(at)) continue;
    fs.mkdirSync(at);
    made.push(at);
  }
  return made;
}

/** Removes folders makeParents made, deepest first, where they are still empty. */
function removeEmptyDirs(dirs: readonly string[]): void {
  for (const dir of [...dirs].reverse()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      return; // not empty: something else is there now, and it stays
    }
  }
}
