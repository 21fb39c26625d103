import { differs, few, jsonOrNull, record, type Comparison, type Parse } from './installed-compare.js';

/** yarn's lockfiles (berry and classic) against what it recorded it installed: the comparisons behind `installed.ts`. Pure. */

/**
 * `plug@virtual:0460f8…#npm:1.0.0` → `plug@npm:1.0.0`. yarn berry installs a package with peer
 * dependencies as a virtual instance (one per set of peers), and `.yarn-state.yml` names that
 * instance, while yarn.lock names the package it resolves to. Pure.
 */
export function devirtualize(locator: string): string {
  return locator.replace(/^((?:@[^/@]+\/)?[^@]+)@virtual:[0-9a-f]+#/, '$1@');
}

/**
 * yarn berry: every resolution in yarn.lock against the entries of
 * `node_modules/.yarn-state.yml` (nodeLinker: node-modules), workspaces aside, each virtual
 * instance as the package it is (`devirtualize`). A resolution with `conditions` (another
 * platform's) may be absent.
 */
export function compareYarnBerry(
  lockText: string,
  stateText: string,
  parse: Parse,
  manifest: (workspace: string) => string | null = () => null,
): Comparison {
  let lock: Record<string, unknown> | null;
  let state: Record<string, unknown> | null;
  try {
    lock = record(parse(lockText));
    state = record(parse(stateText));
  } catch (err) {
    return {
      state: 'unknown',
      why: `cannot read yarn.lock or node_modules/.yarn-state.yml as YAML (${(err as Error).message.split('\n')[0]})`,
    };
  }
  if (lock === null) return { state: 'unknown', why: 'yarn.lock is empty' };
  if (state === null)
    return { state: 'differs', why: 'node_modules/.yarn-state.yml is missing: yarn did not finish an install here' };
  const notWorkspace = (k: string): boolean => k !== '__metadata' && !k.includes('@workspace:');
  const want = new Map<string, boolean>();
  for (const [k, v] of Object.entries(lock)) {
    const r = record(v);
    if (!notWorkspace(k) || typeof r?.resolution !== 'string' || !notWorkspace(r.resolution)) continue;
    want.set(r.resolution, r.conditions !== undefined);
  }
  const got = new Set(Object.keys(state).map(devirtualize).filter(notWorkspace));
  const missing = [...want].filter(([k, conditional]) => !got.has(k) && !conditional).map(([k]) => k);
  const extra = [...got].filter((k) => !want.has(k));
  if (missing.length > 0 && extra.length === 0) {
    const partial = partialBerryInstall(lock, Object.keys(state), manifest);
    if (partial !== null && missing.every((k) => !partial.needed.has(packageName(k)))) {
      return {
        state: 'matches',
        why: `${partial.kind} (yarn workspaces focus): the ${missing.length} package(s) yarn.lock lists that are not installed (${few(missing)}) are needed by nothing it installed`,
      };
    }
  }
  return differs('yarn.lock', missing, extra, []);
}

/** `@scope/name@npm:1.0.0` → `@scope/name`. Pure. */
function packageName(locator: string): string {
  const at = locator.indexOf('@', locator.startsWith('@') ? 1 : 0);
  return at < 0 ? locator : locator.slice(0, at);
}

/**
 * A berry tree that is less than all of yarn.lock by design — `yarn workspaces focus` (some
 * workspaces) and `--production` (no devDependencies) — or null when its workspaces' manifests
 * cannot be read. `needed`: every package name reachable from what the tree's workspaces
 * depend on, a workspace's devDependencies only where one of them is installed (a tree holding
 * none of them is a production install), following yarn.lock's entries by name. By name, the set can
 * only be too large: a package the tree needs is never taken for one it can go without.
 */
function partialBerryInstall(
  lock: Record<string, unknown>,
  stateKeys: readonly string[],
  manifest: (workspace: string) => string | null,
): { kind: string; needed: Set<string> } | null {
  const installed = new Set(stateKeys.map((k) => packageName(devirtualize(k))));
  const workspaces = stateKeys.map((k) => /@workspace:(.*)$/.exec(k)?.[1]).filter((w): w is string => w !== undefined);
  if (workspaces.length === 0) return null;
  const deps = (value: unknown): string[] => Object.keys(record(value) ?? {});
  const roots: string[] = [];
  let withoutDev = false;
  for (const ws of workspaces) {
    const pkg = record(jsonOrNull(manifest(ws) ?? ''));
    if (pkg === null) return null;
    roots.push(...deps(pkg.dependencies), ...deps(pkg.optionalDependencies));
    const dev = Object.entries(record(pkg.devDependencies) ?? {});
    // yarn names an installed alias (`x: npm:real@^1`) by the package it is.
    if (dev.some(([name, range]) => installed.has(aliasOf(range) ?? name))) roots.push(...dev.map(([name]) => name));
    else if (dev.length > 0) withoutDev = true;
  }
  // Each name's entries: the package each resolves to (an alias, `x: npm:real@^1`, is keyed by
  // its own name and resolves to the real one), and their dependencies.
  const byName = new Map<string, Record<string, unknown>[]>();
  for (const [key, value] of Object.entries(lock)) {
    const r = record(value);
    if (key === '__metadata' || r === null) continue;
    for (const descriptor of key.split(/,\s*/)) {
      const name = packageName(descriptor);
      byName.set(name, [...(byName.get(name) ?? []), r]);
    }
  }
  const needed = new Set<string>();
  const queue = [...roots];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (needed.has(name)) continue;
    needed.add(name);
    for (const entry of byName.get(name) ?? []) {
      if (typeof entry.resolution === 'string') queue.push(packageName(entry.resolution));
      queue.push(...deps(entry.dependencies));
    }
  }
  return { kind: withoutDev ? 'a production install' : 'a focused install', needed };
}

/** `npm:real@^1` (an alias) → `real`. Pure. */
function aliasOf(range: unknown): string | undefined {
  return typeof range === 'string' ? /^npm:((?:@[^/@]+\/)?[^@]+)@/.exec(range)?.[1] : undefined;
}

/** yarn classic's yarn.lock: `pattern[, pattern]:` then an indented `resolved "URL"`. Pure. */
export function parseYarnClassic(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let patterns: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    if (!line.startsWith(' ') && line.endsWith(':')) {
      patterns = line
        .slice(0, -1)
        .split(/,\s*/)
        .map((p) => p.replace(/^"|"$/g, ''));
      for (const p of patterns) out.set(p, '');
      continue;
    }
    const m = /^\s+resolved\s+"?([^"]+)"?$/.exec(line);
    if (m) for (const p of patterns) out.set(p, m[1] ?? '');
  }
  return out;
}

/** yarn classic: yarn.lock's patterns and their resolved URLs against `lockfileEntries` in node_modules/.yarn-integrity. */
export function compareYarnClassic(lockText: string, integrityText: string): Comparison {
  const entries = record(record(jsonOrNull(integrityText))?.lockfileEntries);
  if (entries === null)
    return { state: 'differs', why: 'node_modules/.yarn-integrity is missing or not one yarn wrote' };
  const want = parseYarnClassic(lockText);
  const missing = [...want.keys()].filter((k) => !(k in entries));
  const extra = Object.keys(entries).filter((k) => !want.has(k));
  const other = [...want].filter(([k, url]) => k in entries && url !== '' && entries[k] !== url).map(([k]) => k);
  return differs('yarn.lock', missing, extra, other);
}
