/**
 * The comparisons behind `installed.ts`, on file contents: a lockfile against the package
 * manager's record of what it installed — npm's and pnpm's here, yarn's in
 * installed-compare-yarn.ts, with the helpers they share. Pure (the YAML parser is handed in,
 * so it loads only when a pnpm or yarn tree is checked).
 */

export interface Comparison {
  state: 'matches' | 'differs' | 'unknown';
  why: string;
}

export type Parse = (text: string) => unknown;

export const MATCHES: Comparison = { state: 'matches', why: '' };

/** "a, b, c and 4 more". */
export function few(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}

/** Says what differs, from lists of packages the lockfile wants that are missing, extra ones, and other versions. */
export function differs(lockfile: string, missing: string[], extra: string[], other: string[]): Comparison {
  if (missing.length === 0 && extra.length === 0 && other.length === 0) return MATCHES;
  const parts = [
    ...(missing.length > 0
      ? [`${missing.length} package(s) ${lockfile} lists are not installed (${few(missing)})`]
      : []),
    ...(other.length > 0 ? [`${other.length} are installed at another version (${few(other)})`] : []),
    ...(extra.length > 0 ? [`${extra.length} installed package(s) ${lockfile} does not list (${few(extra)})`] : []),
  ];
  return { state: 'differs', why: parts.join('; ') };
}

export function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** YAML that may be absent or broken (then nothing is read from it). */
export function parsedOrNull(text: string | null, parse: Parse): Record<string, unknown> | null {
  try {
    return text === null ? null : record(parse(text));
  } catch {
    return null;
  }
}

export function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

interface NpmEntry {
  version?: string;
  resolved?: string;
  link?: boolean;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
}

/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
function npmName(key: string): string {
  return key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/**
 * npm: the lockfile's `packages` against `node_modules/.package-lock.json` (npm's hidden
 * lockfile: what it laid out). An optional package may be absent (another platform's), and
 * dev packages may all be absent (`--omit=dev`).
 */
export function compareNpm(lockText: string, hiddenText: string | null, lockfile: string): Comparison {
  if (hiddenText === null)
    return { state: 'differs', why: `node_modules/.package-lock.json is missing: npm did not finish an install here` };
  const wanted = record(record(jsonOrNull(lockText))?.packages);
  const hidden = record(jsonOrNull(hiddenText));
  // npm leaves `packages` out of the hidden lockfile of an install with nothing in it.
  const have = hidden === null ? null : (record(hidden.packages) ?? {});
  if (wanted === null)
    return { state: 'unknown', why: `${lockfile} has no \`packages\` (lockfileVersion 1, or not JSON)` };
  if (have === null) return { state: 'differs', why: 'node_modules/.package-lock.json is not one npm wrote' };
  const inTree = (k: string): boolean => k.includes('node_modules/');
  const devInstalled = Object.keys(have).some((k) => (wanted[k] as NpmEntry | undefined)?.dev === true);
  const missing: string[] = [];
  const other: string[] = [];
  for (const [key, raw] of Object.entries(wanted)) {
    if (!inTree(key)) continue;
    const want = raw as NpmEntry;
    const got = have[key] as NpmEntry | undefined;
    if (!got) {
      if (want.optional === true || want.devOptional === true || (want.dev === true && !devInstalled)) continue;
      missing.push(`${npmName(key)}${want.version ? `@${want.version}` : ''}`);
    } else if (got.version !== want.version || (want.link === true && got.resolved !== want.resolved)) {
      other.push(
        `${npmName(key)} ${got.version ?? got.resolved ?? '?'}, wants ${want.version ?? want.resolved ?? '?'}`,
      );
    }
  }
  const extra = Object.keys(have)
    .filter((k) => inTree(k) && !(k in wanted))
    .map((k) => `${npmName(k)}${(have[k] as NpmEntry).version ? `@${(have[k] as NpmEntry).version}` : ''}`);
  return differs(lockfile, missing, extra, other);
}

/** JSON with sorted keys, so two parses of the same YAML compare equal whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const r = record(value);
  if (r === null) return JSON.stringify(value) ?? 'null';
  return `{${Object.keys(r)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(r[k])}`)
    .join(',')}}`;
}

/**
 * pnpm: the lockfile against `node_modules/.pnpm/lock.yaml`, the copy of the lockfile pnpm
 * keeps of what it installed: their importers, packages and snapshots are the same. An install
 * that left a kind of dependency out (`pnpm install --prod`, `--no-optional`; `included` in
 * `node_modules/.modules.yaml` says which) keeps a copy filtered the same way: the lockfile is
 * filtered as pnpm filters it (lockfile 9) and must then be the same.
 */
export function comparePnpm(
  lockText: string,
  installedText: string,
  parse: Parse,
  lockfile: string,
  modulesText: string | null = null,
): Comparison {
  let wanted: Record<string, unknown> | null;
  let have: Record<string, unknown> | null;
  try {
    wanted = record(parse(lockText));
    have = record(parse(installedText));
  } catch (err) {
    return {
      state: 'unknown',
      why: `cannot read ${lockfile} or node_modules/.pnpm/lock.yaml as YAML (${(err as Error).message.split('\n')[0]})`,
    };
  }
  if (wanted === null || have === null)
    return { state: 'unknown', why: `${lockfile} or node_modules/.pnpm/lock.yaml is empty` };
  const sections = ['lockfileVersion', 'importers', 'packages', 'snapshots'];
  const same = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
    sections.every((s) => canonical(a[s]) === canonical(b[s]));
  if (same(wanted, have)) return MATCHES;
  const left = PNPM_KINDS.filter((k) => record(parsedOrNull(modulesText, parse)?.included)?.[k] === false);
  if (left.length > 0 && record(wanted.snapshots) !== null) {
    // What this install should hold: the lockfile without the kinds it left out.
    wanted = filterPnpmLock(wanted, left);
    if (same(wanted, have))
      return {
        state: 'matches',
        why: `an install without ${left.join(' and ')} (node_modules/.modules.yaml): the lockfile filtered as pnpm filters it is the one it installed`,
      };
  }
  const keys = (r: Record<string, unknown> | null, s: string): Set<string> =>
    new Set(Object.keys(record(r?.[s]) ?? {}));
  const section = wanted.snapshots !== undefined ? 'snapshots' : 'packages';
  const want = keys(wanted, section);
  const got = keys(have, section);
  const missing = [...want].filter((k) => !got.has(k));
  const extra = [...got].filter((k) => !want.has(k));
  if (missing.length === 0 && extra.length === 0)
    return { state: 'differs', why: `${lockfile} and node_modules/.pnpm/lock.yaml differ (importers or resolutions)` };
  return differs(lockfile, missing, extra, []);
}

const PNPM_KINDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

/**
 * A pnpm 9 lockfile without some kinds of dependency: dropped from every importer, and the
 * snapshots (and their packages) that only they reached. Snapshots are keyed `name@version`
 * (`version` may carry the peers, `1.0.0(react@18.2.0)`; an alias's version is the whole key,
 * `real@1.0.0`), packages by the same without the peers. Pure.
 */
function filterPnpmLock(lock: Record<string, unknown>, left: readonly string[]): Record<string, unknown> {
  const kept = PNPM_KINDS.filter((k) => !left.includes(k));
  const keyOf = (name: string, version: unknown): string | null => {
    if (typeof version !== 'string' || version.startsWith('link:')) return null;
    return (version.split('(')[0] ?? '').includes('@') ? version : `${name}@${version}`;
  };
  const queue: string[] = [];
  const importers: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(record(lock.importers) ?? {})) {
    const importer = record(value) ?? {};
    importers[id] = Object.fromEntries(Object.entries(importer).filter(([k]) => !left.includes(k)));
    for (const kind of kept)
      for (const [name, dep] of Object.entries(record(importer[kind]) ?? {}))
        queue.push(keyOf(name, record(dep)?.version) ?? '');
  }
  const snapshots = record(lock.snapshots) ?? {};
  // A package's own dependencies are `dependencies` whatever kind reached it; only optional ones can be left out.
  const inner = left.includes('optionalDependencies') ? ['dependencies'] : ['dependencies', 'optionalDependencies'];
  const reached = new Set<string>();
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    if (key === '' || reached.has(key) || snapshots[key] === undefined) continue;
    reached.add(key);
    const snapshot = record(snapshots[key]) ?? {};
    for (const kind of inner)
      for (const [name, version] of Object.entries(record(snapshot[kind]) ?? {}))
        queue.push(keyOf(name, version) ?? '');
  }
  const pick = (section: unknown, keep: (key: string) => boolean): Record<string, unknown> =>
    Object.fromEntries(Object.entries(record(section) ?? {}).filter(([k]) => keep(k)));
  const packages = new Set([...reached].map((k) => k.split('(')[0]));
  return {
    ...lock,
    importers,
    snapshots: pick(lock.snapshots, (k) => reached.has(k)),
    packages: pick(lock.packages, (k) => packages.has(k)),
  };
}

/**
 * No lockfile: each dependency package.json declares against the version installed in
 * node_modules. A range warren cannot read (a tag, a URL, `||`) only needs the package present.
 */
export function comparePackageJson(
  packageJson: string,
  installedPackageJson: (name: string) => string | null,
): Comparison {
  const pkg = record(jsonOrNull(packageJson));
  if (pkg === null) return { state: 'unknown', why: 'package.json is not JSON' };
  const missing: string[] = [];
  const other: string[] = [];
  const deps = { ...record(pkg.devDependencies), ...record(pkg.dependencies) };
  const optional = record(pkg.optionalDependencies) ?? {};
  for (const [name, range] of [...Object.entries(deps), ...Object.entries(optional)]) {
    const text = installedPackageJson(name);
    if (text === null) {
      if (!(name in optional)) missing.push(name);
      continue;
    }
    const version = record(jsonOrNull(text))?.version;
    if (typeof range === 'string' && typeof version === 'string' && satisfies(range, version) === false)
      other.push(`${name} ${version}, wants ${range}`);
  }
  return differs('package.json', missing, [], other);
}

type Version = [number, number, number];

function parseVersion(v: string): Version | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Does `version` satisfy `range`? For the ranges package.json files mostly hold: exact, `^`,
 * `~`, `x`/`*` wildcards, partial versions, a lone `>=`. Null for any other (tags, URLs,
 * `file:`, `||`, hyphen ranges): not told. Pure.
 */
export function satisfies(range: string, version: string): boolean | null {
  const r = range.trim();
  if (r === '' || r === '*' || r === 'x' || r === 'X') return true;
  const v = parseVersion(version);
  if (v === null) return null;
  const ge = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(r);
  if (ge) return cmp(v, [Number(ge[1]), Number(ge[2] ?? 0), Number(ge[3] ?? 0)]) >= 0;
  const m = /^([~^]?)v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[\w.]+)?$/.exec(r);
  if (!m) return null;
  const num = (s: string | undefined): number | null => (s === undefined || /^[xX*]$/.test(s) ? null : Number(s));
  const op = m[1];
  const major = Number(m[2]);
  const minor = num(m[3]);
  const patch = num(m[4]);
  const floor: Version = [major, minor ?? 0, patch ?? 0];
  if (cmp(v, floor) < 0) return false;
  if (op === '^') {
    if (major > 0 || minor === null) return v[0] === major;
    if (minor > 0 || patch === null) return v[0] === 0 && v[1] === minor;
    return cmp(v, floor) === 0;
  }
  if (op === '~') return minor === null ? v[0] === major : v[0] === major && v[1] === minor;
  // Exact or partial: every given part equal.
  return v[0] === major && (minor === null || v[1] === minor) && (patch === null || v[2] === patch);
}
