import { payload, type PayloadsOf } from '../state/events.js';

/** The conflict map's events (src/conflicts/map.ts). */
export const CONFLICT_EVENTS = {
  /** A pair began to conflict: `other` is a task, or `@base`. Recorded on each task of the pair. */
  'conflict.started': payload<{ other: string; paths: string[]; commit: string; otherCommit: string }>(),
  /** A pair no longer conflicts (one side changed, landed, or went). */
  'conflict.ended': payload<{ other: string; why: 'merges' | 'gone' }>(),
  /** A task's uncommitted work could not be read (its workspace is missing or refused): merged as committed. */
  'conflict.snapshot_skipped': payload<{ reason: string }>(),
  /** `warren sync`: the base's new commits brought into the task, or the attempt rolled back. */
  'task.synced': payload<{
    how: 'rebase' | 'merge';
    from: string;
    to: string;
    onto: string;
    checkpoint: string | null;
  }>(),
  'sync.conflict': payload<{ how: 'rebase' | 'merge'; paths: string[]; onto: string; kept: boolean }>(),
  'sync.aborted': payload<{ how: 'rebase' | 'merge'; head: string }>(),
  /** `warren run --tell-conflicts`: a note about new conflicts put into the agent's prompt. */
  'conflict.told': payload<{ others: string[] }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof CONFLICT_EVENTS> {}
}
