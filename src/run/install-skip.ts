import fs from 'node:fs';
import path from 'node:path';
import { detectWorkspace } from '../provision/modes/workspaces.js';
import { sha256File } from '../provision/snapshots/snapshot.js';
import type { InstalledFacts, ProvisionRecord } from '../provision/types.js';
import { ANY_INSTALL_SCRIPT, perCheckoutScripts, scriptManager } from './install-scripts.js';
import { modeKind } from '../provision/modes/kinds.js';
import { managerVersion } from './lifecycle-direct.js';

/**
 * A setup step that only installs `node_modules` from the lockfile (`npm ci`, `pnpm install
 * --frozen-lockfile`, …) is skipped at `warren new` when warren already provisioned that tree
 * and it matches the lockfile: the install would rewrite every file of a copy-on-write tree into
 * the workspace's own layer (12.9 s and a 54 MB copy for a 2,500-file tree, and `status` listing
 * every file) to end where the snapshot began. The snapshot is the main checkout's tree after its
 * full install, dependencies' scripts included; what an install does per checkout — the root
 * package's own lifecycle scripts (husky's `prepare`) — is run instead, by the same tool
 * (issue 41). A step that installs and does more is run, and a cow tree under it is warned
 * about with the way to the fast path.
 */

export type InstallDecision =
  | {
      kind: 'skip';
      why: string;
      /** The root package's lifecycle scripts run instead of the install (null: none to run). */
      perCheckout: { scripts: string[]; command: string; summary: string } | null;
    }
  | { kind: 'warn'; why: string; fastPath: string }
  | { kind: 'run' };

/** The flags that change nothing of what is installed (`--ignore-scripts` is read on its own). */
const BENIGN_FLAGS = new Set([
  '--no-audit',
  '--no-fund',
  '--prefer-offline',
  '--offline',
  '--silent',
  '--quiet',
  '--frozen-lockfile',
  '--immutable',
  '--ignore-scripts',
  '--no-progress',
  '--no-color',
]);

/**
 * Flags with a value that say how the tool talks, logs or caches, never what it installs (the
 * lockfile pins every version and its integrity): `--loglevel=error`, `--cache=DIR` (npm's
 * cache), `--store-dir=DIR` (pnpm's store), `--reporter=…`, `--color=…`. The value joined by
 * `=`, with no shell metacharacter in it.
 */
const BENIGN_VALUED = /^--(loglevel|cache|store-dir|reporter|color)=[\w./@:+-]+$/;

/** The package manager an exact install command is, or null when the command is anything more. Pure. */
export function exactInstall(run: string | readonly string[]): InstalledFacts['manager'] | 'yarn' | null {
  const words = typeof run === 'string' ? run.trim().split(/\s+/) : [...run];
  const [tool, verb, ...flags] = words;
  if (!flags.every((f) => BENIGN_FLAGS.has(f) || BENIGN_VALUED.test(f))) return null;
  if (tool === 'npm' && (verb === 'ci' || verb === 'install' || verb === 'i')) return 'npm';
  if (tool === 'pnpm' && (verb === 'install' || verb === 'i')) return 'pnpm';
  if (tool === 'yarn' && (verb === 'install' || verb === undefined)) return 'yarn';
  return null;
}

/** Does the command run a JavaScript install anywhere in it? Pure. */
export function runsInstall(run: string | readonly string[]): boolean {
  const text = typeof run === 'string' ? run : run.join(' ');
  return /\b(npm|pnpm|yarn|bun)\s+(ci|install|i|add)\b/.test(text) || /\byarn\s*($|&&|;|\|)/.test(text);
}

const words = (run: string | readonly string[]): string[] =>
  typeof run === 'string' ? run.trim().split(/\s+/) : [...run];

/**
 * What to do with one setup step in a new task's workspace `root`: skip it (running only the
 * root package's per-checkout scripts), run it with a warning that names the fast path, or run
 * it. Reads the workspace's lockfile and package.json (and its workspace packages').
 */
export async function installDecision(
  run: string | readonly string[],
  records: readonly ProvisionRecord[],
  root: string,
): Promise<InstallDecision> {
  const tree = records.find((r) => r.path === 'node_modules');
  if (!tree || !runsInstall(run)) return { kind: 'run' };
  const cow = modeKind(tree.mode).layered;
  const warn = (why: string, fastPath: string): InstallDecision =>
    cow
      ? {
          kind: 'warn',
          why: `${why}; the install rewrites the whole node_modules, provisioned as cow, into this workspace's own layer (slow, and a disk copy per task)`,
          fastPath,
        }
      : { kind: 'run' };
  const manager = exactInstall(run);
  const argv = words(run);
  const tool = argv[0] ?? 'npm';
  if (manager === null)
    return warn(
      'it is more than an install (another command, or a flag that may change what is installed)',
      'make the install a setup step of its own, exactly `npm ci` (or `pnpm install --frozen-lockfile`, `yarn install --frozen-lockfile`), and the rest another step: that step is skipped while the provisioned tree matches the lockfile',
    );
  const installed = tree.installed;
  if (installed?.state !== 'matches' || !installed.lockfile || tree.lockfile?.path !== installed.lockfile)
    return warn(
      'node_modules was not provisioned from a tree that matches a lockfile',
      `run the install in the main checkout (e.g. \`${tool} ${tool === 'npm' ? 'ci' : 'install'}\`) so its node_modules matches the lockfile; the next task's snapshot is taken from it and this step is skipped`,
    );
  const same = manager === 'yarn' ? installed.manager?.startsWith('yarn') : installed.manager === manager;
  if (!same)
    return warn(
      `node_modules was installed by ${installed.manager ?? 'another package manager'}`,
      `install with the same package manager in setup as in the main checkout (${installed.manager ?? 'see its lockfile'})`,
    );
  if (sha256File(path.join(root, installed.lockfile)) !== tree.lockfile.sha256)
    return warn(
      `${installed.lockfile} changed since node_modules was provisioned`,
      `run the install in the main checkout once this lockfile is there; later tasks then get a snapshot of that tree`,
    );
  const because = `node_modules (${tree.mode}) is already what ${installed.lockfile} pins: warren provisioned it from a tree ${installed.manager} installed from this exact lockfile`;
  if (argv.includes('--ignore-scripts'))
    return { kind: 'skip', why: `${because}, and --ignore-scripts runs no script`, perCheckout: null };
  const packaged = await workspacePackageScripts(root);
  if (packaged.length > 0)
    return warn(
      `the workspace package(s) ${packaged.join(', ')} have lifecycle scripts of their own, and warren runs only the root package's per checkout`,
      'add --ignore-scripts to the step when those scripts are not needed per checkout, or move them to a setup step of their own',
    );
  const pkg = readPackage(path.join(root, 'package.json'));
  const mgr = scriptManager(installed.manager);
  if (mgr === null) return { kind: 'run' };
  const perCheckout = perCheckoutScripts(mgr, tool, pkg, managerVersion(tool, process.env.PATH ?? '', root, pkg));
  if ('refused' in perCheckout)
    return warn(
      perCheckout.refused,
      'add --ignore-scripts to the step, or run those scripts as a setup step of their own',
    );
  if (perCheckout.scripts.length === 0) return { kind: 'skip', why: because, perCheckout: null };
  return {
    kind: 'skip',
    why: `${because}; the root package's own ${perCheckout.scripts.join(', ')} write outside node_modules (husky's .husky/_ and core.hooksPath), so they run per checkout`,
    perCheckout,
  };
}

/** A package.json ({} when it cannot be read or is not an object). */
function readPackage(packageJson: string): Record<string, unknown> {
  try {
    const pkg: unknown = JSON.parse(fs.readFileSync(packageJson, 'utf8'));
    return typeof pkg === 'object' && pkg !== null && !Array.isArray(pkg) ? (pkg as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The scripts of a package.json ({} when it has none or cannot be read). */
function readScripts(packageJson: string): Record<string, unknown> {
  const scripts = readPackage(packageJson).scripts;
  return typeof scripts === 'object' && scripts !== null ? (scripts as Record<string, unknown>) : {};
}

/** The packages of a pnpm/npm/yarn workspace at `root` whose package.json has an install lifecycle script. */
async function workspacePackageScripts(root: string): Promise<string[]> {
  const ws = await detectWorkspace(root, '.');
  if (ws === null) return [];
  return ws.packages.filter((dir) =>
    Object.keys(readScripts(path.join(root, dir, 'package.json'))).some((s) => ANY_INSTALL_SCRIPT.has(s)),
  );
}
