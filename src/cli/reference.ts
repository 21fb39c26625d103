import type { ErrorCode } from '../errors.js';

/**
 * What the command reference needs and commander does not know: each command's `--json`
 * result, its exit statuses, the errors it raises and a real run. Keyed by the command's full
 * name (`'policy keygen'`). `npm run docs` renders docs/commands/ from this and the commander
 * definitions; test/docs.test.ts fails when a command has no entry here, or an entry no command.
 * The examples are real runs, pasted from `node scripts/doc-examples.js` (paths, hashes and
 * times are as they appeared).
 */
export interface CommandReference {
  /** The `--json` result: a TypeScript-like shape, with comments. */
  json: string;
  /** Exit statuses and when each happens. */
  exit: readonly (readonly [status: number, when: string])[];
  /** The codes this command raises most often (every code: docs/errors.md). */
  errors: readonly ErrorCode[];
  /** A real run: `$ warren …`, its output (stderr, then stdout), `[exit N]`. */
  example: string;
  /** Where the behaviour is explained, relative to docs/commands/. */
  see: readonly (readonly [title: string, href: string])[];
}

/** The warren.yaml every example ran with (a throwaway repository: `shop`, with an `origin` remote). */
export const EXAMPLE_SETUP = `$ cat warren.yaml
provision:
  - { path: node_modules, mode: cow }
  - { path: .env, mode: copy }
setup:
  - { id: hello, run: "echo setting up $WARREN_TASK_ID on port $WARREN_PORT" }
verify:
  - { id: test, run: "node app.js", timeout: 30s }
  - { id: lint, run: [sh, -c, "grep -q TODO app.js"], required: false }
protected: [".env.testing"]
agents:
  echo-agent: { command: [cat], prompt: stdin }`;

/** The exit-status convention every command follows (CONTRACT.md). */
export const EXIT_STATUSES: readonly (readonly [status: number, meaning: string])[] = [
  [0, 'done'],
  [1, 'refused or failed; the message on stderr says what happened and that nothing was lost'],
  [2, 'bad input or usage; nothing was touched'],
  [124, 'a supervised command (`exec`, `run`) ran past its `--timeout`'],
];

const TASK_EXIT_2 = [2, 'bad input (an invalid ID, an unknown option); nothing was touched'] as const;

export const COMMAND_REFERENCE: Readonly<Record<string, CommandReference>> = {
  new: {
    json: `{
  id: string; type: string; branch: string;      // branch is TYPE/ID
  path: string;                                  // the workspace
  base: string; baseCommit: string;
  state: 'ready' | 'setup_failed';
  ports?: { first: number; count: number };      // the task's port block
  risk?: { level: 'low' | 'medium' | 'high'; reasons: string[]; recommendedSandbox: 'none' | 'bwrap' };
  log?: string; setupOk?: boolean;               // when setup ran
  warnings: { kind: string; level: string; message: string }[];  // everything recorded above info while creating
}`,
    exit: [
      [0, 'the task is `ready`'],
      [1, 'refused (nothing was created; e.g. setup commands not trusted yet), or setup failed: the task is kept in `setup_failed` with its log'],
      [2, 'bad input: an invalid type, ID, branch name, `--sandbox` or warren.yaml (a `worktree_root` it may not choose included); nothing was created'],
    ],
    errors: ['ID_INVALID', 'TYPE_INVALID', 'BRANCH_INVALID', 'TASK_EXISTS', 'BRANCH_EXISTS', 'WORKSPACE_EXISTS', 'BASE_UNKNOWN', 'BASE_DIVERGED', 'CHECKOUT_DIRTY', 'SANDBOX_REQUIRED', 'PORTS_EXHAUSTED', 'UNTRUSTED_COMMANDS', 'CONFIG_INVALID', 'CREATE_FAILED'],
    example: `$ warren new feat cart
warren: taking a snapshot of node_modules (once per lockfile content; later workspaces reuse it)…
setting up cart on port 20000
warren: warn: risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none
ready: feat/cart at /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart (from main d20fa0d0de8c)
ports 20000-20009
risk medium; recommended sandbox bwrap (setup hello binds a port)
setup passed; log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191218-2fcb7ef1-setup.log
[exit 0]
$ warren --json new fix login
setting up login on port 20010
warren: warn: risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none
{
  "id": "login",
  "type": "fix",
  "branch": "fix/login",
  "path": "/tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/login",
  "base": "main",
  "baseCommit": "d20fa0d0de8c910978f34e4e61005006c3628e87",
  "state": "ready",
  "ports": {
    "first": 20010,
    "count": 10
  },
  "risk": {
    "level": "medium",
    "reasons": [
      "setup hello binds a port"
    ],
    "recommendedSandbox": "bwrap"
  },
  "log": "/tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/login/20261130T191219-5eb49316-setup.log",
  "setupOk": true,
  "warnings": [
    {
      "kind": "risk.classified",
      "level": "warn",
      "message": "risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none"
    }
  ]
}
[exit 0]
$ warren new feat -- 'x; rm -rf ~'
warren: task ID "x; rm -rf ~" is not allowed: it must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (start with a letter or digit, at most 64 characters, no "..", not ending in ".lock"). Nothing was created.
  hint: Pick an ID such as T-123 or fix-login.
[exit 2]`,
    see: [['Workspaces: what `new` guarantees', '../design/workspaces.md#what-new-guarantees'], ['Provisioning', '../design/provisioning.md'], ['Setup, ports, risk and sandbox', '../design/execution.md']],
  },
  list: {
    json: `{ id: string; type: string; branch: string; path: string; base: string; state: TaskState; createdAt: string }[]
// TaskState: creating | ready | setup_failed | landed | removing | remove_failed
// --archived: what rm --discard saved, oldest first
{ id: string; ref: string; at: string;           // refs/warren/archive/<ID>/<UTC time>, and that time
  commit: string; tip: string; index: string;    // the archive, the branch tip it keeps, the index it kept
  type: string; branch: string; base: string; baseCommit: string;
  sandbox?: 'none' | 'bwrap' }[]                  // the task's own sandbox (new --sandbox), which restore gives back`,
    exit: [[0, 'always, when the repository opens']],
    errors: ['NOT_A_REPO'],
    example: `$ warren list
ID     TYPE  STATE  AGE  BRANCH     PATH
cart   feat  ready  2s   feat/cart  /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart
login  fix   ready  1s   fix/login  /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/login
[exit 0]
$ warren --json list
[
  {
    "id": "cart",
    "type": "feat",
    "branch": "feat/cart",
    "path": "/tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart",
    "base": "main",
    "state": "ready",
    "createdAt": "2026-11-30T19:12:17.909Z"
  },
  {
    "id": "login",
    "type": "fix",
    "branch": "fix/login",
    "path": "/tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/login",
    "base": "main",
    "state": "ready",
    "createdAt": "2026-11-30T19:12:18.779Z"
  }
]
[exit 0]
$ warren list --archived
ID      TYPE  ARCHIVED  BRANCH       TIP           REF
search  feat  1s ago    feat/search  7093eabcefd9  refs/warren/archive/search/20261130T214821.051Z
[exit 0]
$ warren --json list --archived
[
  {
    "id": "search",
    "ref": "refs/warren/archive/search/20261130T214821.051Z",
    "at": "2026-11-30T21:48:21.051Z",
    "commit": "9efaf2e7a5e5f8f4cdd488082dd7afe604ad4b89",
    "tip": "7093eabcefd92e50094ccbf257eedf89ff8b18ed",
    "index": "ef2bacd8863acd13460dc34cfad7f425dfd769a0",
    "type": "feat",
    "branch": "feat/search",
    "base": "main",
    "baseCommit": "c2e4346fdf0b2d2c803ffa3d5e014b6391ace723"
  }
]
[exit 0]`,
    see: [['Task states', '../design/workspaces.md#list-and-show'], ['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring']],
  },
  show: {
    json: `{
  id: string; type: string; branch: string; path: string;
  base: string; baseCommit: string; state: TaskState; createdAt: string;
  data: object;            // what later stages recorded: provision, checkout, ports, risk, setup, verify, landed, …
  events: { at: string; kind: string; level: 'info' | 'warn' | 'error'; message: string; [fact: string]: unknown }[];
}`,
    exit: [[0, 'the task exists'], [1, 'no such task (`TASK_NOT_FOUND`)'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'ID_INVALID'],
    example: `$ warren show cart --events 5
task    cart (feat)
state   ready
branch  feat/cart
base    main d20fa0d0de8c
path    /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/cart
created 2026-11-30T19:12:17.909Z

events:
  2026-11-30T19:12:20.972Z  exec: exec sh: exit 0 after 91ms (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191220-2327723f-exec.log)
  2026-11-30T19:12:21.368Z  exec: exec sh started (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191221-0f87abd8-exec.log)
  2026-11-30T19:12:22.414Z  [warn] exec: exec sh: timed out after 1000ms; ended with SIGTERM after 1043ms (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191221-0f87abd8-exec.log)
  2026-11-30T19:12:22.823Z  agent: agent echo-agent started (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191222-9c162701-agent.log)
  2026-11-30T19:12:22.884Z  agent: agent echo-agent: exit 0 after 57ms (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191222-9c162701-agent.log)
[exit 0]
$ warren --json show nope
{
  "error": {
    "code": "TASK_NOT_FOUND",
    "message": "no task nope in this repository.",
    "hint": "See \`warren list\`."
  }
}
[exit 1]`,
    see: [['Task states and events', '../design/workspaces.md#list-and-show']],
  },
  status: {
    json: `{
  tracked: { code: string; path: string }[];           // git status --porcelain
  provisioned: {
    path: string; mode: 'cow' | 'copy' | 'hardlink' | 'share';
    isolated: boolean;                                  // verified when provisioned (docs/design/provisioning.md)
    changed: { path: string; change: 'added' | 'modified' | 'deleted' }[];   // every file, at most 500
    changedCount: number;
    packages?: {                                        // a folder with changes: per package (node_modules) or top-level entry
      name: string; kind: 'package' | 'entry';
      change: 'added' | 'removed' | 'changed';
      before?: string; after?: string;                  // versions, from package.json or pnpm's .pnpm/<name>@<version>
      changes: number;
    }[];
    affectsAllSharers?: true;                           // share
    writtenThrough?: string[];                          // hardlink: in-place writes that reached the main checkout
    unknown?: string;                                   // why the changes could not be read
  }[];
  stale: boolean;                                       // a node_modules does not match its lockfile, or a lockfile changed
  staleLockfiles: { path: string; provisionedFrom: string; now: string | null;
    tree?: string; why?: string; fix?: string }[];       // node_modules: checked against its lockfile
}`,
    exit: [[0, 'the status was read'], [1, 'no such task, or a layer could not be mounted again'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'PATH_ESCAPE', 'PROVISION_FAILED'],
    example: `$ warren status cart
tracked: 2 change(s)
  ?? .env.testing
  ?? cart.js
node_modules (cow): 1 change(s) in 1 package(s)
  changed  left-pad (1 change)
.env (copy): unchanged
(\`warren status cart --files\` lists every changed file)
stale: no
[exit 0]
$ warren status cart --files
tracked: 2 change(s)
  ?? .env.testing
  ?? cart.js
node_modules (cow): 1 change(s)
  modified node_modules/left-pad/index.js
.env (copy): unchanged
stale: no
[exit 0]
$ warren --json status cart
{
  "tracked": [
    {
      "code": "??",
      "path": ".env.testing"
    },
    {
      "code": "??",
      "path": "cart.js"
    }
  ],
  "provisioned": [
    {
      "path": "node_modules",
      "mode": "cow",
      "isolated": true,
      "changed": [
        {
          "path": "node_modules/left-pad/index.js",
          "change": "modified"
        }
      ],
      "changedCount": 1,
      "packages": [
        {
          "name": "left-pad",
          "kind": "package",
          "change": "changed",
          "changes": 1
        }
      ]
    },
    {
      "path": ".env",
      "mode": "copy",
      "isolated": true,
      "changed": [],
      "changedCount": 0
    }
  ],
  "stale": false,
  "staleLockfiles": []
}
[exit 0]`,
    see: [['What changed: `warren status`', '../design/provisioning.md#what-changed-warren-status-id']],
  },
  path: {
    json: `{ path: string }   // the workspace, canonical (symlinks resolved)`,
    exit: [[0, 'the task exists (its path is printed even if the folder is gone: see `warren scan`)'], [1, 'no such task'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'ID_INVALID'],
    example: `$ warren path cart
/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/cart
[exit 0]
$ warren --json path login
{
  "path": "/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/login"
}
[exit 0]`,
    see: [['Moving around: path, completion, exec', '../design/workspaces.md#moving-around'], ['Where workspaces live', '../design/workspaces.md#where-workspaces-live']],
  },
  diff: {
    json: `{
  id: string; base: string; branch: string;
  scope: 'all' | 'committed' | 'uncommitted';
  from: string;                   // the commit it starts from: where the branch left the base (HEAD for --uncommitted)
  to: string;                     // the branch tip (--committed), or the tree of the workspace as it is
  files: { path: string; from: string | null;        // from: a renamed or copied file's old path
           status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type-changed';
           added: number | null; deleted: number | null; binary: boolean }[];
  added: number; deleted: number;  // lines, all files
  patch?: string;                  // the whole patch (not with --stat)
  truncated: false;
}`,
    exit: [[0, 'the diff was read (no changes is not a failure)'], [1, 'no such task; the workspace is gone (only `--committed` can be shown)'], [2, 'bad input: both `--committed` and `--uncommitted`, an invalid ID']],
    errors: ['TASK_NOT_FOUND', 'OWNERSHIP_MISMATCH', 'USAGE'],
    example: `$ warren diff cart --stat
   ADDED  DELETED  PATH
A  +1     -0       .env.testing
A  +1     -0       cart.js
2 file(s) changed, +2 -0: feat/cart since it left main, uncommitted work included
[exit 0]
$ warren diff cart
diff --git a/.env.testing b/.env.testing
new file mode 100644
index 0000000..0b4b07f
--- /dev/null
+++ b/.env.testing
@@ -0,0 +1 @@
+SECRET=mine
diff --git a/cart.js b/cart.js
new file mode 100644
index 0000000..506075e
--- /dev/null
+++ b/cart.js
@@ -0,0 +1 @@
+export const cart = [];
[exit 0]
$ warren --json diff cart --uncommitted --stat
{
  "id": "cart",
  "base": "main",
  "branch": "feat/cart",
  "scope": "uncommitted",
  "from": "f4ca5dfa546908c089d09503b9e91f3c31316631",
  "to": "44ba2e50833bf0d865b9eedf3760628e9efaaa8b",
  "files": [
    {
      "path": ".env.testing",
      "from": null,
      "status": "added",
      "added": 1,
      "deleted": 0,
      "binary": false
    },
    {
      "path": "cart.js",
      "from": null,
      "status": "added",
      "added": 1,
      "deleted": 0,
      "binary": false
    }
  ],
  "added": 2,
  "deleted": 0,
  "truncated": false
}
[exit 0]`,
    see: [['Reviewing a task', '../design/review.md'], ['What changed in provisioned paths: `warren status`', '../design/provisioning.md#what-changed-warren-status-id']],
  },
  rm: {
    json: `{ removed: true; id: string; branch: string; branchDeleted: boolean; unlandedCommits: number;
  folderMissing?: true;        // the folder was already missing: only the records went
  archive?: string }           // --discard: the ref everything was saved under, refs/warren/archive/<ID>/<UTC time>`,
    exit: [
      [0, 'removed (and, with `--delete-branch`, the branch deleted; with `--discard`, everything saved first and the branch deleted); a task whose folder was already missing is forgotten (`folderMissing`), its branch kept'],
      [1, 'refused: uncommitted work, unlanded commits, a foreign mount, records that disagree, a workspace off its branch or mid-rebase/merge, a branch checked out elsewhere (`--delete-branch`, `--discard`); or removal was incomplete (`remove_failed`)'],
      TASK_EXIT_2,
    ],
    errors: ['WORKSPACE_DIRTY', 'BRANCH_UNLANDED', 'BRANCH_CHECKED_OUT', 'WORKSPACE_MOUNTED', 'OWNERSHIP_MISMATCH', 'TASK_STATE', 'PATH_ESCAPE', 'REMOVE_INCOMPLETE', 'LOCK_HELD', 'TASK_NOT_FOUND', 'USAGE'],
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
  "unlandedCommits": 1
}
[exit 0]
$ warren rm search
warren: task search has 2 uncommitted change(s) that removing would lose: M app.js, ?? notes.txt. Nothing was removed.
  hint: Commit them (\`warren checkpoint search\`) or discard them in /tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/search, then run \`warren rm search\` again; or \`warren rm search --discard\` saves everything under refs/warren/archive/search/ and removes it.
[exit 1]
$ warren rm search --discard
discarded search and branch feat/search; everything is saved in refs/warren/archive/search/20261130T214821.051Z (\`warren restore search\` brings it back)
[exit 0]`,
    see: [['Workspaces: `rm`', '../design/workspaces.md#rm'], ['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring'], ['After landing', '../design/landing.md#after-landing-rm']],
  },
  restore: {
    json: `// as new, plus the archive it came from
{ id; type; branch; path; base; baseCommit; state: 'ready' | 'setup_failed'; ports?; risk?; log?; setupOk?; warnings; archive: string }`,
    exit: [
      [0, 'the task is back and `ready`'],
      [1, 'refused (nothing was made): no archive of that ID, the ID is a task again, its branch exists again; or setup failed (the task is kept in `setup_failed`)'],
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
  "archive": "refs/warren/archive/search/20261130T214826.484Z"
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
  "archive": "refs/warren/archive/search/20261130T214826.484Z"
}
[exit 0]`,
    see: [['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring']],
  },
  scan: {
    json: `{ strays: { kind: StrayKind; path?: string; id?: string; branch?: string; reason: string }[] }
// StrayKind: vanished | displaced | stranded | unclaimed | prunable | mounted | orphan_branch | foreign (a path warren did not make: listed, never deleted)`,
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
    exit: [[0, 'gc ran; what it kept is listed with the reason'], [1, 'refused (e.g. the repository lock stayed held)']],
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
{ provision: ProvisionRecord[]; remounted: string[] }
// with --refresh
{ provision: ProvisionRecord[]; skips: { path: string; mode?: string; reason: string; detail: string }[] }
// ProvisionRecord: { path, mode, requested, isolated, entries, bytes, ms, method, source, lockfile?, fallback?,
//                    linked?, filled?, snapshot?, lower?, upper?, work?, namespaced?, fuse?, manifest?,
//                    relocation?: { from, aliases?, to, checked, rewritten: { path, sha256 }[], left: { path, why }[] } }`,
    exit: [[0, 'everything is in place (or provisioned again)'], [1, 'refused or failed: no such task, the lock is held, a mount or copy failed'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'LOCK_HELD', 'PROVISION_FAILED', 'PATH_ESCAPE'],
    example: `$ warren provision login
2 provisioned path(s), all in place
[exit 0]
$ warren provision login --refresh
node_modules: cow by overlay, 4 entries, 20 ms
.env: copy by cp -a, 1 entries, 48 ms
[exit 0]`,
    see: [['Provisioning', '../design/provisioning.md']],
  },
  exec: {
    json: `{
  exitCode: number | null; signal: string | null;
  timedOut: boolean; canceledBy: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGPIPE' | null;   // SIGPIPE: warren's output closed
  durationMs: number;
  log: string;                     // $WARREN_HOME/logs/<project>/<task>/<runId>-exec.log
  sandbox: 'none' | 'bwrap';
  reason: string | null;           // why it did not succeed: timeout, cancel, output closed, a sandbox refusal, a mount
  runId: string;
}`,
    exit: [
      [0, "the command's own exit status is warren's"],
      [124, 'the command ran past `--timeout`; its whole process tree was ended'],
      [130, 'warren got SIGINT (143: SIGTERM, 129: SIGHUP) and ended the command'],
      [141, "warren's output closed (`warren exec … | head -1`: the reader went away) and warren ended the command, as a shell's SIGPIPE would"],
      [1, 'refused before anything ran: the task is locked, in the wrong state, the policy or sandbox refused, the command was not found'],
      [2, 'bad input: no command, a word of the command that starts with `-` without `--` before the command, an argument with a NUL byte, an invalid `--timeout`'],
    ],
    errors: ['LOCK_HELD', 'TASK_STATE', 'TASK_NOT_FOUND', 'COMMAND_FAILED', 'POLICY_INVALID', 'SANDBOX_UNAVAILABLE', 'PROVISION_FAILED', 'DURATION_INVALID', 'USAGE'],
    example: `$ warren exec cart -- sh -c 'echo "export const cart = [];" > cart.js; echo patched >> node_modules/left-pad/index.js; echo SECRET=mine > .env.testing; echo $WARREN_PORT'
20000
[exit 0]
$ warren --json exec cart --timeout 1s -- sh -c 'setsid sleep 600 & sleep 600'
{
  "exitCode": 143,
  "timedOut": true,
  "durationMs": 1043,
  "log": "/tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191221-0f87abd8-exec.log",
  "signal": "SIGTERM",
  "canceledBy": null,
  "sandbox": "none",
  "reason": "timed out after 1000ms; ended with SIGTERM",
  "runId": "20261130T191221-0f87abd8"
}
[exit 124]
$ warren exec cart ls -la
warren: \`warren exec\` would read "-la" as its own option, not as part of the command; nothing was run.
  hint: Put the command after \`--\`: warren exec cart -- ls -la (warren's own options, such as --timeout, go before \`--\`).
[exit 2]`,
    see: [['Execution: bounded endings', '../design/execution.md#warren-exec-and-bounded-endings'], ['Ports and names', '../design/execution.md#ports-and-names'], ['Why the command goes after `--`', '../design/workspaces.md#moving-around']],
  },
  run: {
    json: `// as exec, and the agent and its conversation
{ exitCode; signal; timedOut; canceledBy; durationMs; log; sandbox; reason; runId;
  agent: string;
  session: string | null }   // claude, codex, gemini: the session \`--resume\` continues; null for others
// --review: also the comments it sent, resolved when the agent exited 0
{ ...; comments: { id: number; state: 'open' | 'resolved' }[] }`,
    exit: [
      [0, "the agent's own exit status is warren's"],
      [124, 'the agent ran past `--timeout`'],
      [141, "warren's output closed, and warren ended the agent (as `exec`)"],
      [1, 'refused before anything ran: an unknown agent, an agent of warren.yaml not trusted yet, no conversation to `--resume`, `--review` with no open comment, the task locked or in the wrong state, the policy or sandbox refused'],
      [2, 'bad input: not exactly one of `--prompt`, `--prompt-file` and `--review`, neither `--agent` nor `--resume`, an unreadable prompt file, a prompt with a NUL byte for an agent that takes it in argv, an invalid `--timeout`'],
    ],
    errors: ['AGENT_UNKNOWN', 'AGENT_NO_SESSION', 'UNTRUSTED_COMMANDS', 'USAGE', 'NOTHING_TO_REVIEW', 'LOCK_HELD', 'TASK_STATE', 'POLICY_INVALID', 'SANDBOX_UNAVAILABLE', 'DURATION_INVALID'],
    example: `$ warren run cart --agent echo-agent --prompt '-n "quoted" $HOME'
-n "quoted" $HOME
[exit 0]
$ warren run cart --agent nope --prompt hi
warren: no agent named "nope"; nothing was run.
  hint: Use one of aider, claude, codex, echo-agent, gemini, or add it under \`agents:\` in warren.yaml.
[exit 1]
$ warren --json run cart --agent claude --prompt "Add a cart, then show where you are."   # the real claude 2.1.328, against a scripted model server
scripted turn done
{
  "exitCode": 0,
  "timedOut": false,
  "durationMs": 10519,
  "log": "/tmp/warren-docs-agents/home/logs/shop-1061e4e954/cart/20261130T211234-b67f2313-agent.log",
  "signal": null,
  "canceledBy": null,
  "sandbox": "none",
  "reason": null,
  "runId": "20261130T211234-b67f2313",
  "agent": "claude",
  "session": "879577ad-3cda-4700-9533-9ab6a0949352"
}
[exit 0]
$ warren run cart --resume --prompt "Now test it."
ok
[exit 0]
$ warren run cart --resume --agent codex --prompt hi
warren: task cart has no conversation with codex to resume; nothing was run.
  hint: Start one with \`warren run cart --agent codex --prompt …\`.
[exit 1]
$ warren run cart --agent echo-agent --review
warren: sent 1 comment(s) to echo-agent; resolved
A reviewer left 1 comment on your changes in this workspace. Address each one: change the code where it asks for a change. Line numbers are those of the files as they are now, unless a comment says it is about a removed line.

1. cart.js:1
export a function that adds to it

\`\`\`diff
@@ -0,0 +1,1 @@
+export const cart = [];
\`\`\`
[exit 0]
$ warren comments cart
#  STATE     WHERE      COMMENT
1  resolved  cart.js:1  export a function that adds to it
2  resolved  app.js:1   say hello to the cart
[exit 0]`,
    see: [['Agents', '../design/execution.md#agents'], ['Using warren with Claude Code, Codex and Gemini', '../agents.md'], ['Continuing a conversation', '../agents.md#continuing-a-conversation-warren-run---resume'], ['Reviewing a task', '../design/review.md']],
  },
  comment: {
    json: `{
  id: number;                     // the comment's number (\`comments --resolve N\`)
  taskId: string; path: string; line: number;
  side: 'new' | 'old';            // new: the line as the workspace has it; old (--old): a removed line, numbered as in the base
  body: string;
  hunk: string;                   // the part of the diff it was made on (the file's own lines for an unchanged one)
  state: 'open' | 'resolved'; createdAt: string; resolvedAt: string | null;
  sentRun: string | null;         // the agent run that last received it
}`,
    exit: [[0, 'recorded'], [1, 'no such task'], [2, 'bad input: not FILE:LINE, a path outside the workspace, a line in neither the diff nor the file, an empty comment']],
    errors: ['USAGE', 'TASK_NOT_FOUND'],
    example: `$ warren comment cart cart.js:1 export a function that adds to it
comment 1 on cart.js:1 (open)
@@ -0,0 +1,1 @@
+export const cart = [];
[exit 0]
$ warren --json comment cart app.js:1 'say hello to the cart'
{
  "id": 2,
  "taskId": "cart",
  "path": "app.js",
  "line": 1,
  "side": "new",
  "body": "say hello to the cart",
  "hunk": "@@ -1,1 +1,1 @@ (unchanged)\\n console.log(\\"hello\\");",
  "state": "open",
  "createdAt": "2026-11-30T21:47:37.461Z",
  "resolvedAt": null,
  "sentRun": null
}
[exit 0]`,
    see: [['Reviewing a task', '../design/review.md']],
  },
  comments: {
    json: `// the task's comments, oldest first (after --resolve / --reopen)
{ id; taskId; path; line; side; body; hunk; state: 'open' | 'resolved'; createdAt; resolvedAt; sentRun }[]`,
    exit: [[0, 'listed (and changed)'], [1, 'no such task'], [2, 'bad input: a comment number that is not the task\'s']],
    errors: ['USAGE', 'TASK_NOT_FOUND'],
    example: `$ warren comments cart
#  STATE  WHERE      COMMENT
1  open   cart.js:1  export a function that adds to it
2  open   app.js:1   say hello to the cart
[exit 0]
$ warren --json comments cart --resolve 2
[
  {
    "id": 1,
    "taskId": "cart",
    "path": "cart.js",
    "line": 1,
    "side": "new",
    "body": "export a function that adds to it",
    "hunk": "@@ -0,0 +1,1 @@\\n+export const cart = [];",
    "state": "open",
    "createdAt": "2026-11-30T21:47:36.126Z",
    "resolvedAt": null,
    "sentRun": null
  },
  {
    "id": 2,
    "taskId": "cart",
    "path": "app.js",
    "line": 1,
    "side": "new",
    "body": "say hello to the cart",
    "hunk": "@@ -1,1 +1,1 @@ (unchanged)\\n console.log(\\"hello\\");",
    "state": "resolved",
    "createdAt": "2026-11-30T21:47:37.461Z",
    "resolvedAt": "2026-11-30T21:47:38.692Z",
    "sentRun": null
  }
]
[exit 0]`,
    see: [['Reviewing a task', '../design/review.md']],
  },
  setup: {
    json: `{
  state: 'ready' | 'setup_failed' | 'landed';
  log: string | null;
  results: { id: string; exitCode: number | null; timedOut: boolean; required: boolean; durationMs: number; reason: string | null }[];
}`,
    exit: [[0, 'setup passed; a `setup_failed` task is `ready` again'], [1, 'setup failed (the task stays `setup_failed`), or refused: the task is locked or being removed, or the commands are not trusted'], TASK_EXIT_2],
    errors: ['TASK_STATE', 'LOCK_HELD', 'TASK_NOT_FOUND', 'UNTRUSTED_COMMANDS'],
    example: `$ warren setup cart
setting up cart on port 20000
setup passed; cart is ready (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191224-8f92a8bb-setup.log)
[exit 0]`,
    see: [['Setup, verify, teardown', '../design/execution.md#setup-verify-teardown']],
  },
  verify: {
    json: `{
  passed: boolean;                 // false when a required command failed or timed out
  log: string | null;
  results: { id: string; exitCode: number | null; timedOut: boolean; required: boolean; durationMs: number; reason: string | null }[];
}`,
    exit: [[0, 'every required command passed (optional ones may fail)'], [1, 'a required command failed, or refused: the task is locked or not runnable, or the commands are not trusted'], TASK_EXIT_2],
    errors: ['TASK_STATE', 'LOCK_HELD', 'TASK_NOT_FOUND', 'UNTRUSTED_COMMANDS'],
    example: `$ warren verify cart
hello
verify passed (log /tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191225-20b49583-verify.log)
  pass test
  FAIL lint (optional)
[exit 0]
$ warren --json verify cart
hello
{
  "passed": true,
  "log": "/tmp/warren-docs-5hhMmU/home/logs/shop-8a05b0aba1/cart/20261130T191225-aa85c260-verify.log",
  "results": [
    {
      "id": "test",
      "exitCode": 0,
      "timedOut": false,
      "required": true,
      "durationMs": 265,
      "reason": null
    },
    {
      "id": "lint",
      "exitCode": 1,
      "timedOut": false,
      "required": false,
      "durationMs": 61,
      "reason": null
    }
  ]
}
[exit 0]`,
    see: [['Setup, verify, teardown', '../design/execution.md#setup-verify-teardown']],
  },
  trust: {
    json: `{
  trusted: boolean;                // true: recorded now, earlier, or the set is empty
  hash: string;                    // sha256 of the set's canonical form
  commands: { kind: 'setup' | 'verify' | 'teardown' | 'agent'; id: string; run: string | string[]; prompt?: 'argv' | 'stdin' | 'file' }[];
  trustedAt: string | null;        // when this user last trusted a set for this repository
  changed?: { kind; id; run; prompt? }[]; // not trusted: what is new or changed since the last trusted set
}`,
    exit: [
      [0, 'the set is trusted: now (`--yes`, `--hash`, or y at the question), before, or it is empty'],
      [1, 'not trusted: answered no, or no terminal to ask and no `--yes`; or `--hash` names another set. Nothing was recorded'],
    ],
    errors: ['UNTRUSTED_COMMANDS', 'CONFIG_INVALID', 'NOT_A_REPO'],
    example: `$ warren new feat cart
warren: this repository's warren.yaml asks warren to run commands, and you have not trusted them yet: setup hello: echo setting up $WARREN_TASK_ID on port $WARREN_PORT. Nothing was created; \`warren new --no-setup\` creates the workspace without running them.
  hint: Review them with \`warren trust\`, which shows the whole set and records your trust.
[exit 1]
$ warren trust
this repository's commands (its main checkout's warren.yaml), sha256 7c3a296897cf6f4ab8b7464c19114f154cfb1dadd5e5db8a29635808898440e8:
KIND    ID          RUNS (a string with sh -c, a list as argv)
setup   hello       echo setting up $WARREN_TASK_ID on port $WARREN_PORT
verify  test        node app.js
verify  lint        ["sh","-c","grep -q TODO app.js"]
agent   echo-agent  ["cat"]  (prompt: stdin)
not trusted; nothing was recorded. Run \`warren trust --yes\` (or \`--hash 7c3a296897cf6f4ab8b7464c19114f154cfb1dadd5e5db8a29635808898440e8\`) once you have read them.
[exit 1]
$ warren --json trust --yes
{
  "trusted": true,
  "hash": "7c3a296897cf6f4ab8b7464c19114f154cfb1dadd5e5db8a29635808898440e8",
  "commands": [
    {
      "kind": "setup",
      "id": "hello",
      "run": "echo setting up $WARREN_TASK_ID on port $WARREN_PORT"
    },
    {
      "kind": "verify",
      "id": "test",
      "run": "node app.js"
    },
    {
      "kind": "verify",
      "id": "lint",
      "run": [
        "sh",
        "-c",
        "grep -q TODO app.js"
      ]
    },
    {
      "kind": "agent",
      "id": "echo-agent",
      "run": [
        "cat"
      ],
      "prompt": "stdin"
    }
  ],
  "trustedAt": "2026-11-30T20:31:20.614Z"
}
[exit 0]`,
    see: [['Trust: what a repository can and cannot make warren do', '../design/trust.md']],
  },
  checkpoint: {
    json: `{
  commit: string | null;           // null when there was nothing to commit
  head: string; branch: string;
  nothingToCommit: boolean;
  unstaged: string[];              // provisioned paths staged by hand, taken back out
  warnings: string[];              // shared-git changes that were not refused
}`,
    exit: [[0, 'committed, or nothing to commit'], [1, 'refused: the hooks changed (`--accept-hooks`), the lock is held, a hook refused the commit'], TASK_EXIT_2],
    errors: ['HOOKS_CHANGED', 'LOCK_HELD', 'COMMAND_FAILED', 'TASK_STATE', 'OWNERSHIP_MISMATCH', 'TASK_NOT_FOUND'],
    example: `$ warren checkpoint cart -m 'a cart'
committed fff96d64a3f4 on feat/cart
[exit 0]
$ warren checkpoint cart
nothing to commit; feat/cart stays at fff96d64a3f4
[exit 0]
$ warren --json checkpoint cart
{
  "commit": null,
  "head": "fff96d64a3f4b6a5916ee37a5bce13dbfddda0ca",
  "branch": "feat/cart",
  "nothingToCommit": true,
  "unstaged": [],
  "warnings": []
}
[exit 0]`,
    see: [['Landing', '../design/landing.md'], ['The shared parts of git, watched', '../design/landing.md#the-shared-parts-of-git-watched']],
  },
  land: {
    json: `// landed (after waiting in the merge queue):
{
  state: 'landed'; id: string; entry: number;  // entry: its row in the queue
  commit: string; tree: string;    // the squash commit on the base
  base: string; baseBefore: string;
  excluded: string[];              // every path left out
  exclusions: { path: string; how: 'created' | 'changed' | 'deleted'; why: 'protected' | 'provisioned' }[];
  rebased: boolean;                // the base had moved; the squash was merged onto it
  landed: true;
  checkoutUpdated: string | null;  // the checkout of the base that followed
  warnings: string[];
  push: { remote: string; ref: string; commit: string; ok: boolean; error?: string } | null;
}
// --no-wait: { state: 'queued'; id: string; entry: number; position: number }
// bounced: an error (exit 1) whose code says why (GATE_FAILED, LAND_CONFLICT, HOOKS_CHANGED…)
//   and details { state: 'bounced', entry, reason, log }
// --branch-only: { state: 'built', ...the squash, landed: false, push }`,
    exit: [
      [0, 'landed (or joined the queue with `--no-wait`, or built and pushed for review with `--branch-only`)'],
      [1, 'refused before joining the queue (uncommitted work, a conflict, changed hooks, nothing to land…), bounced from the queue (the reason and, for a gate, its log), or landed and the push failed'],
      [2, 'bad input: an invalid ID, a remote name that is not valid or does not exist'],
    ],
    errors: ['GATE_FAILED', 'LAND_CONFLICT', 'WORKSPACE_DIRTY', 'NOTHING_TO_LAND', 'HOOKS_CHANGED', 'CHECKOUT_DIRTY', 'PROTECTED_POLICY_INVALID', 'BASE_UNKNOWN', 'TASK_STATE', 'OWNERSHIP_MISMATCH', 'LOCK_HELD'],
    example: `$ cat warren.yaml     # (another repository: a gate that allows one plugin)
verify:
  - { id: one-plugin, run: "test $(ls plugins | grep -v README | wc -l) -le 1" }
$ warren land search --no-wait
search joined the merge queue at position 1; see \`warren queue\`
[exit 0]
$ warren land cart
warren: merge queue: gate one-plugin on cart (run 1)…
warren: task cart bounced from the merge queue: the gate failed on cart integrated onto 8baaba6931e0: one-plugin (exit 1). Nothing was landed; the task, its branch and the base are as they were.
  hint: Read the gate's log (/tmp/qd-home/logs/qd-e65a5112bb/queue-mx3qdtah-2541/20261130T203900-b1e809d6-verify.log), fix the task, \`warren checkpoint cart\`, and land again.
[exit 1]
$ cd ../shop     # the repository of the other examples: its gate is the required verify command, test
$ warren land cart -m 'feat: a cart'
warren: merge queue: gate test on cart (run 1)…
warren: merge queue: landed cart (85e92162d91e) on main
warren: left out protected .env.testing (created); the workspace keeps its copy
landed cart on main as 85e92162d91e
excluded: .env.testing
/tmp/warren-docs-iqVKjQ/shop follows main
[exit 0]
$ warren --json land login
{
  "error": {
    "code": "NOTHING_TO_LAND",
    "message": "task login has nothing that main lacks; nothing was changed.",
    "hint": "Commit work with \`warren checkpoint login\` first.",
    "details": {
      "excluded": []
    }
  }
}
[exit 1]
$ echo 'console.log("hi");' > /tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/login/app.js
$ warren checkpoint login -m 'say hi'
committed e6e80c167b5d on fix/login
[exit 0]
$ warren --json land login --push
warren: merge queue: gate test on login (run 1)…
warren: merge queue: landed login (c2e4346fdf0b) on main
{
  "state": "landed",
  "id": "login",
  "entry": 2,
  "commit": "c2e4346fdf0b2d2c803ffa3d5e014b6391ace723",
  "tree": "c24d4ade04a727663ee31c7a6253b44b03bd14a8",
  "base": "main",
  "baseBefore": "85e92162d91eab742bc792559e83316386bb2806",
  "excluded": [],
  "exclusions": [],
  "rebased": true,
  "checkoutUpdated": "/tmp/warren-docs-iqVKjQ/shop",
  "warnings": [],
  "landed": true,
  "push": {
    "remote": "origin",
    "ref": "refs/heads/main",
    "commit": "c2e4346fdf0b2d2c803ffa3d5e014b6391ace723",
    "ok": true
  }
}
[exit 0]
$ git log --format="%h %s" -3
c2e4346 say hi
85e9216 feat: a cart
f4ca5df initial`,
    see: [['Landing: what `land` does, in order', '../design/landing.md#what-land-does']],
  },
  queue: {
    json: `{
  id: string;                // the task
  entry: number;             // its row in the queue (the order it joined)
  position: number | null;   // 1 = next; null once landed, bounced or removed
  state: 'queued' | 'testing' | 'landed' | 'bounced' | 'removed';
  since: string;             // when it entered that state
  reason: string | null; code: string | null; log: string | null;  // why it bounced (and the gate's log)
  commit: string | null;     // the squash commit, when landed
  gateTask: string | null;   // the integration workspace of its latest gate run (its log: /api/log?id=…)
}[]`,
    exit: [
      [0, 'listed (when entries wait and no warren works the queue, a background one is started to resume it)'],
    ],
    errors: ['NOT_A_REPO'],
    example: `$ warren land search --no-wait
search joined the merge queue at position 1; see \`warren queue\`
[exit 0]
$ warren land cart --no-wait
cart joined the merge queue at position 2; see \`warren queue\`
[exit 0]
$ warren queue
POS  ID      STATE    SINCE   DETAIL
-    search  landed   1s ago  8baaba6931e0
1    cart    testing  0s ago
[exit 0]
$ warren queue
POS  ID      STATE    SINCE    DETAIL
-    search  landed   15s ago  8baaba6931e0
-    cart    bounced  13s ago  GATE_FAILED: the gate failed on cart integrated onto 8baaba6931e0: one-plugin (exit 1)
[exit 0]`,
    see: [['The merge queue', '../design/merge-queue.md']],
  },
  'queue rm': {
    json: `{ removed: true; id: string }`,
    exit: [
      [0, 'the task left the queue'],
      [1, 'it is not in the queue, or the queue is testing it right now'],
    ],
    errors: ['TASK_STATE', 'TASK_NOT_FOUND'],
    example: `$ cat warren.yaml     # (a repository whose gate takes 3 s, one task at a time)
verify:
  - { id: slow, run: "sleep 3" }
land: { batch: 1 }
$ warren land api --no-wait
api joined the merge queue at position 1; see \`warren queue\`
[exit 0]
$ warren land docs --no-wait
docs joined the merge queue at position 2; see \`warren queue\`
[exit 0]
$ warren queue rm docs
docs left the merge queue
[exit 0]
$ warren queue rm docs
warren: task docs is not in the merge queue; nothing was changed.
  hint: See \`warren queue\`.
[exit 1]
$ warren queue
POS  ID    STATE    SINCE   DETAIL
-    api   landed   5s ago  23b3983d49fb
-    docs  removed  6s ago
[exit 0]`,
    see: [['The merge queue', '../design/merge-queue.md']],
  },
  audit: {
    json: `{ id: string; path: string; sections: { name: 'git' | 'hooks' | 'provisioning' | 'ports' | 'compose'; data: unknown }[] }`,
    exit: [[0, 'the report was read (it changes nothing)'], [1, 'no such task'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'PATH_ESCAPE'],
    example: `$ warren audit login
audit of task login (fix/login) at /tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/login

[git]
  private git dir: /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login
  common git dir:  /tmp/warren-docs-5hhMmU/shop/.git (shared by every worktree of the repository)
  own     HEAD             /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/HEAD
  own     index            /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/index
  own     logs/HEAD        /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/logs/HEAD
  shared  refs             /tmp/warren-docs-5hhMmU/shop/.git/refs
  shared  packed-refs      /tmp/warren-docs-5hhMmU/shop/.git/packed-refs
  shared  objects          /tmp/warren-docs-5hhMmU/shop/.git/objects
  shared  config           /tmp/warren-docs-5hhMmU/shop/.git/config
  own     config.worktree  /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/config.worktree (not read: extensions.worktreeConfig is off, so every setting goes to the shared config)
  shared  hooks            /tmp/warren-docs-5hhMmU/shop/.git/hooks
  shared  info/exclude     /tmp/warren-docs-5hhMmU/shop/.git/info/exclude
  own     FETCH_HEAD       /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/FETCH_HEAD
  own     ORIG_HEAD        /tmp/warren-docs-5hhMmU/shop/.git/worktrees/login/ORIG_HEAD

[hooks]
  hooks dir: /tmp/warren-docs-5hhMmU/shop/.git/hooks
  core.hooksPath: (unset)
  hooks: (none)
  drift: none since 2026-11-30T19:12:19.018Z

[provisioning]
  node_modules: cow (overlay), isolated; 4 entries, 56 B
  .env: copy (cp -a), isolated; 1 entries, 12 B

[ports]
  ports: block 20010-20019
    no process of this task is listening

[compose]
  no bind mounts in docker-compose.yml / compose.yaml files
[exit 0]`,
    see: [['The audit report, section by section', '../design/landing.md#warren-audit-id-output']],
  },
  'policy keygen': {
    json: `{ privateKey: string; publicKey: string }   // $WARREN_HOME/policy/signing.key (0600), trusted.pub`,
    exit: [[0, 'the key pair was written'], [1, 'a key already exists (`--force` replaces it)']],
    errors: ['POLICY_INVALID'],
    example: `$ warren policy keygen
private key /tmp/warren-docs-5hhMmU/home/policy/signing.key
trusted public key /tmp/warren-docs-5hhMmU/home/policy/trusted.pub
[exit 0]`,
    see: [['Signed policy', '../design/execution.md#signed-policy']],
  },
  'policy sign': {
    json: `{ signature: string; expires: string }   // signature: the path of FILE.sig`,
    exit: [[0, 'signed'], [1, 'no signing key, or the file is not a valid policy']],
    errors: ['POLICY_INVALID'],
    example: `$ warren policy sign warren.policy.yaml
signed: /tmp/warren-docs-5hhMmU/shop/warren.policy.yaml.sig (expires 2027-06-30T00:00:00Z)
[exit 0]`,
    see: [['Signed policy', '../design/execution.md#signed-policy']],
  },
  'policy verify': {
    json: `{ valid: true; file: string; expires: string; rules: { tasks: string; sandbox: string[]; network: boolean }[] }`,
    exit: [[0, 'the policy is valid and signed by the trusted key'], [1, 'it is not: changed after signing, another signer, expired, no trusted key, unparsable']],
    errors: ['POLICY_INVALID'],
    example: `$ warren policy verify
valid: /tmp/warren-docs-5hhMmU/shop/warren.policy.yaml (expires 2027-06-30T00:00:00Z, 1 rule(s))
[exit 0]
$ warren --json policy verify
{
  "valid": true,
  "file": "/tmp/warren-docs-5hhMmU/shop/warren.policy.yaml",
  "expires": "2027-06-30T00:00:00Z",
  "rules": [
    {
      "tasks": "*",
      "sandbox": [
        "none",
        "bwrap"
      ],
      "network": false
    }
  ]
}
[exit 0]
$ echo "# edited" >> warren.policy.yaml
$ warren policy verify
warren: /tmp/warren-docs-5hhMmU/shop/warren.policy.yaml does not match its signature: it was changed after signing, or signed by another key; nothing was run.
  hint: Review the change and sign it again with \`warren policy sign\`.
[exit 1]`,
    see: [['Signed policy', '../design/execution.md#signed-policy']],
  },
  serve: {
    json: `{ url: string; host: string; port: number; pid: number; token: string }   // printed once listening; the token is this run's`,
    exit: [
      [0, 'stopped with ctrl-c (SIGINT) or SIGTERM, after the running action answered'],
      [2, 'refused before listening: a non-loopback `--host` without `--allow-remote`, a `--host` this machine does not have or cannot resolve, a bad `--port`, a port in use, `WARREN_HOME` of another user'],
    ],
    errors: ['USAGE', 'HOME_NOT_OWNED'],
    example: `$ warren serve --port 0
warren dashboard: http://127.0.0.1:43399/
(ctrl-c to stop)
^C
[exit 0]
$ warren --json serve --port 0
{
  "url": "http://127.0.0.1:39093/",
  "host": "127.0.0.1",
  "port": 39093,
  "pid": 30166,
  "token": "791683f081f05a3cf46c2e1be9f63d189f1a7e7f04b265f0f71425417866f8ef"
}
^C
[exit 0]
$ warren serve --host 0.0.0.0
warren: --host 0.0.0.0 is not a loopback address; the dashboard can remove workspaces, so it listens on 127.0.0.1 unless you say otherwise. Nothing was started.
  hint: Add --allow-remote if other machines on this network should reach it (they get full control), or drop --host.
[exit 2]`,
    see: [['Dashboard', '../design/dashboard.md'], ['Security model', '../design/dashboard.md#security-model'], ['Scripting the dashboard', '../design/dashboard.md#scripting-the-dashboard']],
  },
  mcp: {
    json: '// none: stdout carries the MCP protocol (JSON-RPC over stdio). Each tool answers with the JSON the CLI prints; a refusal is a tool error whose text is the CLI\'s --json error.',
    exit: [
      [0, 'the client closed stdin (calls already sent are answered first)'],
      [2, 'refused before serving: not a repository, `WARREN_HOME` of another user'],
    ],
    errors: ['NOT_A_REPO', 'HOME_NOT_OWNED'],
    example: "$ printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}' '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}' '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"list\",\"arguments\":{}}}' '{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\",\"arguments\":{\"id\":\"nope\"}}}' | warren mcp\n{\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{\"listChanged\":true}},\"serverInfo\":{\"name\":\"warren\",\"version\":\"0.1.0\"}},\"jsonrpc\":\"2.0\",\"id\":1}\n{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": \\\"TASK_NOT_FOUND\\\",\\n    \\\"message\\\": \\\"no task nope in this repository; nothing was changed.\\\",\\n    \\\"hint\\\": \\\"See `warren list`.\\\"\\n  }\\n}\"}],\"isError\":true},\"jsonrpc\":\"2.0\",\"id\":3}\n{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"[\\n  {\\n    \\\"id\\\": \\\"cart\\\",\\n    \\\"type\\\": \\\"feat\\\",\\n    \\\"branch\\\": \\\"feat/cart\\\",\\n    \\\"path\\\": \\\"/tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/cart\\\",\\n    \\\"base\\\": \\\"main\\\",\\n    \\\"state\\\": \\\"ready\\\",\\n    \\\"createdAt\\\": \\\"2026-11-30T21:12:32.391Z\\\"\\n  }\\n]\"}]},\"jsonrpc\":\"2.0\",\"id\":2}\n[exit 0]\n$ claude mcp add warren -- warren mcp        # register it with Claude Code (in the repository)\nAdded stdio MCP server warren with command: warren mcp to local config\n$ codex mcp add warren -- warren --repo /path/to/repo mcp     # with Codex (global: name the repository)\nAdded global MCP server 'warren'.",
    see: [['warren as an MCP server', '../agents.md#warren-as-an-mcp-server-warren-mcp'], ['Benchmarks', '../benchmarks.md#mcp-npm-run-bench-mcp']],
  },
  'hooks install': {
    json: `{
  file: string;                                   // <repo>/.claude/settings.local.json
  added: ('WorktreeCreate' | 'WorktreeRemove')[];  // empty: both were there already
  hooks: { WorktreeCreate: unknown; WorktreeRemove: unknown };   // those keys as written
}`,
    exit: [
      [0, 'the hooks are there (written now, or already)'],
      [2, 'refused, nothing changed: an agent other than `claude`, the settings file is not JSON, or another command already answers WorktreeCreate'],
    ],
    errors: ['CONFIG_INVALID', 'USAGE', 'NOT_A_REPO'],
    example: `$ warren hooks install claude
wrote WorktreeCreate and WorktreeRemove into /tmp/warren-docs-agents/shop/.claude/settings.local.json:
{
  "hooks": {
    "WorktreeCreate": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/node /work/wt/agents/bin/warren.js hook claude-create"
          }
        ]
      }
    ],
    "WorktreeRemove": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/node /work/wt/agents/bin/warren.js hook claude-remove"
          }
        ]
      }
    ]
  }
}
[exit 0]
$ warren --json hooks install claude
{
  "file": "/tmp/warren-docs-agents/shop/.claude/settings.local.json",
  "added": [],
  "hooks": {
    "WorktreeCreate": [
…
[exit 0]`,
    see: [["Claude Code's worktrees", '../agents.md#claude-codes-worktrees-warren-hooks-install-claude']],
  },
  'hook claude-create': {
    json: '{ id: string; path: string; created: boolean }   // created: false when a ready task of that name was reused. Without --json, stdout is the path alone (what Claude Code reads).',
    exit: [
      [0, 'the workspace is ready; its path is on stdout'],
      [1, 'refused (nothing created), or its setup failed (the task is kept in `setup_failed`): Claude Code shows the message'],
      [2, 'a payload that is not JSON, names no worktree, or leaves no usable task ID; an invalid `--type`'],
    ],
    errors: ['USAGE', 'ID_INVALID', 'TASK_EXISTS', 'BRANCH_EXISTS', 'BASE_UNKNOWN', 'SETUP_FAILED', 'CREATE_FAILED'],
    example: `$ echo '{"session_id":"0b3c9a54-…","cwd":"/tmp/warren-docs-agents/shop","hook_event_name":"WorktreeCreate","name":"fix-login"}' | warren hook claude-create
setting up fix-login on port 20010
warren: warn: risk medium (setup hello binds a port); recommended sandbox bwrap, this task uses none
/tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/fix-login
[exit 0]`,
    see: [["Claude Code's worktrees", '../agents.md#claude-codes-worktrees-warren-hooks-install-claude']],
  },
  'hook claude-remove': {
    json: '// as rm',
    exit: [
      [0, 'removed'],
      [1, 'refused, nothing removed: work would be lost, or the path is not a warren workspace of this repository'],
      [2, 'a payload that is not JSON or names no worktree_path'],
    ],
    errors: ['WORKSPACE_DIRTY', 'TASK_NOT_FOUND', 'LOCK_HELD', 'USAGE'],
    example: `$ echo '{"hook_event_name":"WorktreeRemove","worktree_path":"/tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/fix-login"}' | warren hook claude-remove
warren: task fix-login has 1 uncommitted change(s) that removing would lose: ?? draft.txt. Nothing was removed.
  hint: Commit them (\`warren checkpoint fix-login\`) or discard them in /tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/fix-login, then run \`warren rm fix-login\` again.
[exit 1]
$ rm draft.txt; echo '{"hook_event_name":"WorktreeRemove","worktree_path":"/tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/fix-login"}' | warren hook claude-remove
removed fix-login; kept branch feat/fix-login
[exit 0]`,
    see: [["Claude Code's worktrees", '../agents.md#claude-codes-worktrees-warren-hooks-install-claude']],
  },
  completion: {
    json: `{ shell: 'bash' | 'zsh' | 'fish'; script: string }`,
    exit: [[0, 'the script is printed'], [2, 'a shell it has no script for']],
    errors: ['USAGE'],
    example: `$ bash -c 'source <(warren completion bash); complete -p warren'
complete -F _warren warren
$ warren completion zsh | head -3
#compdef warren
# warren completion for zsh. Load it after compinit with: source <(warren completion zsh)
_warren_spec() {`,
    see: [['Moving around: path, completion, exec', '../design/workspaces.md#moving-around']],
  },
};
