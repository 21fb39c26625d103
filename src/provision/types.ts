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
  /** copy/hardlink/share: manifest (size, mtime, inode) taken at provisioning. */
  manifest?: string;
}

/** The provision records of a task (none on a task made before provisioning existed). */
export function provisionRecords(data: TaskFacts): ProvisionRecord[] {
  return data.provision ?? [];
}
