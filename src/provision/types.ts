import type { ProvisionMode } from '../config/schema.js';
import type { TaskFacts } from '../state/facts.js';

/** Why a requested path was not provisioned. */
export type SkipReason = 'missing' | 'not-ignored' | 'unsafe' | 'duplicate' | 'over-budget' | 'exists';

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
  /** How it was made: overlay, overlay (user namespace), reflink, clonefile, cp -a, cp -al, symlink. */
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
  /** copy/hardlink/share: manifest (size, mtime, inode) taken at provisioning. */
  manifest?: string;
  /** cow/copy/hardlink: the files that named the main checkout by absolute path, rewritten and read back (src/provision/relocate.ts). */
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

/** The provision records of a task (none on a task made before provisioning existed). */
export function provisionRecords(data: TaskFacts): ProvisionRecord[] {
  return data.provision ?? [];
}
