import fs from 'node:fs';
import path from 'node:path';
import { WORKTREEINCLUDE } from '../../config/load.js';
import type { ProvisionMode } from '../../config/schema.js';
import { checkIgnored, listTracked, listUntracked, trackedAmong } from '../../git/status.js';
import { lexists } from '../../util/lexists.js';
import type { ProjectContext } from '../../workspace/context.js';
import { isInside } from '../../workspace/paths.js';
import { selectIncluded } from './include.js';
import { expandGlob, isGlob } from './glob.js';
import { detectWorkspace } from './workspaces.js';
import type { ProvisionItem, ProvisionSkip } from '../types.js';

/**
 * Normalizes a configured path, or says why it is unsafe. Threat: a path in a checked-in
 * warren.yaml (or .worktreeinclude) is input from whoever wrote the branch; `..`, an absolute
 * path or anything in `.git` would make warren copy, link or mount outside the repository or
 * into git's own files. Pure.
 */
export function normalizeProvisionPath(raw: string): { ok: true; path: string } | { ok: false; detail: string } {
  if (raw.includes('\0')) return { ok: false, detail: 'contains a NUL byte' };
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[A-Za-z]:/.test(raw))
    return { ok: false, detail: 'is absolute' };
  const parts = raw
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  if (parts.length === 0) return { ok: false, detail: 'names the repository root itself' };
  if (parts.includes('..')) return { ok: false, detail: 'contains ".."' };
  if (parts.some((p) => p.toLowerCase() === '.git')) return { ok: false, detail: 'is inside .git' };
  return { ok: true, path: parts.join('/') };
}

/** Drops later duplicates and paths nested inside another requested path. Pure. */
export function dedupe(items: readonly ProvisionItem[]): { kept: ProvisionItem[]; skipped: ProvisionSkip[] } {
  const kept: ProvisionItem[] = [];
  const skipped: ProvisionSkip[] = [];
  for (const item of items) {
    const clash = kept.find(
      (k) => k.path === item.path || item.path.startsWith(`${k.path}/`) || k.path.startsWith(`${item.path}/`),
    );
    if (clash) {
      skipped.push({
        path: item.path,
        mode: item.mode,
        reason: 'duplicate',
        detail:
          clash.path === item.path
            ? `also listed in ${clash.from} (that entry wins)`
            : `overlaps ${clash.path} from ${clash.from}`,
      });
    } else {
      kept.push(item);
    }
  }
  return { kept, skipped };
}

/**
 * What `.worktreeinclude` selects in the main checkout, by git's own answer (see include.ts),
 * grouped into as few paths as possible; what it left out and why is a skip each. Paths that
 * warren.yaml provisions are left to their entry.
 */
async function fromWorktreeInclude(repoRoot: string, claimed: readonly string[]): Promise<Sources> {
  const file = path.join(repoRoot, WORKTREEINCLUDE);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st) return { items: [], skips: [] };
  if (!st.isFile()) {
    return {
      items: [],
      skips: [
        {
          path: WORKTREEINCLUDE,
          reason: 'unsafe',
          detail: `${WORKTREEINCLUDE} is not a plain file (a symlink?); its patterns were not read`,
        },
      ],
    };
  }
  const [matching, ignored, unignored, tracked] = await Promise.all([
    listUntracked(repoRoot, { matching: file }),
    listUntracked(repoRoot, { ignored: true }),
    listUntracked(repoRoot, { unignored: true }),
    listTracked(repoRoot),
  ]);
  const selection = selectIncluded({ matching, ignored, unignored, tracked, claimed });
  const items = selection.paths.map((p) => ({
    path: p,
    mode: 'copy' as ProvisionMode,
    from: '.worktreeinclude' as const,
  }));
  const skips: ProvisionSkip[] = selection.excluded.map((e) => ({
    path: e.path,
    mode: 'copy',
    reason: e.why === 'claimed' ? 'duplicate' : 'vcs',
    detail:
      e.why === 'claimed'
        ? `${e.files} file(s) matched by ${WORKTREEINCLUDE} lie in ${e.path}, which warren.yaml provisions (that entry wins)`
        : e.why === 'nested-repository'
          ? `${e.path} is another git repository or worktree (it holds a .git); a copy would let commits there move its branches, so warren never copies one`
          : `${e.path} is version-control metadata (${e.files} file(s)); warren never copies .git, .jj, .hg or .svn`,
  }));
  // Listed, but git does not ignore it: not git's answer, so not copied, and the user hears why.
  for (const rel of selection.notIgnored.slice(0, MAX_NOT_IGNORED))
    skips.push({ path: rel, mode: 'copy', reason: 'not-ignored', detail: notIgnoredDetail(rel, false) });
  const more = selection.notIgnored.length - MAX_NOT_IGNORED;
  if (more > 0)
    skips.push({
      path: WORKTREEINCLUDE,
      mode: 'copy',
      reason: 'not-ignored',
      detail: `and ${more} more file(s) ${WORKTREEINCLUDE} matches that git does not ignore, left out the same way`,
    });
  return { items, skips };
}

/** Not-ignored matches named one by one; past this, one line says how many more. */
const MAX_NOT_IGNORED = 20;

/** What to provision, and what was skipped and why. */
export interface Sources {
  items: ProvisionItem[];
  skips: ProvisionSkip[];
  /** Workspaces whose packages' node_modules were added beside the root's. */
  workspaces?: WorkspaceNote[];
}

/** A workspace found at a provisioned node_modules: how many packages, and whose node_modules were added. */
export interface WorkspaceNote {
  root: string;
  file: string;
  packages: number;
  added: string[];
}

/**
 * Reads both sources and keeps what may be provisioned: safe, present in the main checkout,
 * and ignored by git there (a tracked or unignored path is git's business, not warren's).
 * warren.yaml's entries come first and win; `.worktreeinclude` adds what git selects besides.
 */
export async function resolveSources(ctx: ProjectContext): Promise<Sources> {
  const root = ctx.repo.root;
  const skips: ProvisionSkip[] = [];
  const safe: ProvisionItem[] = [];
  for (const item of ctx.config.provision.map((p) => ({ ...p, from: 'warren.yaml' as const }))) {
    const norm = normalizeProvisionPath(item.path);
    if (!norm.ok) {
      skips.push({
        path: item.path,
        mode: item.mode,
        reason: 'unsafe',
        detail: `${item.from}: ${JSON.stringify(item.path)} ${norm.detail}`,
      });
      continue;
    }
    if (!isGlob(norm.path)) {
      safe.push({ ...item, path: norm.path });
      continue;
    }
    const matched = expandGlob(root, norm.path);
    if (matched.length === 0)
      skips.push({
        path: norm.path,
        mode: item.mode,
        reason: 'missing',
        detail: `${norm.path} matches nothing in the main checkout ${root}`,
      });
    for (const m of matched) safe.push({ ...item, path: m });
  }
  const { kept, skipped } = dedupe(safe);
  skips.push(...skipped);
  // A node_modules at a workspace's root brings every package's (those the install made).
  const workspaces: WorkspaceNote[] = [];
  for (const item of [...kept]) {
    if (path.posix.basename(item.path) !== 'node_modules') continue;
    const ws = await detectWorkspace(root, path.posix.dirname(item.path));
    if (!ws) continue;
    const added: string[] = [];
    for (const pkg of ws.packages) {
      const nm = `${pkg}/node_modules`;
      if (kept.some((k) => k.path === nm || nm.startsWith(`${k.path}/`)) || !lexists(path.join(root, nm))) continue;
      kept.push({ ...item, path: nm });
      added.push(nm);
    }
    workspaces.push({ root: item.path, file: ws.file, packages: ws.packages.length, added });
  }

  const present: ProvisionItem[] = [];
  for (const item of kept) {
    const abs = path.join(root, item.path);
    if (!lexists(abs)) {
      skips.push({
        path: item.path,
        mode: item.mode,
        reason: 'missing',
        detail: `${item.path} does not exist in the main checkout ${root}`,
      });
      continue;
    }
    // A symlinked parent would carry the copy, link or mount outside the repository.
    const realParent = fs.realpathSync(path.dirname(abs));
    if (!isInside(root, realParent)) {
      skips.push({
        path: item.path,
        mode: item.mode,
        reason: 'unsafe',
        detail: `${item.path}'s parent resolves to ${realParent}, outside the repository`,
      });
      continue;
    }
    present.push(item);
  }
  const ignored = await checkIgnored(
    root,
    present.map((i) => i.path),
  );
  const notIgnored = present.filter((i) => !ignored.has(i.path)).map((i) => i.path);
  const tracked = await trackedAmong(root, notIgnored);
  const items: ProvisionItem[] = [];
  for (const item of present) {
    if (ignored.has(item.path)) items.push(item);
    else
      skips.push({
        path: item.path,
        mode: item.mode,
        reason: 'not-ignored',
        detail: notIgnoredDetail(item.path, tracked.has(item.path)),
      });
  }
  // git names the included paths (never `..`, never inside .git, never through a symlinked folder).
  const included = await fromWorktreeInclude(
    root,
    kept.map((i) => i.path),
  );
  return {
    items: [...items, ...included.items],
    skips: [...skips, ...included.skips],
    ...(workspaces.length > 0 ? { workspaces } : {}),
  };
}

/** Why a path git does not ignore is not provisioned, and how to bring it. Pure. */
export function notIgnoredDetail(rel: string, tracked: boolean): string {
  return tracked
    ? `git tracks ${rel}, so the workspace already has the branch's version of it; warren leaves it to git`
    : `git does not ignore ${rel}, and git does not carry untracked files into a new worktree, so the workspace will not have it; to bring it, add it to .gitignore or to .git/info/exclude (your own, never committed; warren then provisions it), or commit it`;
}
