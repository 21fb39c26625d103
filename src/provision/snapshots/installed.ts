import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { InstalledFacts } from '../types.js';
import { compareNpm, comparePackageJson, comparePnpm, type Comparison } from './installed-compare.js';
import { compareYarnBerry, compareYarnClassic } from './installed-compare-yarn.js';

/**
 * Does an installed `node_modules` match the lockfile beside it? Read from the package
 * manager's own record of what it installed, never guessed from the lockfile's hash:
 * npm `node_modules/.package-lock.json`, pnpm `node_modules/.pnpm/lock.yaml` (its
 * `.modules.yaml` says pnpm installed it), yarn berry `node_modules/.yarn-state.yml`, yarn
 * classic `node_modules/.yarn-integrity`; without a lockfile, `package.json` against each
 * dependency's installed `package.json`. A snapshot is taken only of a tree that matches
 * (issue 13 §2), and `status` calls a workspace stale by the same test.
 */

/** Reads a file relative to the folder that holds `node_modules` (null: absent). */
export type ReadFile = (rel: string) => string | null;

export type Manager = NonNullable<InstalledFacts['manager']>;

export interface InstalledCheck {
  /** The lockfile the tree is compared with, relative to the folder holding node_modules; null: none (package.json). */
  lockfile: string | null;
  /** Who installed the tree, by its installed-state file; null when there is none. */
  manager: Manager | null;
  /** `unknown`: nothing to compare with (no installed-state file, an unreadable one). */
  state: 'matches' | 'differs' | 'unknown';
  /** Why it differs (or why it cannot be told), for people. */
  why: string;
}

/** Each manager's record of what it installed (inside node_modules) and the lockfiles it installs from. */
const STATE_FILES: readonly { manager: Manager; file: string; lockfiles: readonly string[] }[] = [
  { manager: 'pnpm', file: '.modules.yaml', lockfiles: ['pnpm-lock.yaml'] },
  { manager: 'npm', file: '.package-lock.json', lockfiles: ['npm-shrinkwrap.json', 'package-lock.json'] },
  { manager: 'yarn-berry', file: '.yarn-state.yml', lockfiles: ['yarn.lock'] },
  { manager: 'yarn-classic', file: '.yarn-integrity', lockfiles: ['yarn.lock'] },
];

/** The JavaScript lockfiles, in the order picked when nothing says which one the tree came from. */
export const JS_LOCKFILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lockb',
  'bun.lock',
] as const;

/** A provisioned path this module can check: a `node_modules` folder. */
export function isNodeModules(relPath: string): boolean {
  return path.posix.basename(relPath) === 'node_modules';
}

/**
 * Which lockfile a `node_modules` came from, when several are tracked: the one its
 * installed-state file names, else `packageManager` in package.json, else the first present.
 * Null: no lockfile at all. `nm` is the node_modules folder relative to the reader's root.
 */
export function pickLockfile(
  read: ReadFile,
  exists: (rel: string) => boolean,
  nm: string,
): { lockfile: string | null; manager: Manager | null } {
  const dir = path.posix.dirname(nm);
  const at = (name: string): string => (dir === '.' ? name : `${dir}/${name}`);
  for (const s of STATE_FILES) {
    if (!exists(`${nm}/${s.file}`)) continue;
    const lockfile = s.lockfiles.map(at).find(exists);
    if (lockfile) return { lockfile, manager: s.manager };
  }
  const declared = packageManagerOf(read(at('package.json')));
  const wanted =
    declared === 'pnpm'
      ? ['pnpm-lock.yaml']
      : declared === 'yarn'
        ? ['yarn.lock']
        : declared === 'npm'
          ? ['npm-shrinkwrap.json', 'package-lock.json']
          : declared === 'bun'
            ? ['bun.lock', 'bun.lockb']
            : [];
  const lockfile = [...wanted, ...JS_LOCKFILES].map(at).find(exists) ?? null;
  if (lockfile === null) {
    // A workspace's package: its node_modules came from the install at the workspace's root.
    const install = workspaceInstall(exists, nm);
    if (install !== null) return pickLockfile(read, exists, install);
  }
  return { lockfile, manager: null };
}

/**
 * For a `node_modules` of a workspace's package (no lockfile beside it), the root install's
 * `node_modules`: the nearest folder above with a JavaScript lockfile. Null for any other. Pure.
 */
export function workspaceInstall(exists: (rel: string) => boolean, nm: string): string | null {
  let dir = path.posix.dirname(nm);
  while (dir !== '.') {
    dir = path.posix.dirname(dir);
    const at = (name: string): string => (dir === '.' ? name : `${dir}/${name}`);
    if (JS_LOCKFILES.some((l) => exists(at(l)))) return at('node_modules');
  }
  return null;
}

/** `packageManager: "pnpm@9.15.9"` → `pnpm`. Pure. */
export function packageManagerOf(packageJson: string | null): string | null {
  if (packageJson === null) return null;
  try {
    const declared = (JSON.parse(packageJson) as { packageManager?: unknown }).packageManager;
    return typeof declared === 'string' ? (declared.split('@')[0] ?? null) : null;
  } catch {
    return null;
  }
}

/** Checks the `node_modules` at `nm` (relative to the reader's root) against its lockfile, or package.json. */
export async function checkInstalled(
  read: ReadFile,
  exists: (rel: string) => boolean,
  nm: string,
): Promise<InstalledCheck> {
  const { lockfile, manager } = pickLockfile(read, exists, nm);
  const dir = path.posix.dirname(nm);
  if (lockfile !== null && path.posix.dirname(lockfile) !== dir) {
    // A workspace package's folder is part of the root's install: it matches when that install does.
    const root = workspaceInstall(exists, nm) ?? nm;
    const whole = await checkInstalled(read, exists, root);
    return { ...whole, why: whole.why ? `${root} (the workspace's install): ${whole.why}` : whole.why };
  }
  const done = (c: Comparison, m: Manager | null = manager): InstalledCheck => ({
    lockfile,
    manager: m,
    state: c.state,
    why: c.why,
  });
  if (lockfile === null) {
    const pkg = read(dir === '.' ? 'package.json' : `${dir}/package.json`);
    if (pkg === null) return done({ state: 'unknown', why: 'no lockfile and no package.json' });
    return done(comparePackageJson(pkg, (name) => read(`${nm}/${name}/package.json`)));
  }
  const wanted = read(lockfile);
  if (wanted === null) return done({ state: 'unknown', why: `${lockfile} cannot be read` });
  const name = path.posix.basename(lockfile);
  if (manager === null) {
    // No record of the install (npm 6, bun, a tree made by hand): nothing to compare, nothing claimed.
    return done({
      state: 'unknown',
      why: exists(nm) ? `${nm} holds no installed-state file for ${name}` : `${nm} is not installed`,
    });
  }
  switch (manager) {
    case 'npm':
      return done(compareNpm(wanted, read(`${nm}/.package-lock.json`), name));
    case 'pnpm': {
      const installed = read(`${nm}/.pnpm/lock.yaml`);
      if (installed === null)
        return done({ state: 'differs', why: `${nm}/.pnpm/lock.yaml is missing: pnpm did not finish an install here` });
      return done(comparePnpm(wanted, installed, await yamlParser(), name, read(`${nm}/.modules.yaml`)));
    }
    case 'yarn-berry': {
      // A workspace's manifest, for a tree less than all of yarn.lock by design (`yarn workspaces focus`).
      const manifest = (ws: string): string | null => read(path.posix.join(dir, ws, 'package.json'));
      return done(compareYarnBerry(wanted, read(`${nm}/.yarn-state.yml`) ?? '', await yamlParser(), manifest));
    }
    case 'yarn-classic':
      return done(compareYarnClassic(wanted, read(`${nm}/.yarn-integrity`) ?? ''));
  }
}

/** The YAML parser, loaded only for a pnpm or yarn tree (bundled, the module's exports sit under `default`). */
async function yamlParser(): Promise<(text: string) => unknown> {
  const mod = (await import('yaml')) as {
    parse?: (text: string) => unknown;
    default?: { parse: (text: string) => unknown };
  };
  const parse = mod.parse ?? mod.default?.parse;
  if (!parse) throw new Error('the yaml module has no parse()');
  return parse;
}

/** A reader over a folder on disk. */
export function diskReader(root: string): { read: ReadFile; exists: (rel: string) => boolean } {
  return {
    read: (rel) => {
      try {
        return fs.readFileSync(path.join(root, rel), 'utf8');
      } catch {
        return null;
      }
    },
    exists: (rel) => fs.existsSync(path.join(root, rel)),
  };
}

/**
 * A reader over a cow path that is mounted nowhere this process can see (a namespaced overlay):
 * under `item`, the upper layer wins, a 0:0 character device there is a deletion, else the
 * lower layer (the snapshot); outside it, the workspace. A folder replaced whole in the upper
 * layer (opaque) is not told apart, so the lower files under it still read; the installed-state
 * files, which every install rewrites, read right.
 */
export function layeredReader(
  workspace: string,
  item: string,
  upper: string,
  lower: string,
): { read: ReadFile; exists: (rel: string) => boolean } {
  const where = (rel: string): string | null => {
    if (rel !== item && !rel.startsWith(`${item}/`)) return path.join(workspace, rel);
    const inner = rel.slice(item.length + 1);
    const up = path.join(upper, inner);
    const st = fs.lstatSync(up, { throwIfNoEntry: false });
    if (st) return st.isCharacterDevice() && st.rdev === 0 ? null : up;
    return path.join(lower, inner);
  };
  return {
    read: (rel) => {
      const file = where(rel);
      if (file === null) return null;
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return null;
      }
    },
    exists: (rel) => {
      const file = where(rel);
      return file !== null && fs.existsSync(file);
    },
  };
}

/** The main checkout's (or a workspace's) `node_modules` at `rel`, checked, as a record keeps it. */
export async function installedFacts(root: string, rel: string): Promise<InstalledFacts> {
  const disk = diskReader(root);
  const check = await checkInstalled(disk.read, disk.exists, rel);
  const dir = path.posix.dirname(rel);
  const pkg =
    check.lockfile === null ? sha256Of(disk.read(dir === '.' ? 'package.json' : `${dir}/package.json`)) : null;
  return {
    lockfile: check.lockfile,
    manager: check.manager,
    state: check.state,
    ...(check.why ? { why: check.why } : {}),
    ...(pkg ? { packageJson: pkg } : {}),
  };
}

export function sha256Of(text: string | null): string | null {
  return text === null ? null : createHash('sha256').update(text).digest('hex');
}

/** The command that installs exactly what the lockfile says, for the hint. Pure. */
export function installCommand(manager: Manager | null, lockfile: string | null): string {
  const name = lockfile === null ? null : path.posix.basename(lockfile);
  if (manager === 'pnpm' || name === 'pnpm-lock.yaml') return 'pnpm install --frozen-lockfile';
  if (manager === 'yarn-berry') return 'yarn install --immutable';
  if (manager === 'yarn-classic') return 'yarn install --frozen-lockfile';
  if (name === 'yarn.lock') return 'yarn install';
  if (name === 'bun.lock' || name === 'bun.lockb') return 'bun install --frozen-lockfile';
  if (name === null) return 'npm install';
  return 'npm ci';
}
