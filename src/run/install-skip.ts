import fs from 'node:fs';
import path from 'node:path';
import { sha256File } from '../provision/snapshots/snapshot.js';
import type { InstalledFacts, ProvisionRecord } from '../provision/types.js';

/**
 * A setup step that only installs `node_modules` from the lockfile (`npm ci`, `pnpm install
 * --frozen-lockfile`, …) is skipped at `warren new` when warren already provisioned that tree
 * and it matches the lockfile: the install would rewrite every file of a copy-on-write tree into
 * the workspace's own layer (12.9 s and a 54 MB copy for a 2,500-file tree, and `status` listing
 * every file) to end where the snapshot began. A step that installs and does more, or an install
 * that runs the project's own lifecycle scripts, is run, and a cow tree under it is warned about.
 */

export type InstallDecision = { kind: 'skip'; why: string } | { kind: 'warn'; why: string } | { kind: 'run' };

/** The flags that change nothing of what is installed. */
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
]);

/** The package manager an exact install command is, or null when the command is anything more. Pure. */
export function exactInstall(run: string | readonly string[]): InstalledFacts['manager'] | 'yarn' | null {
  const words = typeof run === 'string' ? run.trim().split(/\s+/) : [...run];
  const [tool, verb, ...flags] = words;
  if (!flags.every((f) => BENIGN_FLAGS.has(f) || /^--loglevel=[a-z]+$/.test(f))) return null;
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

/** The root package's scripts an install runs (npm, pnpm and yarn run these after installing). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];

/**
 * What to do with one setup step in a new task's workspace `root`: skip it, run it with a
 * warning, or run it. Reads the workspace's lockfile and package.json.
 */
export function installDecision(
  run: string | readonly string[],
  records: readonly ProvisionRecord[],
  root: string,
): InstallDecision {
  const tree = records.find((r) => r.path === 'node_modules');
  if (!tree || !runsInstall(run)) return { kind: 'run' };
  const cow = tree.mode === 'cow';
  const warn = (why: string): InstallDecision =>
    cow
      ? {
          kind: 'warn',
          why: `${why}; the install rewrites the whole node_modules, provisioned as cow, into this workspace's own layer (slow, and \`status\` lists every file)`,
        }
      : { kind: 'run' };
  const manager = exactInstall(run);
  if (manager === null) return warn('it does more than install');
  const installed = tree.installed;
  if (installed?.state !== 'matches' || !installed.lockfile || tree.lockfile?.path !== installed.lockfile)
    return warn(`node_modules was not provisioned from a tree that matches a lockfile`);
  const same = manager === 'yarn' ? installed.manager?.startsWith('yarn') : installed.manager === manager;
  if (!same) return warn(`node_modules was installed by ${installed.manager ?? 'another package manager'}`);
  if (sha256File(path.join(root, installed.lockfile)) !== tree.lockfile.sha256)
    return warn(`${installed.lockfile} changed since node_modules was provisioned`);
  const scripts = lifecycleScripts(path.join(root, 'package.json'));
  if (scripts.length > 0) return warn(`the install runs package.json's ${scripts.join(', ')} script(s)`);
  return {
    kind: 'skip',
    why: `node_modules (${tree.mode}) is already what ${installed.lockfile} pins: warren provisioned it from a tree ${installed.manager} installed from this exact lockfile`,
  };
}

function lifecycleScripts(packageJson: string): string[] {
  try {
    const scripts = (JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { scripts?: unknown }).scripts;
    if (typeof scripts !== 'object' || scripts === null) return [];
    return INSTALL_SCRIPTS.filter((s) => Object.hasOwn(scripts, s));
  } catch {
    return [];
  }
}
