import type { ProvisionMode } from '../config/schema.js';
import type { TaskFacts } from '../state/facts.js';

/** Why a requested path was not provisioned. */
export type SkipReason = 'missing' | 'not-ignored' | 'unsafe' | 'duplicate' | 'over-budget' | 'exists' | 'vcs';

/** A link that led outside the workspace, and what was done with it. */
export interface OutsideLink {
  /** Relative to the workspace root. */
  path: string;
  /** What it pointed to (its readlink). */
  target: string;
  action: 'materialised' | 'repointed' | 'removed';
  why: string;
}

/** An entry taken out of the copy: VCS metadata or a device node. */
export interface StrippedEntry {
  /** Relative to the workspace root. */
  path: string;
  why: string;
}

/** One path to bring into a workspace, after the sources were read and checked. */
export interface ProvisionItem {
  /** Relative to the repository root / workspace root, `/`-separated, no trailing slash. */
  path: string;
  mode: ProvisionMode;
  from: 'warren.yaml' | '.worktreeinclude';
}

export interface ProvisionSkip {
  path: string;
  mode?: ProvisionMode;
  reason: SkipReason;
  detail: string;
}

/** The lockfile a provisioned tree was installed from: `stale` compares the workspace's against it. */
export interface LockfileRef {
  /** Relative to the workspace root. */
  path: string;
  sha256: string;
}

/**
 * What `task.data.provision` holds, one per provisioned path. Other features (checkpoint,
 * audit, dashboard) read exactly this key, so fields are only ever added.
 */
export interface ProvisionRecord {
  /** Relative to the workspace root. */
  path: string;
  /** The mode actually used (a `cow` that fell back records `copy`, with `requested: 'cow'`). */
  mode: ProvisionMode;
  requested: ProvisionMode;
  /** False for `share` (every sharer sees every change) and `hardlink` (an in-place write reaches the source). */
  isolated: boolean;
  entries: number;
  bytes: number;
  ms: number;
  /** How it was made: overlay, fuse-overlayfs, overlay (user namespace), reflink, clonefile, cp -a, cp -al, symlink. */
  method: string;
  /** Absolute path in the main checkout it came from. */
  source: string;
  lockfile?: LockfileRef;
  /** Why a `cow` request was served by another method. */
  fallback?: string;
  /** hardlink: files linked, and files the kernel refused to link that were copied instead. */
  linked?: number;
  filled?: number;
  /** cow: snapshot key, and this workspace's private layers. */
  snapshot?: string;
  lower?: string;
  upper?: string;
  work?: string;
  /**
   * cow without root: the overlay is mounted nowhere on the host, only inside the user
   * namespace of each command warren runs in the workspace (its layers use `userxattr`).
   */
  namespaced?: boolean;
  /** cow without root, mounted on the host by fuse-overlayfs (seen by every process of the user). */
  fuse?: boolean;
  /** copy/hardlink/share made by an older warren: manifest (size, mtime, inode) taken at provisioning. */
  manifest?: string;
  /**
   * copy/hardlink/share: the file system's clock (an mtime, in ms) once the path was made;
   * `status` counts what was touched after it (src/provision/status/since.ts), with no manifest.
   */
  since?: number;
  /** copy/hardlink: where `status` remembers the entries it found identical to the main checkout's. */
  sameCache?: string;
  /**
   * copy/hardlink/cow: the symlinks that led outside the workspace, and what was done with
   * each (copied in, re-pointed into the workspace, or removed). Absent when there were none.
   */
  outsideLinks?: OutsideLink[];
  /** copy/hardlink/cow: entries left out of the copy (VCS metadata, device nodes). */
  stripped?: StrippedEntry[];
  /**
   * The tree was checked for links that lead outside the workspace and made contained (every
   * record this warren writes for copy, hardlink and cow; absent on older records).
   */
  contained?: true;
  /**
   * node_modules: what the provisioned tree was, checked against its lockfile (or package.json)
   * by the package manager's own record of its install (`installed.ts`). `differs` when the
   * main checkout's install was stale: this workspace got the last good snapshot, or a copy of
   * the stale tree, and `status` calls it stale until its own tree matches.
   */
  installed?: InstalledFacts;
  /** cow/copy/hardlink: the files that named the main checkout by absolute path, rewritten and read back (src/provision/relocate/relocate.ts). */
  relocation?: Relocation;
}

/**
 * A tree that named the main checkout by absolute path (a venv's shebangs, `pyvenv.cfg`, an
 * editable install's `.pth`, pnpm's `.bin` shims), made to name the workspace. Paths are
 * relative to the provisioned tree.
 */
export interface Relocation {
  /** The checkout the tree was built in. */
  from: string;
  /** Other spellings of `from` the tree named itself by (a path through a symlink to it), rewritten too. */
  aliases?: string[];
  /** The workspace. */
  to: string;
  /** How many files warren read: those these ecosystems write absolute paths into. */
  checked: number;
  /** Rewritten, with the hash of what warren wrote (`status` does not count them as the task's changes while they hold it). */
  rewritten: { path: string; sha256: string }[];
  /** Still naming the main checkout, and why: the tree is then recorded as not isolated. */
  left: { path: string; why: string }[];
}

/** A `node_modules` checked against what pins it, when it was provisioned. */
export interface InstalledFacts {
  /** The lockfile compared with (relative to the workspace root); null: none, package.json was. */
  lockfile: string | null;
  /** Who installed it, by its installed-state file. */
  manager: 'npm' | 'pnpm' | 'yarn-berry' | 'yarn-classic' | null;
  state: 'matches' | 'differs' | 'unknown';
  why?: string;
  /** No lockfile: the sha256 of package.json when it was checked. */
  packageJson?: string;
}

/** The provision records of a task (none on a task made before provisioning existed). */
export function provisionRecords(data: TaskFacts): ProvisionRecord[] {
  return data.provision ?? [];
}

/**
 * Is a path's isolation verified? `isolated` alone was written by older warrens before they
 * checked for symlinks that lead outside; only a contained tree (or nothing to contain) counts.
 */
export function verifiedIsolated(r: ProvisionRecord): boolean {
  return r.isolated && r.contained === true;
}
