import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { removeTree } from '../../system/remove-tree.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { EventKind, EventPayloads } from '../../state/events.js';
import { formatBytes, overBudget, type Budget } from './budget.js';
import { bestCopyMethod, hardlinkTree, startCopy } from './copy.js';
import { moveIn, type Staging } from './staging.js';
import { sameCacheFile, taskManifestDir } from '../layout.js';
import {
  containTree,
  copySawSame,
  findingsForCopy,
  newFindings,
  noteEntry,
  scanListings,
  type Contained,
  type Findings,
} from './contain.js';
import { walkTree } from '../status/manifest.js';
import { fsNow } from '../status/since.js';
import { lockfileFor } from '../snapshots/snapshot.js';
import type { ProvisionItem, ProvisionRecord } from '../types.js';

/** What one mode hands back: a record, or a reason it skipped the path. */
export type ModeOutcome = { record: ProvisionRecord } | { skip: 'over-budget'; detail: string };

export interface ModeEnv {
  ctx: ProjectContext;
  task: Task;
  budget: { limit: Budget; used: Budget };
  progress(line: string): void;
  /**
   * The tree whose lockfiles decide the snapshot key (default: the main checkout). The merge
   * queue's gate passes the integrated tree, so a snapshot built for its lockfile is the one used.
   */
  lockfileRoot?: string;
  /** `new`: the copies started while git made the worktree, for the modes to move in (staging.ts). */
  staging?: Staging;
  /** Records an event; the CLI shows every warning event itself, so a warning is not also a progress line. */
  event<K extends EventKind>(kind: K, level: 'info' | 'warn', message: string, data: EventPayloads[K]): void;
}

export function recordBase(
  env: ModeEnv,
  item: ProvisionItem,
): Pick<ProvisionRecord, 'path' | 'requested' | 'source'> & { lockfile?: ProvisionRecord['lockfile'] } {
  const source = path.join(env.ctx.repo.root, item.path);
  // Only an install folder comes from a lockfile; `.env` beside package-lock.json does not.
  const lock = fs.statSync(source, { throwIfNoEntry: false })?.isDirectory()
    ? lockfileFor(env.lockfileRoot ?? env.ctx.repo.root, item.path)
    : null;
  return { path: item.path, requested: item.mode, source, ...(lock ? { lockfile: lock } : {}) };
}

/**
 * `cp` starts at once; meanwhile one walk of the source gives the budget check and finds what
 * containment must look at. On an idle machine the walk runs beside cp on another core, so the
 * whole costs what `cp -a` costs; over budget, the copy is killed and what it had made deleted
 * before anything more is written. No manifest is kept: `status` reads what changed after the
 * instant recorded once the copy is made (status/since.ts).
 */
export async function provisionCopy(
  env: ModeEnv,
  item: ProvisionItem,
  dst: string,
  fallback?: string,
): Promise<ModeOutcome> {
  return (await provisionCopies(env, [{ item, dst }], fallback))[0] as ModeOutcome;
}

/**
 * Several paths with the same parent folder (what `.worktreeinclude` selects inside a folder
 * it does not select whole, e.g. `node_modules/*` less one package) by one `cp`: one process
 * rather than hundreds. One outcome per path, in order. Should the group go over the budget,
 * it is undone and each path is copied on its own, so each is kept or skipped by itself.
 */
export async function provisionCopies(
  env: ModeEnv,
  group: readonly { item: ProvisionItem; dst: string }[],
  fallback?: string,
): Promise<ModeOutcome[]> {
  const started = Date.now();
  const first = group[0];
  if (!first) return [];
  const recs = group.map((g) => recordBase(env, g.item));
  const label =
    group.length === 1 ? first.item.path : `${group.length} paths in ${path.posix.dirname(first.item.path)}`;
  const abort = new AbortController();
  let total: number | null = null; // known once the walks below are done
  const progress = (written: number): void =>
    env.progress(
      `warren: copying ${label}: ${formatBytes(written)}${total ? ` of ${formatBytes(total)} (${Math.min(99, Math.floor((written * 100) / total))}%)` : ''}…`,
    );
  // Started while git made the worktree (staging.ts), or now.
  const staged = group.length === 1 ? (env.staging?.take(first.item.path) ?? null) : null;
  staged?.onProgress(progress);
  abort.signal.addEventListener('abort', () => staged?.abort());
  const copying = staged
    ? staged.made.then(() => {
        if (!abort.signal.aborted) moveIn(staged, first.dst);
      })
    : startCopy(
        group.length === 1 ? (recs[0] as (typeof recs)[number]).source : recs.map((r) => r.source),
        group.length === 1 ? first.dst : path.dirname(first.dst),
        abort.signal,
        progress,
      );
  copying.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  // What cp can do here (clone or copy), asked while it copies: the record says which it was.
  const probing = bestCopyMethod(path.dirname(first.dst));
  probing.catch(() => undefined); // awaited below
  const undo = async (): Promise<void> => {
    abort.abort();
    await Promise.all([copying.catch(() => undefined), probing.catch(() => undefined)]);
    for (const g of group) removeTree(g.dst);
  };
  const walked: { found: Findings; counted: Budget }[] = [];
  try {
    for (const r of recs) {
      const found = newFindings();
      const counted: Budget = { entries: 0, bytes: 0 };
      walkTree(r.source, (rel, st) => {
        if (rel !== '' || !st.isDirectory()) counted.entries++;
        if (st.isFile()) counted.bytes += st.size;
        return noteEntry(found, rel, st);
      });
      walked.push({ found, counted });
    }
  } catch (err) {
    await undo();
    throw err;
  }
  const counted = walked.reduce(
    (sum, w) => ({ entries: sum.entries + w.counted.entries, bytes: sum.bytes + w.counted.bytes }),
    { entries: 0, bytes: 0 },
  );
  const over = overBudget(env.budget.used, env.budget.limit, counted);
  if (over) {
    await undo();
    if (group.length === 1) return [{ skip: 'over-budget', detail: `${first.item.path}: ${over}` }];
    const each: ModeOutcome[] = [];
    for (const g of group) each.push(...(await provisionCopies(env, [g], fallback)));
    return each;
  }
  total = counted.bytes;
  env.budget.used.entries += counted.entries;
  env.budget.used.bytes += counted.bytes;
  if (counted.entries > 2000) env.progress(`warren: copying ${label} (${counted.entries} entries)…`);
  await copying;
  const method = await probing.catch(async (err: unknown) => {
    await undo();
    throw err;
  });
  const outcomes: ModeOutcome[] = [];
  for (const [i, g] of group.entries()) {
    const rec = recs[i] as (typeof recs)[number];
    const w = walked[i] as (typeof walked)[number];
    // The source's walk saw every link cp -a copied (or the copy is walked again); each is verified here, so `isolated` is true.
    const checked = findingsForCopy(w.found, g.dst);
    const contained = await contain(env, g.item, g.dst, rec.source, checked.found);
    outcomes.push({
      record: {
        ...rec,
        mode: 'copy',
        isolated: true,
        method,
        entries: w.counted.entries,
        bytes: w.counted.bytes,
        ms: Date.now() - started,
        ...sinceNow(env, g.item.path),
        ...(fallback ? { fallback } : {}),
        ...containedFacts(contained),
      },
    });
  }
  return outcomes;
}

/**
 * The instant after which `status` counts a change (status/since.ts), from the file system's
 * clock, and where it keeps what it found identical to the main checkout: taken once the path
 * is made and contained, before any command of the task runs.
 */
function sinceNow(env: ModeEnv, rel: string): Pick<ProvisionRecord, 'since' | 'sameCache'> {
  return { since: fsNow(taskManifestDir(env.ctx, env.task.id)), sameCache: sameCacheFile(env.ctx, env.task.id, rel) };
}

/**
 * Makes a provisioned tree contained (contain.ts) and says what was done: a warning event per
 * path naming every link that led outside and every entry taken out.
 */
async function contain(
  env: ModeEnv,
  item: ProvisionItem,
  tree: string,
  source: string,
  found: Findings,
): Promise<Contained> {
  const contained = await containTree({
    tree,
    itemRel: item.path,
    source,
    repoRoot: env.ctx.repo.root,
    found,
    budget: env.budget,
  });
  reportContained(env, item.path, contained);
  return contained;
}

export function reportContained(
  env: ModeEnv,
  itemPath: string,
  contained: Pick<Contained, 'outsideLinks' | 'stripped'>,
): void {
  const { outsideLinks, stripped } = contained;
  if (outsideLinks.length > 0) {
    const listed = outsideLinks.slice(0, 10).map((l) => `${l.path} -> ${l.target} ${l.why}`);
    env.event(
      'provision.outside_links',
      'warn',
      `${itemPath}: ${outsideLinks.length} symlink(s) pointed outside the workspace, where a write through them would land: ${listed.join('; ')}${outsideLinks.length > 10 ? `; and ${outsideLinks.length - 10} more (warren show --json lists them)` : ''}`,
      { path: itemPath, links: outsideLinks.slice(0, 100) },
    );
  }
  if (stripped.length > 0) {
    const listed = stripped.slice(0, 10).map((e) => `${e.path} (${e.why})`);
    env.event(
      'provision.stripped',
      'warn',
      `${itemPath}: left out of the workspace's copy: ${listed.join(', ')}${stripped.length > 10 ? `, and ${stripped.length - 10} more` : ''}`,
      {
        path: itemPath,
        entries: stripped.slice(0, 100),
      },
    );
  }
}

/** The record's account of containment (absent when there was nothing to do). */
export function containedFacts(
  contained: Pick<Contained, 'outsideLinks' | 'stripped'>,
): Pick<ProvisionRecord, 'outsideLinks' | 'stripped' | 'contained'> {
  return {
    contained: true,
    ...(contained.outsideLinks.length > 0 ? { outsideLinks: contained.outsideLinks.slice(0, 100) } : {}),
    ...(contained.stripped.length > 0 ? { stripped: contained.stripped.slice(0, 100) } : {}),
  };
}

export async function provisionHardlink(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = recordBase(env, item);
  env.progress(`warren: linking ${item.path}…`);
  // Started while git made the worktree (staging.ts), or now.
  const staged = env.staging?.take(item.path) ?? null;
  const linking = staged
    ? staged.made.then((o) => {
        moveIn(staged, dst);
        return o ?? { linked: null, filled: 0, filledBytes: 0, failed: [] };
      })
    : hardlinkTree(rec.source, dst);
  linking.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  // Containment needs the links, devices and VCS folders: the source's folder listings name
  // them, read while cp links (on the other core). `cp -al` gives each folder the mtime it
  // read, so where every folder of the copy has the mtime the listing saw, the copy holds what
  // was listed; else (the source changed meanwhile, a fill pass wrote into a folder) the copy's
  // own listings are read, which hold no mount to look for (nor any folder to lstat).
  let listed: ReturnType<typeof scanListings>;
  try {
    listed = scanListings(rec.source);
  } catch (err) {
    await linking.catch(() => undefined);
    throw err;
  }
  const outcome = await linking;
  const scanned = copySawSame(listed.found, dst) ? listed : scanListings(dst, { made: true });
  const contained = await contain(env, item, dst, rec.source, scanned.found);
  const entries = scanned.entries;
  const linked = outcome.linked ?? entries - scanned.folders;
  if (outcome.filled > 0 || outcome.failed.length > 0) {
    if (outcome.failed.length === 0)
      env.progress(`warren: ${item.path}: ${outcome.filled} file(s) could not be hard-linked and were copied instead`);
    env.event(
      'provision.fill',
      outcome.failed.length > 0 ? 'warn' : 'info',
      `${item.path}: the kernel refused to hard-link ${outcome.filled + outcome.failed.length} file(s); ${outcome.filled} copied instead${
        outcome.failed.length > 0
          ? `, ${outcome.failed.length} could not be copied either (${outcome.failed
              .slice(0, 5)
              .map((f) => f.path)
              .join(', ')})`
          : ''
      }`,
      { path: item.path, linked, filled: outcome.filled, failed: outcome.failed.slice(0, 100) },
    );
  }
  if (outcome.failed.length > 0) {
    throw new WarrenError(
      'PROVISION_FAILED',
      `${item.path}: ${outcome.failed.length} file(s) could neither be hard-linked nor copied (first: ${outcome.failed[0]?.path}: ${outcome.failed[0]?.error})`,
    );
  }
  return {
    record: {
      ...rec,
      mode: 'hardlink',
      isolated: false,
      method: 'cp -al',
      entries,
      // Linked files are the main checkout's bytes: what the workspace adds is what the fill pass copied.
      bytes: outcome.filledBytes,
      ms: Date.now() - started,
      ...sinceNow(env, item.path),
      linked,
      filled: outcome.filled,
      ...containedFacts(contained),
    },
  };
}

export async function provisionShare(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  const started = Date.now();
  const rec = recordBase(env, item);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.symlinkSync(rec.source, dst, 'junction');
  // `status` reports what anyone changed in the shared source after this instant.
  const { since } = sinceNow(env, item.path);
  return {
    record: {
      ...rec,
      mode: 'share',
      isolated: false,
      method: 'symlink',
      entries: 1,
      bytes: 0,
      ms: Date.now() - started,
      since,
    },
  };
}
