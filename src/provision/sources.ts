import fs from 'node:fs';
import path from 'node:path';
import ignore from 'ignore';
import type { ProvisionMode } from '../config/schema.js';
import { checkIgnored, listIgnored } from '../git/status.js';
import type { ProjectContext } from '../workspace/context.js';
import { isInside } from '../workspace/paths.js';
import type { ProvisionItem, ProvisionSkip } from './types.js';

export const WORKTREEINCLUDE = '.worktreeinclude';

/**
 * Normalizes a configured path, or says why it is unsafe. Threat: a path in a checked-in
 * warren.yaml (or .worktreeinclude) is input from whoever wrote the branch; `..`, an absolute
 * path or anything in `.git` would make warren copy, link or mount outside the repository or
 * into git's own files. Pure.
 */
export function normalizeProvisionPath(raw: string): { ok: true; path: string } | { ok: false; detail: string } {
  if (raw.includes('\0')) return { ok: false, detail: 'contains a NUL byte' };
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[A-Za-z]:/.test(raw)) return { ok: false, detail: 'is absolute' };
  const parts = raw.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
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
    const clash = kept.find((k) => k.path === item.path || item.path.startsWith(`${k.path}/`) || k.path.startsWith(`${item.path}/`));
    if (clash) {
      skipped.push({
        path: item.path,
        mode: item.mode,
        reason: 'duplicate',
        detail: clash.path === item.path ? `also listed in ${clash.from} (that entry wins)` : `overlaps ${clash.path} from ${clash.from}`,
      });
    } else {
      kept.push(item);
    }
  }
  return { kept, skipped };
}

/** Patterns of `.worktreeinclude` that name one path literally (no glob, no negation). */
function literalPatterns(lines: readonly string[]): string[] {
  return lines
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!') && !/[*?[\]]/.test(l))
    .map((l) => l.replace(/^\//, '').replace(/\/$/, ''));
}

/**
 * The ignored paths of the main checkout that `.worktreeinclude` selects (gitignore syntax,
 * via the `ignore` package). git lists the ignored paths (a wholly ignored directory as one
 * entry); literal patterns are added as given so a path inside such a directory can be named.
 */
async function fromWorktreeInclude(repoRoot: string): Promise<ProvisionItem[]> {
  let text: string;
  try {
    text = fs.readFileSync(path.join(repoRoot, WORKTREEINCLUDE), 'utf8');
  } catch {
    return [];
  }
  const ig = ignore().add(text);
  const candidates = new Set<string>();
  for (const entry of await listIgnored(repoRoot)) {
    const bare = entry.replace(/\/$/, '');
    if (ig.ignores(entry) || ig.ignores(bare)) candidates.add(bare);
  }
  for (const literal of literalPatterns(text.split(/\r?\n/))) candidates.add(literal);
  return [...candidates].sort().map((p) => ({ path: p, mode: 'copy' as ProvisionMode, from: '.worktreeinclude' as const }));
}

/**
 * Reads both sources and keeps what may be provisioned: safe, present in the main checkout,
 * and ignored by git there (a tracked or unignored path is git's business, not warren's).
 */
/** What to provision, and what was skipped and why. */
export interface Sources {
  items: ProvisionItem[];
  skips: ProvisionSkip[];
}

export async function resolveSources(ctx: ProjectContext): Promise<Sources> {
  const root = ctx.repo.root;
  const raw: { path: string; mode: ProvisionMode; from: ProvisionItem['from'] }[] = [
    ...ctx.config.provision.map((p) => ({ ...p, from: 'warren.yaml' as const })),
    ...(await fromWorktreeInclude(root)),
  ];
  const skips: ProvisionSkip[] = [];
  const safe: ProvisionItem[] = [];
  for (const item of raw) {
    const norm = normalizeProvisionPath(item.path);
    if (!norm.ok) {
      skips.push({ path: item.path, mode: item.mode, reason: 'unsafe', detail: `${item.from}: ${JSON.stringify(item.path)} ${norm.detail}` });
      continue;
    }
    safe.push({ ...item, path: norm.path });
  }
  const { kept, skipped } = dedupe(safe);
  skips.push(...skipped);

  const present: ProvisionItem[] = [];
  for (const item of kept) {
    const abs = path.join(root, item.path);
    if (!fs.existsSync(abs) && !isLink(abs)) {
      skips.push({ path: item.path, mode: item.mode, reason: 'missing', detail: `${item.path} does not exist in the main checkout ${root}` });
      continue;
    }
    // A symlinked parent would carry the copy, link or mount outside the repository.
    const realParent = fs.realpathSync(path.dirname(abs));
    if (!isInside(root, realParent)) {
      skips.push({ path: item.path, mode: item.mode, reason: 'unsafe', detail: `${item.path}'s parent resolves to ${realParent}, outside the repository` });
      continue;
    }
    present.push(item);
  }
  const ignored = await checkIgnored(root, present.map((i) => i.path));
  const items: ProvisionItem[] = [];
  for (const item of present) {
    if (ignored.has(item.path)) items.push(item);
    else skips.push({ path: item.path, mode: item.mode, reason: 'not-ignored', detail: `git does not ignore ${item.path} (tracked or not in .gitignore); git carries it, so warren leaves it alone` });
  }
  return { items, skips };
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
