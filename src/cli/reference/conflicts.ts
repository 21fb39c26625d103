import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for conflicts and sync: the conflict map and keeping tasks current (see src/cli/reference.ts). */
export const CONFLICTS: Readonly<Record<string, CommandReference>> = {
  conflicts: {
    json: `{
  conflicts: {                     // pairs that do not merge, as git merges them
    a: string; b: string;          // task IDs; b is '@base' for a task against its base's tip
    aCommit: string; bCommit: string;  // what was merged: a task's tip, or a commit of its uncommitted work on it
    conflict: true;
    files: { path: string; type: string; message: string;   // type: git's ('CONFLICT (contents)', 'CONFLICT (modify/delete)'…)
      hunks: { line: number; ours: string[]; base: string[] | null; theirs: string[] }[] }[];  // ours: a's side
    overlap: string[];             // paths both changed that merge
    computedAt: string;
  }[];
  overlaps: { a: string; b: string; paths: string[] }[];   // pairs that changed the same paths and merge cleanly
  tasks: { id: string; tip: string; commit: string; uncommitted: boolean; error: string | null }[];
  pairs: number; merged: number; reused: number;           // pairs in the map; merged in this call; unchanged since the last
  snapshots: number; ms: number;                           // workspaces read; the time it took
}
// with ID: only that task's pairs and side`,
    exit: [
      [0, 'the map was computed (conflicts or not)'],
      [1, 'the task is not live (landed, being removed)'],
      TASK_EXIT_2,
    ],
    errors: ['TASK_NOT_FOUND', 'TASK_STATE', 'ID_INVALID'],
    example: `$ warren conflicts
TASK   WITH   MERGE     FILES
cart   promo  conflict  cart.js
cart   tax    merges    cart.js
promo  tax    merges    cart.js
6 pair(s) (every two live tasks, and each with its base): 6 merged again, 0 unchanged since the last look; 3 workspace(s) read, in 1055 ms
[exit 0]
$ warren conflicts promo
TASK   WITH   MERGE     FILES
cart   promo  conflict  cart.js
promo  tax    merges    cart.js

cart.js (CONFLICT (contents)) — cart against promo
  @ line 2
  cart:
      return items.reduce((s, i) => s + i.price, 0);
  promo:
      return items.length * 10;
6 pair(s) (every two live tasks, and each with its base): 0 merged again, 6 unchanged since the last look; 3 workspace(s) read, in 689 ms
[exit 0]
$ warren conflicts nope
warren: no task nope in this repository; nothing was changed.
  hint: See \`warren list\`.
[exit 2]`,
    see: [
      ['Conflicts seen before they happen', '../design/conflicts.md'],
      ['What it cannot see', '../design/conflicts.md#what-it-cannot-see'],
    ],
  },
  sync: {
    json: `// brought in:
{ state: 'synced'; id: string; how: 'rebase' | 'merge'; from: string; to: string; onto: string;
  checkpoint: string | null }      // the commit --checkpoint made first, if any
// already holds its base: { state: 'up-to-date'; id: string; head: string; onto: string }
// --keep, on a conflict (exit 1): { state: 'conflict'; id; how: 'merge'; onto; paths: string[]; kept: true; checkpoint }
// --abort: { state: 'aborted'; id: string; head: string }
// a conflict without --keep: the error SYNC_CONFLICT (exit 1), details { paths, onto, how }; everything rolled back`,
    exit: [
      [0, 'synced, already up to date, or a kept conflict rolled back (`--abort`)'],
      [
        1,
        'refused or conflicting: uncommitted work (without `--checkpoint`), a conflict (rolled back, or left with `--keep`), nothing to abort, the lock is held',
      ],
      [2, 'bad input: an invalid or unknown ID, both `--rebase` and `--merge`'],
    ],
    errors: [
      'SYNC_CONFLICT',
      'WORKSPACE_DIRTY',
      'NOTHING_TO_SYNC',
      'LOCK_HELD',
      'TASK_STATE',
      'TASK_NOT_FOUND',
      'USAGE',
    ],
    example: `$ warren sync tax
tax: brought its base (d2453b995d08) in by rebase: b4c9357e6205 → ead74f27b4cf
[exit 0]
$ warren sync cart
warren: bringing main (d2453b995d08) into task cart by rebase conflicts in cart.js; it was rolled back: the branch, the index and every file are as they were.
  hint: Run \`warren sync cart --keep\` to leave the conflict in the workspace, then \`warren run cart --resolve --agent NAME\` (or resolve it yourself) and \`warren checkpoint cart\`.
[exit 1]
$ warren sync cart --keep
cart: the base (d2453b995d08) is merged into the workspace with conflicts in cart.js, left to resolve: \`warren run cart --resolve --agent NAME\` (or edit them), then \`warren checkpoint cart\`; \`warren sync cart --abort\` rolls it back
[exit 1]
$ warren sync cart --abort
cart: the sync was rolled back; the workspace is at 6695019b9c86
[exit 0]
$ warren --json sync tax
{
  "state": "up-to-date",
  "id": "tax",
  "head": "ead74f27b4cf9293a86a9bc0105b192151afe5c3",
  "onto": "d2453b995d081ce8f4c00c8ea99c96d8dd50057f"
}
[exit 0]
$ warren sync nope
warren: no task nope in this repository; nothing was changed.
  hint: See \`warren list\`.
[exit 2]`,
    see: [
      ['Keeping tasks current', '../design/conflicts.md#keeping-tasks-current-warren-sync'],
      ['Crash-safe operations', '../design/workspaces.md#what-survives-a-crash'],
    ],
  },
};
