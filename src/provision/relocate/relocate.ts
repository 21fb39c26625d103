import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { EventKind, EventPayloads } from '../../state/events.js';
import type { Task } from '../../state/types.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { lexists } from '../../util/lexists.js';
import type { ProjectContext } from '../../workspace/context.js';
import { directReader, foreignTokens, rewritePaths, scanTree, type EmbedScan, type TreeReader } from './embeds.js';
import { readSnapshotMeta } from '../snapshots/snapshot.js';
import type { ProvisionRecord, Relocation } from '../types.js';
import { modeKind } from '../modes/kinds.js';

/**
 * Makes a provisioned tree that names the main checkout by absolute path name the workspace
 * instead (issue 13 §3): each such file is rewritten in the workspace's own layer — through the
 * overlay as root (the kernel copies it up), straight into the upper layer of a namespaced one,
 * replaced (never written through a hard link) in a copy — and then read back. A path is
 * recorded `isolated` only when no file of it that such a tree names paths in still names the
 * main checkout. Chosen by measurement over making the tree again per task (bench/relocate.js).
 */

type Event = <K extends EventKind>(kind: K, level: 'info' | 'warn', message: string, data: EventPayloads[K]) => void;

/** Writes into a tree: directly, or into an overlay's upper layer. */
export interface TreeWriter extends TreeReader {
  write(rel: string, data: Buffer, like: fs.Stats): void;
  relink(rel: string, target: string): void;
}

export async function relocateRecords(
  ctx: ProjectContext,
  task: Task,
  records: ProvisionRecord[],
  event: Event,
): Promise<void> {
  for (const r of records) {
    if (modeKind(r.mode).sharesSource) continue; // one link to the main checkout's tree: nothing of its own to rewrite
    const target = path.join(task.path, r.path);
    const layered = modeKind(r.mode).layered && r.namespaced === true && r.upper !== undefined && r.lower !== undefined;
    const tree = layered ? layeredTree(r.upper as string, r.lower as string) : directTree(target);
    const scans =
      modeKind(r.mode).layered && r.lower
        ? snapshotScans(r.lower, ctx.repo.root, r.path)
        : scanTree(target, ctx.repo.root, r.path);
    const relocation = combine(scans.map((scan) => relocate(tree, scan, task.path, r.path, ctx.repo.root)));
    r.relocation = relocation;
    if (relocation.left.length > 0) r.isolated = false;
    if (relocation.rewritten.length > 0) {
      event(
        'provision.relocated',
        'info',
        `${r.path}: ${relocation.rewritten.length} file(s) named the main checkout (${relocation.from}) by absolute path; rewritten to name the workspace`,
        {
          path: r.path,
          from: relocation.from,
          to: relocation.to,
          files: relocation.rewritten.map((f) => f.path),
        },
      );
    }
    if (relocation.left.length > 0) {
      const first = relocation.left.slice(0, 3).map((l) => `${l.path} (${l.why})`);
      event(
        'provision.not_isolated',
        'warn',
        `${r.path} is NOT isolated: ${relocation.left.length} file(s) still name the main checkout by absolute path: ${first.join('; ')}${relocation.left.length > 3 ? '; …' : ''}`,
        {
          path: r.path,
          left: relocation.left,
        },
      );
    }
  }
}

/**
 * Rewrites each file of `scan` from the root the tree was built under to `to`, and reads every
 * one back. A path outside the provisioned tree is left as it is when the workspace has no
 * such path and the main checkout does (an untracked, unprovisioned folder): pointing at
 * nothing would break the tree, so it is reported instead. Also checks the main checkout's own
 * root, which differs from the tree's when the snapshot was taken in another clone.
 */
export function relocate(tree: TreeWriter, scan: EmbedScan, to: string, rel: string, mainRoot: string): Relocation {
  const from = scan.root;
  const rewritten: Relocation['rewritten'] = [];
  const left: Relocation['left'] = [];
  const keep = (token: string): boolean => {
    const rest = token.slice(from.length);
    if (rest === `/${rel}` || rest.startsWith(`/${rel}/`)) return false;
    return !lexists(to + rest) && lexists(token);
  };
  for (const embed of scan.embeds) {
    const st = tree.lstat(embed.path);
    if (st === null) continue;
    if (embed.kind === 'binary') {
      left.push({ path: embed.path, why: 'a binary file: warren rewrites only text' });
      continue;
    }
    if (embed.kind === 'link') {
      const target = tree.readlink(embed.path);
      if (target === null) continue;
      const { text, kept } = rewritePaths(target, from, to, keep);
      if (kept.length > 0)
        left.push({ path: embed.path, why: `links to ${kept[0]}, which the workspace does not have` });
      else if (text !== target) {
        tree.relink(embed.path, text);
        rewritten.push({ path: embed.path, sha256: sha256(Buffer.from(text)) });
      }
      continue;
    }
    const data = tree.read(embed.path);
    if (data === null) continue;
    const { text, kept } = rewritePaths(data.toString('utf8'), from, to, keep);
    if (kept.length > 0) left.push({ path: embed.path, why: `names ${kept[0]}, which the workspace does not have` });
    const bytes = Buffer.from(text, 'utf8');
    if (!bytes.equals(data)) {
      tree.write(embed.path, bytes, st);
      rewritten.push({ path: embed.path, sha256: sha256(bytes) });
    }
  }
  // Read back: what is recorded as isolated was seen to be.
  const roots = [...new Set([from, mainRoot])];
  for (const embed of scan.embeds) {
    if (left.some((l) => l.path === embed.path)) continue;
    const named = stillNames(tree, embed.path, roots, to);
    if (named !== null) left.push({ path: embed.path, why: `still names ${named} after rewriting` });
  }
  return { from, to, checked: scan.checked, rewritten, left };
}

/** One record of the relocations for the root and each other spelling of it (the first is the root's). */
function combine(parts: Relocation[]): Relocation {
  const [first, ...rest] = parts;
  if (first === undefined) throw new Error('combine: no relocation');
  const left = new Map<string, Relocation['left'][number]>();
  for (const l of parts.flatMap((p) => p.left)) if (!left.has(l.path)) left.set(l.path, l);
  // A file rewritten for two spellings: the last hash is what it holds.
  const rewritten = new Map(parts.flatMap((p) => p.rewritten).map((f) => [f.path, f]));
  return {
    ...first,
    ...(rest.length > 0 ? { aliases: rest.map((p) => p.from) } : {}),
    rewritten: [...rewritten.values()],
    left: [...left.values()],
  };
}

function stillNames(tree: TreeReader, rel: string, roots: readonly string[], to: string): string | null {
  const st = tree.lstat(rel);
  if (st === null) return null;
  const text = st.isSymbolicLink() ? tree.readlink(rel) : tree.read(rel)?.toString('utf8');
  if (text === null || text === undefined) return null;
  for (const root of roots) {
    const found = foreignTokens(text, root, to);
    if (found[0] !== undefined) return found[0];
  }
  return null;
}

/**
 * The scans of a snapshot, made once and kept beside it (`embeds.json`): the snapshot never
 * changes, so no task reads its files again. Their root is the checkout the snapshot was taken
 * from, which a task of another clone with the same lockfile shares.
 */
export function snapshotScans(lower: string, fallbackRoot: string, rel: string): EmbedScan[] {
  const dir = path.dirname(lower);
  const file = path.join(dir, 'embeds.json');
  try {
    const cached = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: number; scans?: EmbedScan[] };
    if (cached.version === 1 && Array.isArray(cached.scans) && cached.scans.length > 0) return cached.scans;
  } catch {
    // not scanned yet
  }
  const meta = readSnapshotMeta(dir);
  const known = meta !== null && meta.source.endsWith(`/${meta.path}`);
  const root = known ? meta.source.slice(0, -(meta.path.length + 1)) : fallbackRoot;
  const scans = scanTree(lower, root, known ? meta.path : rel);
  writeFileAtomic(file, JSON.stringify({ version: 1, scans }));
  return scans;
}

export function directTree(base: string): TreeWriter {
  return {
    ...directReader(base),
    write: (rel, data, like) => replaceFile(path.join(base, rel), data, like),
    relink: (rel, target) => replaceLink(path.join(base, rel), target),
  };
}

/**
 * A namespaced overlay, which is mounted only inside runs: read the upper layer over the lower
 * one, write into the upper layer (parents made with the lower directories' modes, so the
 * merged view is unchanged but for the file).
 */
function layeredTree(upper: string, lower: string): TreeWriter {
  const up = directReader(upper);
  const low = directReader(lower);
  const pick = (rel: string): TreeReader => (lexists(path.join(upper, rel)) ? up : low);
  const parents = (rel: string): void => {
    const parts = rel.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const sub = parts.slice(0, i).join('/');
      if (lexists(path.join(upper, sub))) continue;
      const like = fs.statSync(path.join(lower, sub));
      fs.mkdirSync(path.join(upper, sub));
      fs.chmodSync(path.join(upper, sub), like.mode & 0o7777);
    }
  };
  return {
    lstat: (rel) => pick(rel).lstat(rel),
    read: (rel) => pick(rel).read(rel),
    readlink: (rel) => pick(rel).readlink(rel),
    write(rel, data, like) {
      parents(rel);
      replaceFile(path.join(upper, rel), data, like);
    },
    relink(rel, target) {
      parents(rel);
      replaceLink(path.join(upper, rel), target);
    },
  };
}

/** A new file renamed over the old one: in a hard-linked tree, a write in place would reach the main checkout. */
function replaceFile(file: string, data: Buffer, like: fs.Stats): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.warren-${randomUUID()}`);
  try {
    fs.writeFileSync(tmp, data, { mode: like.mode & 0o7777 });
    fs.chmodSync(tmp, like.mode & 0o7777);
    if (process.getuid?.() === 0) fs.chownSync(tmp, like.uid, like.gid);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function replaceLink(link: string, target: string): void {
  const tmp = path.join(path.dirname(link), `.${path.basename(link)}.warren-${randomUUID()}`);
  fs.symlinkSync(target, tmp);
  fs.renameSync(tmp, link);
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * `status` lists what changed in a provisioned tree; the files warren rewrote are not the
 * task's changes while they hold what warren wrote. `read` reads one, relative to the tree.
 */
export function withoutRelocations<T extends { path: string }>(
  changes: T[],
  r: ProvisionRecord,
  read: (rel: string) => Buffer | null,
): T[] {
  const mine = new Map((r.relocation?.rewritten ?? []).map((f) => [f.path, f.sha256]));
  if (mine.size === 0) return changes;
  return changes.filter((c) => {
    const expected = mine.get(c.path);
    if (expected === undefined) return true;
    const now = read(c.path);
    return now === null || sha256(now) !== expected;
  });
}

/** How a rewritten link reads, for `withoutRelocations`: its target's bytes. */
export function readEntry(base: string, rel: string): Buffer | null {
  const p = path.join(base, rel);
  try {
    const st = fs.lstatSync(p);
    return st.isSymbolicLink() ? Buffer.from(fs.readlinkSync(p)) : fs.readFileSync(p);
  } catch {
    return null;
  }
}
