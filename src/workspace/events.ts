import { payload, type PayloadsOf } from '../state/events.js';
import type { RemoveFailure } from '../system/remove-tree.js';
import type { LockHolder } from '../util/lockfile.js';
import type { SyncOutcome } from './sync.js';

/** The workspace core's events: a task made, removed, archived; the base fast-forwarded; locks taken over; gc; refusals; interrupted operations repaired; WARREN_HOME made private. */
export const WORKSPACE_EVENTS = {
  'task.created': payload<{
    branch: string;
    path: string;
    base: string;
    baseCommit: string;
    sync: SyncOutcome;
    repoLock?: { waitedMs: number; heldMs: number };
    restored?: { archive: string; tip: string };
  }>(),
  'task.create_failed': payload<{ undone: string[] }>(),
  /** The main checkout's post-checkout hook, which `git worktree add` would have run on the host, did not run. */
  'task.hook_not_run': payload<{ hook: string }>(),
  'task.removed': payload<{ branchDeleted: boolean; unlandedCommits: number; folderMissing?: true }>(),
  'task.archived': payload<{
    archive: string;
    commit: string;
    tip: string;
    changes: number;
    unlandedCommits: number;
  }>(),
  /** A ref under refs/warren/archive/ that `restore` passed over: warren did not make it, it moved, or it is dated in the future. */
  'archive.ignored': payload<{ ref: string; commit: string; why: 'unrecorded' | 'moved' | 'future' }>(),
  /** `restore` made the task here although warren.yaml names another runner: the archive's files are here. */
  'archive.restored_here': payload<{ runner: string }>(),
  'task.leftover_removed': payload<{ gitStderr: string }>(),
  'task.remove_failed': payload<{ path: string; failures: RemoveFailure[]; gitStderr: string }>(),
  'base.fast_forwarded': payload<{
    base: string;
    upstream: string;
    from: string;
    to: string;
    how: 'merge --ff-only' | 'update-ref';
    checkout: string | null;
  }>(),
  'lock.takeover': payload<{ holder: LockHolder }>(),
  gc: payload<{
    removed: { kind: string; path?: string; id?: string; branch?: string; action: string }[];
    kept: { path: string; kind: string; reason: string }[];
  }>(),
  refused: payload<{ code: string; command: string }>(),
  /** WARREN_HOME (or a file in it that holds secrets) could be read by other users, and was made private: modes as octal, `0755` → `0700`. */
  'home.made_private': payload<{ home: string; changed: { path: string; was: string; now: string }[] }>(),
  'intent.recovered': payload<{ op: string; step: string; outcome: string; startedAt: string }>(),
  'intent.recovery_failed': payload<{ op: string; step: string; outcome: string; startedAt: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof WORKSPACE_EVENTS> {}
}
