import fs from 'node:fs';
import path from 'node:path';
import { runTool } from '../../system/tool.js';
import { removeTree } from '../../system/remove-tree.js';
import { overBudget, type Budget } from './budget.js';
import { VCS_DIRS } from './include.js';
import { walkTree } from '../status/manifest.js';
import type { OutsideLink, StrippedEntry } from '../types.js';
import { isInside } from '../../util/paths.js';
import { lstatOrNull } from '../../util/lexists.js';

/**
 * Keeps a provisioned tree inside the workspace. A copy (`cp -a`, `cp -al`, a snapshot) keeps
 * symlinks as they are, so an ignored `.env -> /home/me/secret.env` in the main checkout
 * would stay a door: a write through the workspace's copy lands outside it. Threat: whatever
 * runs in the workspace (an agent) writes through every link it finds. So every link whose
 * target resolves outside the workspace is replaced by a copy of what it points to in the
 * main checkout (within the budget), or removed when there is nothing to copy; links that stay
 * inside (a relative `.bin/x -> ../x/cli.js`, or a monorepo's `../../packages/app`) are kept
 * verbatim. VCS metadata (`.git`, `.jj`, `.hg`, `.svn`: a `.git` file would let commits in
 * the copy move another worktree's branch) and device nodes (a door to the device) are removed.
 */

/** What a walk of the tree saw that containment must look at. */
export interface Findings {
  links: string[];
  vcs: string[];
  devices: string[];
  /** A folder on another file system, which the walk did not enter (cp -a does). */
  crossesDevice: boolean;
  rootDev: number;
  /** Each folder's mtime as the walk saw it: a copy whose folders match saw the same entries. */
  dirs: Map<string, number>;
}

export function newFindings(): Findings {
  return { links: [], vcs: [], devices: [], crossesDevice: false, rootDev: -1, dirs: new Map() };
}

/**
 * Notes one entry of a walk; returns false for a folder the walk should not enter (VCS
 * metadata, removed whole). For use inside walkTree's visit.
 */
export function noteEntry(found: Findings, rel: string, st: fs.Stats): boolean {
  if (rel === '') found.rootDev = st.dev;
  else if (VCS_DIRS.has(path.basename(rel))) {
    found.vcs.push(rel);
    return false;
  }
  if (st.isSymbolicLink()) found.links.push(rel);
  else if (st.isBlockDevice() || st.isCharacterDevice()) found.devices.push(rel);
  else if (st.isDirectory()) {
    found.dirs.set(rel, st.mtimeMs);
    if (st.dev !== found.rootDev) found.crossesDevice = true;
  }
  return true;
}

/**
 * The findings for a copy of the walked tree. The source is walked while `cp -a` copies it
 * (one walk, no time added), so the two could disagree if the main checkout's tree changed
 * meanwhile. Every link added, removed or replaced changes its folder's mtime, and `cp -a`
 * gives each copied folder the mtime it read: where every folder of the copy has the mtime
 * the walk saw, the walk saw the entries the copy has. Otherwise (or across file systems)
 * the copy itself is walked. Costs one lstat per folder.
 */
export function findingsForCopy(found: Findings, copy: string): { found: Findings; rewalked: boolean } {
  return copySawSame(found, copy) ? { found, rewalked: false } : { found: scanTree(copy), rewalked: true };
}

/** Does every folder of `copy` have the mtime the walk of its source saw (findingsForCopy)? */
export function copySawSame(found: Findings, copy: string): boolean {
  if (found.crossesDevice || found.dirs.size === 0) return false;
  for (const [rel, mtime] of found.dirs) {
    if (lstatOrNull(rel === '' ? copy : path.join(copy, rel))?.mtimeMs !== mtime) return false;
  }
  return true;
}

/** Walks `tree` (by lstat, through other file systems too) and returns its findings. */
export function scanTree(tree: string): Findings {
  const found = newFindings();
  walkTree(tree, (rel, st) => noteEntry(found, rel, st));
  if (!found.crossesDevice) return found;
  // walkTree stays on one file system; cp -a does not. Enter the rest by readdir.
  const all = newFindings();
  all.rootDev = found.rootDev;
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    const st = lstatOrNull(rel === '' ? tree : path.join(tree, rel));
    if (!st) continue;
    if (!noteEntry(all, rel, st) || !st.isDirectory()) continue;
    for (const name of fs.readdirSync(path.join(tree, rel))) stack.push(rel === '' ? name : `${rel}/${name}`);
  }
  return all;
}

/**
 * The findings of `tree` from its folders' listings alone: the type each entry has in its
 * folder's listing, an `lstat` only of each folder (for its device and mtime) and of an entry
 * whose listing gives no type. About a tenth of the entries of a node_modules are folders, so
 * this costs a fraction of a walk that reads every entry. Also counts the entries (the root not
 * included) and the folders among them.
 *
 * `made: true` is for a tree warren has just made on one file system (a `cp -al` copy): no
 * folder is read by lstat, so `found.dirs` stays empty (nothing to compare with a walk of the
 * source), and no mount can be inside it yet. A third of the cost again (issue 41).
 */
export function scanListings(
  tree: string,
  options: { made?: boolean } = {},
): { found: Findings; entries: number; folders: number } {
  const found = newFindings();
  const top = lstatOrNull(tree);
  if (!top) return { found, entries: 0, folders: 0 };
  noteEntry(found, '', top);
  if (!top.isDirectory()) return { found, entries: 1, folders: 0 };
  let entries = 0;
  let folders = 0;
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    let listed: fs.Dirent[];
    try {
      listed = fs.readdirSync(rel === '' ? tree : `${tree}/${rel}`, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of listed) {
      entries++;
      if (d.isFile() && !VCS_DIRS.has(d.name)) continue; // a plain file: nothing to note
      const child = rel === '' ? d.name : `${rel}/${d.name}`;
      if (VCS_DIRS.has(d.name)) found.vcs.push(child);
      else if (d.isSymbolicLink()) found.links.push(child);
      else if (d.isBlockDevice() || d.isCharacterDevice()) found.devices.push(child);
      else if (options.made && d.isDirectory()) {
        folders++;
        stack.push(child);
      } else if (!d.isFile()) {
        // A folder (its device and mtime), or an entry whose listing gives no type.
        const st = lstatOrNull(`${tree}/${child}`);
        if (st?.isDirectory()) folders++;
        if (st && noteEntry(found, child, st) && st.isDirectory() && st.dev === found.rootDev) stack.push(child);
      }
    }
  }
  return { found: found.crossesDevice ? scanTree(tree) : found, entries, folders };
}

/**
 * Does the link at `linkRel` (relative to the tree) stay inside the workspace? Resolved as the
 * kernel would, from the tree's place in the workspace (`itemRel`): `..` past the workspace
 * root or an absolute target leaves it; a link met on the way inside the tree is followed (its
 * own target read from `tree`, where the tree is on disk now: the workspace copy, or a snapshot
 * being taken); the workspace's tracked part beyond the tree is the branch's, judged by its
 * path. A loop (ELOOP) counts as leaving. Reads the file system; decides nothing else.
 */
export function staysInside(tree: string, itemRel: string, linkRel: string): boolean {
  const item = itemRel.split('/');
  const at = linkRel === '' ? [...item] : [...item, ...linkRel.split('/')];
  const pos = at.slice(0, -1);
  let pending = fs.readlinkSync(path.join(tree, linkRel)).split('/');
  if (pending[0] === '') return false; // absolute
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (pos.length === 0) return false;
      pos.pop();
      continue;
    }
    pos.push(part);
    if (pos.length < item.length || item.some((p, i) => pos[i] !== p)) continue;
    const onDisk = path.join(tree, ...pos.slice(item.length));
    const st = lstatOrNull(onDisk);
    if (!st?.isSymbolicLink()) continue;
    if (++hops > 40) return false;
    const target = fs.readlinkSync(onDisk);
    if (target.startsWith('/')) return false;
    pos.pop();
    pending = [...target.split('/'), ...pending];
  }
  return true;
}

export interface ContainOptions {
  /** The tree on disk now. */
  tree: string;
  /** Its place in the workspace (relative to the workspace root). */
  itemRel: string;
  /** The same tree in the main checkout: a link's target is copied from where it resolves there. */
  source: string;
  /** The main checkout's root. */
  repoRoot: string;
  found: Findings;
  budget: { limit: Budget; used: Budget };
}

export interface Contained {
  outsideLinks: OutsideLink[];
  stripped: StrippedEntry[];
  /** Paths relative to the tree whose entries changed (a manifest taken before must be updated there). */
  changed: string[];
}

/** Makes the tree contained (see the top of this file). Every change is returned, to be recorded and reported. */
export async function containTree(opts: ContainOptions): Promise<Contained> {
  const out: Contained = { outsideLinks: [], stripped: [], changed: [] };
  const ws = (rel: string): string => (rel === '' ? opts.itemRel : `${opts.itemRel}/${rel}`);
  const strip = (found: Findings, inside: string): void => {
    for (const [list, why] of [
      [found.vcs, 'version-control metadata'],
      [found.devices, 'a device node'],
    ] as const) {
      for (const r of list) {
        const rel = join(inside, r);
        removeTree(path.join(opts.tree, rel));
        out.stripped.push({ path: ws(rel), why });
        out.changed.push(rel);
      }
    }
  };
  strip(opts.found, '');
  for (const rel of opts.found.links) {
    const at = path.join(opts.tree, rel);
    if (!isLink(at) || staysInside(opts.tree, opts.itemRel, rel)) continue;
    const target = fs.readlinkSync(at);
    const done = await replaceOutsideLink(opts, rel);
    out.changed.push(rel);
    out.outsideLinks.push({ path: ws(rel), target, action: done.action, why: done.why });
    if (!done.dir) continue;
    // A folder copied from outside may hold links of its own: those that leave are removed, not followed again.
    const inner = scanTree(at);
    strip(inner, rel);
    for (const innerRel of inner.links) {
      const full = join(rel, innerRel);
      if (!isLink(path.join(opts.tree, full)) || staysInside(opts.tree, opts.itemRel, full)) continue;
      const innerTarget = fs.readlinkSync(path.join(opts.tree, full));
      fs.unlinkSync(path.join(opts.tree, full));
      out.outsideLinks.push({
        path: ws(full),
        target: innerTarget,
        action: 'removed',
        why: `removed: it is inside ${ws(rel)}, a folder copied in from outside, and leads outside again`,
      });
    }
  }
  return out;
}

function join(base: string, rel: string): string {
  return base === '' ? rel : rel === '' ? base : `${base}/${rel}`;
}

function isLink(p: string): boolean {
  return lstatOrNull(p)?.isSymbolicLink() ?? false;
}

/**
 * Replaces the link at `rel` (relative to the tree) by what it resolves to in the main checkout:
 * a place in the main checkout becomes a relative link to the same place in the workspace (the
 * branch's own files: a copy would be the main checkout's, silently); a file or folder outside
 * becomes a copy of it, within the budget; anything else (missing, a loop, a device, over the
 * budget, the main checkout's .git) is removed.
 */
async function replaceOutsideLink(
  opts: ContainOptions,
  rel: string,
): Promise<{ action: OutsideLink['action']; why: string; dir?: boolean }> {
  const at = path.join(opts.tree, rel);
  const remove = (why: string): { action: 'removed'; why: string } => {
    fs.unlinkSync(at);
    return { action: 'removed', why };
  };
  let real: string;
  try {
    real = fs.realpathSync(path.join(opts.source, rel));
  } catch (err) {
    return remove(
      `removed: its target does not resolve in the main checkout (${(err as NodeJS.ErrnoException).code}), so there is nothing to copy`,
    );
  }
  if (isInside(opts.repoRoot, real)) {
    const inRepo = path.relative(opts.repoRoot, real);
    if (inRepo.split(path.sep)[0] === '.git')
      return remove(`removed: it resolves into the main checkout's .git (${real})`);
    const linkDir = path.posix.dirname(rel === '' ? opts.itemRel : `${opts.itemRel}/${rel}`);
    const relative = path.relative(linkDir === '.' ? '.' : linkDir, inRepo) || '.';
    fs.unlinkSync(at);
    fs.symlinkSync(relative, at);
    return {
      action: 'repointed',
      why: `re-pointed to ${relative}: it resolved to ${real} in the main checkout, and now to the same place in the workspace`,
    };
  }
  const st = fs.statSync(real);
  if (!st.isFile() && !st.isDirectory()) return remove(`removed: ${real} is neither a file nor a folder`);
  const more: Budget = { entries: 1, bytes: st.isFile() ? st.size : 0 };
  if (st.isDirectory()) {
    walkTree(real, (r, s) => {
      if (r !== '') more.entries++;
      if (s.isFile()) more.bytes += s.size;
    });
  }
  const over = overBudget(opts.budget.used, opts.budget.limit, more);
  if (over) return remove(`removed: copying ${real} in would go over the budget (${over})`);
  fs.unlinkSync(at);
  const copied = await runTool(['cp', '-a', '--', real, at]);
  if (copied.exitCode !== 0) {
    removeTree(at);
    return {
      action: 'removed',
      why: `removed: copying ${real} in failed (${copied.stderr.trim().split('\n')[0] ?? ''})`,
    };
  }
  opts.budget.used.entries += more.entries;
  opts.budget.used.bytes += more.bytes;
  return { action: 'materialised', why: `copied in from ${real}`, dir: st.isDirectory() };
}
