import { recordedSetting } from '../config/trust.js';
import { WarrenError } from '../errors.js';
import { moveCheckout } from '../git/index-ops.js';
import { createRef, deleteRefAt, refsUnder, treeOf } from '../git/refs.js';
import { setIndexTree, snapshotWorktree, type WorktreeSnapshot } from '../git/snapshot.js';
import { commitTree } from '../git/trees.js';
import type { Task } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import { shellCommand } from '../util/shell.js';
import { archiveRecords, forgetArchive, recordArchive } from './archive-records.js';
import type { ProjectContext } from './context.js';
import type { GcCollected, GcStep } from './types.js';
import { provisionedExcludes } from './provisioned.js';
import { pinned } from './pinned.js';

/**
 * What `rm --discard` saves before it removes a task: one commit under
 * `refs/warren/archive/<ID>/<UTC time>`, made with plumbing only.
 *
 * - Its tree is the workspace as it was: tracked files as they were on disk, and untracked files
 *   git does not ignore. warren's provisioned paths, and what `.gitignore` ignores, are left out
 *   (a plain `rm` deletes those too).
 * - Its first parent is the branch tip: every commit of the task stays reachable, landed or not,
 *   after the branch is deleted.
 * - Its second parent is a commit of the index as it was, so `restore` brings staged changes back
 *   staged, the rest unstaged, and untracked files untracked.
 * - Its message names the task's type, branch, base (and sandbox, when the task had its own) in
 *   trailers: an archive's facts are read from git.
 * - warren records the ref and its commit in its database before it makes the ref
 *   (archive-records.ts): a ref under refs/warren/archive/ that the record does not name at that
 *   commit, or dated in the future, is someone else's — an agent shares the refs. It is not
 *   restored, `gc` leaves it, and both say so.
 */

export const ARCHIVE_PREFIX = 'refs/warren/archive/';
/** How long `gc` keeps an archive when warren.yaml does not say (`archive: { keep: 14d }`). */
export const DEFAULT_ARCHIVE_KEEP = '14d';

export interface Archive {
  id: string;
  /** `refs/warren/archive/<ID>/<UTC time>`. */
  ref: string;
  /** When it was made, ISO 8601 UTC. */
  at: string;
  commit: string;
  /** The branch tip it keeps, with the task's commits. */
  tip: string;
  /** The commit holding the index as it was. */
  index: string;
  type: string;
  branch: string;
  base: string;
  baseCommit: string;
  /** The task's own sandbox (`new --sandbox`), when it had one: `restore` gives it back. */
  sandbox?: 'none' | 'bwrap' | 'container';
}

/** `20261130T191218.123Z`: the time in a ref name (no `:`), sorting as it reads. */
export function archiveStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '');
}

/** Pure: the ID and time a ref name carries, or null for a name warren did not write. */
export function parseArchiveRef(ref: string): { id: string; at: string } | null {
  const m = /^refs\/warren\/archive\/([^/]+)\/(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)\.(\d{3})Z$/.exec(ref);
  if (!m) return null;
  const [, id = '', y, mo, d, h, mi, s, ms] = m;
  return { id, at: `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z` };
}

const TRAILERS = {
  type: 'Warren-Type',
  branch: 'Warren-Branch',
  base: 'Warren-Base',
  baseCommit: 'Warren-Base-Commit',
} as const;

const SANDBOX_TRAILER = 'Warren-Sandbox';

export function archiveMessage(
  task: Pick<Task, 'id' | 'type' | 'branch' | 'base' | 'baseCommit'> & { data?: Pick<Task['data'], 'sandbox'> },
  indexKept: boolean,
): string {
  const sandbox = task.data?.sandbox;
  return [
    `warren archive of ${task.id}`,
    '',
    `Saved by \`warren rm ${task.id} --discard\`; \`warren restore ${task.id}\` brings it back.${indexKept ? '' : ' The index had unmerged paths: it was not kept, every change comes back unstaged.'}`,
    '',
    `Warren-Task: ${task.id}`,
    ...Object.entries(TRAILERS).map(([key, trailer]) => `${trailer}: ${task[key as keyof typeof TRAILERS]}`),
    ...(sandbox ? [`${SANDBOX_TRAILER}: ${sandbox}`] : []),
    '',
  ].join('\n');
}

/** Pure: the task facts an archive's message carries, or null when one is missing. */
export function parseArchiveMessage(
  message: string,
): Pick<Archive, 'type' | 'branch' | 'base' | 'baseCommit' | 'sandbox'> | null {
  const value = (trailer: string): string | null => {
    const line = message.split('\n').find((l) => l.startsWith(`${trailer}: `));
    return line ? line.slice(trailer.length + 2).trim() : null;
  };
  const type = value(TRAILERS.type);
  const branch = value(TRAILERS.branch);
  const base = value(TRAILERS.base);
  const baseCommit = value(TRAILERS.baseCommit);
  const sandbox = value(SANDBOX_TRAILER);
  if (!type || !branch || !base || !baseCommit) return null;
  return {
    type,
    branch,
    base,
    baseCommit,
    ...(sandbox === 'none' || sandbox === 'bwrap' || sandbox === 'container' ? { sandbox } : {}),
  };
}

/**
 * Saves the task's workspace and commits under a new archive ref. `snapshot` null: the workspace
 * is gone already (a `remove_failed` task), so only the branch tip is kept.
 */
export async function archiveTask(
  ctx: ProjectContext,
  task: Task,
  tip: string,
  snapshot: WorktreeSnapshot | null,
  now = new Date(),
): Promise<Archive> {
  const tipTree = await treeOf(ctx.repo, tip);
  const indexKept = snapshot === null || snapshot.indexTree !== null;
  const index = await commitTree(
    ctx.repo,
    snapshot?.indexTree ?? tipTree,
    tip,
    `warren archive of ${task.id}: the index\n`,
  );
  const commit = await commitTree(ctx.repo, snapshot?.tree ?? tipTree, [tip, index], archiveMessage(task, indexKept));
  // A ref of the same millisecond (two discards of one ID in a row) takes the next one.
  for (let t = now.getTime(); t < now.getTime() + 50; t++) {
    const at = new Date(t);
    const ref = `${ARCHIVE_PREFIX}${task.id}/${archiveStamp(at)}`;
    // Recorded first: a crash between the two leaves a record of no ref, which gc forgets.
    if (!recordArchive(ctx, task.id, ref, commit)) continue;
    if (!(await createRef(ctx.repo, ref, commit, `warren: rm ${task.id} --discard`))) {
      forgetArchive(ctx, ref, commit);
    } else {
      return {
        id: task.id,
        ref,
        at: at.toISOString(),
        commit,
        tip,
        index,
        type: task.type,
        branch: task.branch,
        base: task.base,
        baseCommit: task.baseCommit,
        ...(task.data.sandbox ? { sandbox: task.data.sandbox } : {}),
      };
    }
  }
  throw new WarrenError('GIT_LOCKED', `could not create an archive ref for task ${task.id}; nothing was removed.`, {
    hint: 'Run the command again.',
  });
}

/** The workspace as it is, for `archiveTask`: read through a copy of its index. */
export async function snapshotTask(ctx: ProjectContext, task: Task): Promise<WorktreeSnapshot> {
  return snapshotWorktree(await pinned(ctx, task.path), await provisionedExcludes(ctx, task), ctx.store.home);
}

/** Why a ref under refs/warren/archive/ is not an archive warren restores. */
export type IgnoredWhy = 'unrecorded' | 'moved' | 'future';

export interface IgnoredArchive {
  ref: string;
  /** The ID and time its name carries, when it is named as warren names archives. */
  id: string | null;
  at: string | null;
  commit: string;
  why: IgnoredWhy;
  /** In words, with what to do. */
  reason: string;
}

export interface ArchiveScan {
  /** The archives warren made, oldest first. */
  archives: Archive[];
  /** Refs under warren's namespace it did not make, moved since, or dated in the future. */
  ignored: IgnoredArchive[];
  /** Records whose ref is gone (deleted by hand, or a discard killed before it made the ref). */
  gone: { ref: string; commit: string; createdAt: string }[];
}

/** Every archive of this repository (of one task, when `id` is given), oldest first. */
export async function listArchives(ctx: ProjectContext, id?: string): Promise<Archive[]> {
  return (await scanArchives(ctx, id)).archives;
}

/** The refs under refs/warren/archive/ (of one task) read against warren's records of them. */
export async function scanArchives(ctx: ProjectContext, id?: string, now = new Date()): Promise<ArchiveScan> {
  const refs = await refsUnder(ctx.repo, id === undefined ? ARCHIVE_PREFIX : `${ARCHIVE_PREFIX}${id}/`);
  const records = archiveRecords(ctx, id);
  const archives: Archive[] = [];
  const ignored: IgnoredArchive[] = [];
  for (const r of refs) {
    const named = parseArchiveRef(r.ref);
    const record = records.get(r.ref);
    records.delete(r.ref);
    const why = ignoredWhy(r.ref, r.commit, record?.commit ?? null, named?.at ?? null, now);
    if (why) {
      ignored.push({ ref: r.ref, id: named?.id ?? null, at: named?.at ?? null, commit: r.commit, ...why });
      continue;
    }
    const facts = parseArchiveMessage(r.message);
    const [tip, index] = r.parents;
    if (!named || !facts || !tip || !index) continue;
    archives.push({ id: named.id, ref: r.ref, at: named.at, commit: r.commit, tip, index, ...facts });
  }
  return {
    archives: archives.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id)),
    ignored,
    gone: [...records.values()].map((r) => ({ ref: r.ref, commit: r.commit, createdAt: r.createdAt })),
  };
}

/** Pure: why a ref is not an archive warren made, or null when it is one. */
export function ignoredWhy(
  ref: string,
  commit: string,
  recorded: string | null,
  at: string | null,
  now: Date,
): { why: IgnoredWhy; reason: string } | null {
  const look = `restore does not use it and gc does not delete it; \`${shellCommand(['git', 'log', '-p', ref])}\` shows it, \`${shellCommand(['git', 'update-ref', '-d', ref])}\` deletes it`;
  if (recorded === null)
    return {
      why: 'unrecorded',
      reason: `warren did not make it (it has no record of it; anyone who can write the repository's refs, an agent too, can make one): ${look}`,
    };
  if (recorded !== commit)
    return {
      why: 'moved',
      reason: `it points at ${commit.slice(0, 12)}, not at the commit warren archived (${recorded.slice(0, 12)}): ${look}`,
    };
  if (at !== null && Date.parse(at) > now.getTime())
    return { why: 'future', reason: `it is dated ${at}, in the future (was the clock set back?): ${look}` };
  return null;
}

/**
 * Puts an archive's files and index into a fresh worktree of its branch tip: the files move
 * from the tip to the archived tree (`read-tree -m -u`: the checkout is pristine, so nothing is
 * in the way), then the index is set to the archived index. What was untracked is untracked again.
 */
export async function populateFromArchive(ctx: ProjectContext, wsPath: string, archive: Archive): Promise<void> {
  const wt = await pinned(ctx, wsPath);
  const moved = await moveCheckout(wt, archive.tip, archive.commit);
  if (moved.exitCode !== 0) {
    throw new WarrenError(
      'GIT_FAILED',
      `could not put archive ${archive.ref}'s files in ${wsPath}: ${moved.stderr.trim()}`,
      { details: { stderr: moved.stderr } },
    );
  }
  await setIndexTree(wt, await treeOf(ctx.repo, archive.index));
}

/** A record with no ref is forgotten once it is this old: a discard makes its ref right after recording it. */
const GONE_AFTER_MS = 10 * 60_000;

/**
 * How long gc keeps an archive: the longer of warren.yaml's `archive.keep` and the one the user
 * last trusted (trust/trust.ts; warren's default when none was). `archive` is in the trusted set,
 * and gc is the user's own command, so it neither refuses nor acts on a keep the user has not
 * trusted: a landed `keep: 1s` deletes nothing before `warren trust`. A longer keep needs no
 * trust: keeping loses nothing. `untrusted` says why an archive past warren.yaml's keep stays.
 */
function archiveKeep(ctx: ProjectContext): { ms: number; configuredMs: number; untrusted: string | null } {
  const configured = ctx.config.archive?.keep ?? DEFAULT_ARCHIVE_KEEP;
  const configuredMs = parseDuration(configured, 'archive.keep');
  const recorded = recordedSetting(ctx.store.getTrust(ctx.key)?.commands, 'archive') as { keep?: unknown } | undefined;
  const trusted = typeof recorded?.keep === 'string' ? recorded.keep : DEFAULT_ARCHIVE_KEEP;
  let trustedMs: number;
  try {
    trustedMs = parseDuration(trusted, 'archive.keep');
  } catch {
    trustedMs = parseDuration(DEFAULT_ARCHIVE_KEEP);
  }
  if (trustedMs <= configuredMs) return { ms: configuredMs, configuredMs, untrusted: null };
  return {
    ms: trustedMs,
    configuredMs,
    untrusted: `warren.yaml's archive.keep (${configured}) is not the one you trusted (${trusted}): gc keeps archives ${trusted} until you review it with \`warren trust\``,
  };
}

/**
 * `gc`: archives older than `archive: { keep }` (default 14 days; see archiveKeep) are deleted,
 * each listed; a ref warren did not make (or that moved, or is dated in the future) is kept and
 * listed with why, and does not stop the others. A record whose ref is gone is forgotten.
 */
export const archiveGc: GcStep = {
  name: 'archives',
  async collect(ctx): Promise<GcCollected> {
    const now = new Date();
    const keep = archiveKeep(ctx);
    const removed: GcCollected['removed'] = [];
    const kept: GcCollected['kept'] = [];
    const scan = await scanArchives(ctx, undefined, now);
    for (const a of scan.archives) {
      const age = now.getTime() - Date.parse(a.at);
      if (age < keep.ms) {
        if (keep.untrusted !== null && age >= keep.configuredMs)
          kept.push({ kind: 'archive', path: a.ref, reason: keep.untrusted });
        continue;
      }
      if (await deleteRefAt(ctx.repo, a.ref, a.commit)) {
        forgetArchive(ctx, a.ref, a.commit);
        removed.push({ kind: 'archive', action: 'delete-ref', id: a.id, path: a.ref, branch: a.branch });
      } else kept.push({ kind: 'archive', path: a.ref, reason: 'it moved while gc was deleting it' });
    }
    for (const i of scan.ignored) kept.push({ kind: 'archive', path: i.ref, reason: i.reason });
    // Not one a running discard recorded a moment ago and is about to make.
    for (const g of scan.gone)
      if (now.getTime() - Date.parse(g.createdAt) > GONE_AFTER_MS) forgetArchive(ctx, g.ref, g.commit);
    return { removed, kept };
  },
};
