import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for rm, restore, scan, gc, provision: taking a task away and putting things right (see src/cli/reference.ts). */
export const REMOVAL: Readonly<Record<string, CommandReference>> = {
  rm: {
    json: `{ removed: true; id: string; branch: string; branchDeleted: boolean; unlandedCommits: number;
  folderMissing?: true;        // the folder was already missing: only the records went
  archive?: string;            // --discard: the ref everything was saved under, refs/warren/archive/<ID>/<UTC time>
                               //   (a task on a host: its workspace there, brought here first)
  services: string[] }         // what went with its services: processes stopped, databases dropped and checked gone`,
    exit: [
      [
        0,
        'removed (and, with `--delete-branch`, the branch deleted; with `--discard`, everything saved first and the branch deleted); a task whose folder was already missing is forgotten (`folderMissing`), its branch kept',
      ],
      [
        1,
        'refused: uncommitted work, unlanded commits, a foreign mount, records that disagree, a workspace off its branch or mid-rebase/merge, a branch checked out elsewhere (`--delete-branch`, `--discard`), a task on a host whose workspace there could not be brought here to archive (`--discard`: REMOTE_FAILED, nothing removed) or that a run there holds; or removal was incomplete (`remove_failed`)',
      ],
      TASK_EXIT_2,
    ],
    errors: [
      'WORKSPACE_DIRTY',
      'BRANCH_UNLANDED',
      'BRANCH_CHECKED_OUT',
      'WORKSPACE_MOUNTED',
      'OWNERSHIP_MISMATCH',
      'TASK_STATE',
      'PATH_ESCAPE',
      'REMOVE_INCOMPLETE',
      'LOCK_HELD',
      'REMOTE_FAILED',
      'TASK_NOT_FOUND',
      'USAGE',
    ],
    example: `$ echo draft > /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart/draft.txt
$ warren rm cart
warren: task cart has 1 uncommitted change(s) that removing would lose: ?? draft.txt. Nothing was removed.
  hint: Commit them (\`warren checkpoint cart\`) or discard them in /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart, then run \`warren rm cart\` again.
[exit 1]
$ rm /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart/draft.txt
$ warren rm cart --delete-branch
warren: branch feat/cart holds 1 commit(s) that are on no other branch or ref: fff96d64a3f4 a cart. Nothing was removed.
  hint: Land the work (\`warren land cart\`), or run \`warren rm cart\` without --delete-branch to keep the branch.
[exit 1]
$ warren rm cart --delete-branch
removed cart; deleted branch feat/cart
[exit 0]
$ warren --json rm login
{
  "removed": true,
  "id": "login",
  "branch": "fix/login",
  "branchDeleted": false,
  "unlandedCommits": 1,
  "services": []
}
[exit 0]
$ warren rm search
warren: task search has 2 uncommitted change(s) that removing would lose: M app.js, ?? notes.txt. Nothing was removed.
  hint: Commit them (\`warren checkpoint search\`) or discard them in /tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/search, then run \`warren rm search\` again; or \`warren rm search --discard\` saves everything under refs/warren/archive/search/ and removes it.
[exit 1]
$ warren rm search --discard
discarded search and branch feat/search; everything is saved in refs/warren/archive/search/20261130T214821.051Z (\`warren restore search\` brings it back)
[exit 0]`,
    see: [
      ['Workspaces: `rm`', '../design/workspaces.md#rm'],
      ['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring'],
      ['After landing', '../design/landing.md#after-landing-rm'],
    ],
  },
  restore: {
    json: `// as new, plus the archive it came from, and the refs under refs/warren/archive/<ID>/ it passed over
// (made on this machine, where the archive is, whatever runner warren.yaml names: a warning says so)
{ id; type; branch; path; base; baseCommit; state: 'ready' | 'setup_failed'; ports?; risk?; log?; setupOk?; warnings; services; archive: string;
  ignored: { ref: string; why: 'unrecorded' | 'moved' | 'future'; reason: string }[] }   // warren did not make it, it moved, or it is dated in the future`,
    exit: [
      [0, 'the task is back and `ready`'],
      [
        1,
        'refused (nothing was made): no archive of that ID that warren made, the ID is a task again, its branch exists again; or setup failed (the task is kept in `setup_failed`)',
      ],
      TASK_EXIT_2,
    ],
    errors: ['TASK_NOT_FOUND', 'TASK_EXISTS', 'BRANCH_EXISTS', 'BASE_UNKNOWN', 'CREATE_FAILED'],
    example: `$ warren rm search --discard
discarded search and branch feat/search; everything is saved in refs/warren/archive/search/20261130T214821.051Z (\`warren restore search\` brings it back)
[exit 0]
$ warren restore search --no-setup
warren: warn: risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none
warren: warn: setup skipped (--no-setup): 1 command(s) not run; run \`warren setup search\` later
restored: feat/search at /tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/search from refs/warren/archive/search/20261130T214821.051Z (archived 2026-11-30T21:48:21.051Z)
[exit 0]
$ cd /tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/search && git status --short && git log --format='%h %s' -2
 M app.js
?? notes.txt
7093eab a search
c2e4346 say hi
$ warren --json rm search --discard
{
  "removed": true,
  "id": "search",
  "branch": "feat/search",
  "branchDeleted": true,
  "unlandedCommits": 1,
  "archive": "refs/warren/archive/search/20261130T214826.484Z",
  "services": []
}
[exit 0]
$ warren --json restore search
setting up search on port 20000
warren: warn: risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none
{
  "id": "search",
  "type": "feat",
  "branch": "feat/search",
  "path": "/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/search",
  "base": "main",
  "baseCommit": "c2e4346fdf0b2d2c803ffa3d5e014b6391ace723",
  "state": "ready",
  "ports": {
    "first": 20000,
    "count": 10
  },
  "risk": {
    "level": "medium",
    "reasons": [
      "setup hello binds a port"
    ],
    "recommendedSandbox": "bwrap"
  },
  "log": "/tmp/warren-docs-iqVKjQ/home/logs/shop-07830bb079/search/20261130T214829-8a20c869-setup.log",
  "setupOk": true,
  "warnings": [
    {
      "kind": "risk.classified",
      "level": "warn",
      "message": "risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none"
    }
  ],
  "services": [],
  "archive": "refs/warren/archive/search/20261130T214826.484Z",
  "ignored": []
}
[exit 0]`,
    see: [['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring']],
  },
  scan: {
    json: `{ strays: { kind: StrayKind; path?: string; id?: string; branch?: string; reason: string }[] }
// StrayKind: vanished | displaced | stranded | unclaimed | prunable | mounted | orphan-branch | foreign (a path warren did not make: listed, never deleted) | remote-unfetched (a task on a host whose commits there are not fetched back yet) | remote-orphan (a host's record with no task here: gc removes its workspace there when that holds nothing not here)`,
    exit: [[0, 'the scan ran (strays are data, not failures)']],
    errors: ['NOT_A_REPO'],
    example: `$ warren scan
KIND       ID   PATH OR BRANCH                                                  WHY
displaced  api  /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/api      live task whose folder is missing (a disk not mounted? moved?); warren and git keep its records: put the folder back, or, if it is gone for good, \`warren rm api\` forgets the workspace and keeps branch docs/api
foreign    -    /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/boot     warren did not make it (not in its ledger); it is left as it is
prunable   -    /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/by-hand  git: gitdir file points to non-existent location
[exit 0]
$ warren --json scan
{
  "strays": [
    {
      "kind": "displaced",
      "id": "api",
      "path": "/tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/api",
      "branch": "docs/api",
      "reason": "live task whose folder is missing (a disk not mounted? moved?); warren and git keep its records: put the folder back, or, if it is gone for good, \`warren rm api\` forgets the workspace and keeps branch docs/api"
    },
    {
      "kind": "foreign",
      "path": "/tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/boot",
      "reason": "warren did not make it (not in its ledger); it is left as it is"
    },
    {
      "kind": "prunable",
      "path": "/tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/by-hand",
      "reason": "git: gitdir file points to non-existent location"
    }
  ]
}
[exit 0]`,
    see: [['Strays and what `gc` does with each', '../design/workspaces.md#scan-and-gc']],
  },
  gc: {
    json: `{
  removed: { kind: string; action: string; path?: string; id?: string; branch?: string }[];
  kept: { kind: string; path: string; reason: string }[];
}`,
    exit: [
      [0, 'gc ran; what it kept is listed with the reason'],
      [1, 'refused (e.g. the repository lock stayed held)'],
    ],
    errors: ['LOCK_TIMEOUT'],
    example: `$ warren gc
removed  prunable  /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/by-hand
kept     displaced  /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/api: live task whose folder is missing (a disk not mounted? moved?); warren and git keep its records: put the folder back, or, if it is gone for good, \`warren rm api\` forgets the workspace and keeps branch docs/api
kept     foreign  /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/boot: warren did not make it (not in its ledger), so it never deletes it; remove it yourself if you mean to
kept     run_logs  /tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/cart: logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07
kept     run_logs  /tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/login: logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07
kept     run_logs  /tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/queue-mx3sy8di-9129: logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07
kept     run_logs  /tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/queue-mx3syfdc-9612: logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07
[exit 0]
$ warren rm api
forgot api (its folder was already missing; git's record of it is gone too); kept branch docs/api (0 commit(s) not on the base)
[exit 0]
$ warren --json gc
{
  "removed": [
    {
      "kind": "snapshot",
      "path": "/tmp/warren-docs-5BwVX2/home/snapshots/cd59ce9f3c600c0f313a4d87e0df0142",
      "action": "delete-dir"
    }
  ],
  "kept": [
    {
      "path": "/tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/boot",
      "kind": "foreign",
      "reason": "warren did not make it (not in its ledger), so it never deletes it; remove it yourself if you mean to"
    },
    {
      "kind": "run_logs",
      "path": "/tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/cart",
      "reason": "logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07"
    },
    {
      "kind": "run_logs",
      "path": "/tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/login",
      "reason": "logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07"
    },
    {
      "kind": "run_logs",
      "path": "/tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/queue-mx3sy8di-9129",
      "reason": "logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07"
    },
    {
      "kind": "run_logs",
      "path": "/tmp/warren-docs-5BwVX2/home/logs/shop-1fc3eebf81/queue-mx3syfdc-9612",
      "reason": "logs of a removed task are kept 7 days after its last run; gc deletes them from 2026-12-07"
    }
  ]
}
[exit 0]`,
    see: [['Strays and what `gc` does with each', '../design/workspaces.md#scan-and-gc']],
  },
  provision: {
    json: `// without --refresh
{ provision: ProvisionRecord[]; remounted: string[];
  replaced: string[] }   // cow paths something else replaced (a plain folder, a file, a link): not mounted over
// with --refresh
{ provision: ProvisionRecord[]; skips: { path: string; mode?: string; reason: string; detail: string }[] }
// either, for a task on a host over SSH (done there by its warren, from its main checkout at the task's base):
//   host: string;   // the host's name; the records' paths and \`source\` are the host's
// ProvisionRecord: { path, mode, requested, isolated, entries, bytes, ms, method, source, lockfile?, fallback?,
//                    linked?, filled?, snapshot?, lower?, upper?, work?, namespaced?, fuse?, manifest?,
//                    relocation?: { from, aliases?, to, checked, rewritten: { path, sha256 }[], left: { path, why }[] } }`,
    exit: [
      [0, 'everything is in place (or provisioned again)'],
      [
        1,
        "refused or failed: the lock is held, a mount or copy failed (here or on the task's host), the host did not answer",
      ],
      [2, 'bad input (an invalid ID, no such task, an unknown option); nothing was touched'],
    ],
    errors: ['TASK_NOT_FOUND', 'LOCK_HELD', 'PROVISION_FAILED', 'PATH_ESCAPE', 'REMOTE_FAILED', 'USAGE'],
    example: `$ warren provision login
2 provisioned path(s), all in place
[exit 0]
$ warren provision login --refresh
node_modules: cow by overlay, 4 entries, 20 ms
.env: copy by cp -a, 1 entries, 48 ms
[exit 0]`,
    see: [['Provisioning', '../design/provisioning.md']],
  },
};
