import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { expandGlob } from './glob.js';

/**
 * Monorepos provisioned whole (issue 30): a provisioned `node_modules` whose folder is the root
 * of a pnpm, npm or yarn workspace brings every package's `node_modules` too, with the same
 * mode — each checked against the workspace's one lockfile like the root's. The packages are
 * read from `pnpm-workspace.yaml`'s `packages`, else `package.json`'s `workspaces` (a list, or
 * yarn's `{ packages: [...] }`); `!pattern` leaves packages out.
 */

export interface Workspace {
  /** The workspace root, relative to the repository root ('.' for the root). */
  dir: string;
  /** Where its packages are listed. */
  file: 'pnpm-workspace.yaml' | 'package.json';
  /** Each package's folder, relative to the repository root, sorted. */
  packages: string[];
}

/** The package patterns `package.json`'s `workspaces` lists, or null. Pure. */
export function npmWorkspaces(packageJson: string | null): string[] | null {
  if (packageJson === null) return null;
  try {
    const ws = (JSON.parse(packageJson) as { workspaces?: unknown }).workspaces;
    const list = Array.isArray(ws) ? ws : (ws as { packages?: unknown } | undefined)?.packages;
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : null;
  } catch {
    return null;
  }
}

/** The package patterns of a parsed `pnpm-workspace.yaml`, or null. Pure. */
export function pnpmWorkspaces(parsed: unknown): string[] | null {
  const list = (parsed as { packages?: unknown } | null)?.packages;
  return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : null;
}

/** The workspace rooted at `dir` in the main checkout `root`, or null when it is none. */
export async function detectWorkspace(root: string, dir: string): Promise<Workspace | null> {
  const at = (name: string): string => path.join(root, dir, name);
  let file: Workspace['file'] = 'pnpm-workspace.yaml';
  let patterns = fs.existsSync(at(file)) ? pnpmWorkspaces(await parseYaml(read(at(file)))) : null;
  if (patterns === null) {
    file = 'package.json';
    patterns = npmWorkspaces(read(at(file)));
  }
  if (patterns === null || patterns.length === 0) return null;
  const excluded = patterns.filter((p) => p.startsWith('!')).map((p) => picomatch(clean(p.slice(1))));
  const packages = new Set<string>();
  for (const pattern of patterns) {
    if (pattern.startsWith('!')) continue;
    const rel = clean(pattern);
    // Hostile input: a pattern that climbs out of the workspace or is absolute is not followed.
    if (rel === '' || rel.startsWith('/') || rel.split('/').includes('..')) continue;
    for (const found of expandGlob(path.join(root, dir), rel)) {
      if (excluded.some((m) => m(found))) continue;
      if (!fs.existsSync(path.join(root, dir, found, 'package.json'))) continue;
      packages.add(dir === '.' ? found : `${dir}/${found}`);
    }
  }
  return { dir, file, packages: [...packages].sort() };
}

function clean(pattern: string): string {
  return pattern.replace(/^\.\//, '').replace(/\/+$/, '');
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

async function parseYaml(text: string | null): Promise<unknown> {
  if (text === null) return null;
  const mod = (await import('yaml')) as {
    parse?: (t: string) => unknown;
    default?: { parse: (t: string) => unknown };
  };
  try {
    return (mod.parse ?? mod.default?.parse)?.(text) ?? null;
  } catch {
    return null;
  }
}
