import type { ProvisionMode } from '../../config/schema.js';
import type { ProvisionItem } from '../types.js';
import { provisionCow } from './cow.js';
import { provisionCopy, provisionHardlink, provisionShare, type ModeEnv, type ModeOutcome } from './modes.js';

/**
 * What each provisioning mode is, in one place: every feature that treats one mode unlike
 * another (the sandbox, risk, status, release, relocation, the dashboard's disk, the gate) asks
 * this table rather than comparing the mode's name. A new mode without an entry does not compile.
 */
export interface ModeKind {
  /** Makes the path in the workspace (`warren new`, `provision --refresh`, the gate). */
  make(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome>;
  /**
   * Mounts: a private upper layer over a snapshot, as an overlay (on the host, or in each run's
   * namespace). Released first (unmounted), counted on disk by its upper layer, its past read
   * from the snapshot (the lower layer), its changes from the upper layer.
   */
  layered: boolean;
  /**
   * Shares: the workspace's path is a link to the main checkout's own tree. Not isolated (every
   * sharer sees every write); a sandbox must let the task write the source; nothing of its own
   * to relocate; released by unlinking; its status read at the source; its past is gone.
   */
  sharesSource: boolean;
  /** Shares files: hard links to the source's, so an in-place write reaches the main checkout (status says which). */
  sharesInodes: boolean;
  /** Several `.worktreeinclude` paths with one parent folder are made by one process. */
  groups: boolean;
  /** `new` starts its copy while git makes the worktree, outside it, and moves it in (staging.ts). */
  staged: boolean;
}

const MODE_KINDS = {
  copy: {
    make: (env, item, dst) => provisionCopy(env, item, dst),
    layered: false,
    sharesSource: false,
    sharesInodes: false,
    groups: true,
    staged: true,
  },
  hardlink: {
    make: (env, item, dst) => provisionHardlink(env, item, dst),
    layered: false,
    sharesSource: false,
    sharesInodes: true,
    groups: false,
    staged: true,
  },
  share: {
    make: (env, item, dst) => provisionShare(env, item, dst),
    layered: false,
    sharesSource: true,
    sharesInodes: false,
    groups: false,
    staged: false,
  },
  cow: {
    make: (env, item, dst) => provisionCow(env, item, dst),
    layered: true,
    sharesSource: false,
    sharesInodes: false,
    groups: false,
    staged: false,
  },
} satisfies Record<ProvisionMode, ModeKind>;

/** What `mode` is: its entry of the table above. */
export function modeKind(mode: ProvisionMode): ModeKind {
  return MODE_KINDS[mode];
}
