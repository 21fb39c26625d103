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
// TaskState: creating | ready | setup_failed | landed | removing | remove_failed`,
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
[exit 0]`,
    see: [['Task states', '../design/workspaces.md#list-and-show']],
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
    path: string; mode: 'cow' | 'copy' | 'hardlink' | 'share'; isolated: boolean;
    changed: { path: string; change: 'added' | 'modified' | 'deleted' }[];   // at most 500
    changedCount: number;
    affectsAllSharers?: true;                           // share
    writtenThrough?: string[];                          // hardlink: in-place writes that reached the main checkout
    unknown?: string;                                   // why the changes could not be read
  }[];
  stale: boolean;                                       // a lockfile changed since the tree was provisioned
  staleLockfiles: { path: string; provisionedFrom: string; now: string | null }[];
}`,
    exit: [[0, 'the status was read'], [1, 'no such task, or a layer could not be mounted again'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'PATH_ESCAPE', 'PROVISION_FAILED'],
    example: `$ warren status cart
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
      "changedCount": 1
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
  rm: {
    json: `{ removed: true; id: string; branch: string; branchDeleted: boolean; unlandedCommits: number;
  folderMissing?: true }  // the folder was already missing: only the records went`,
    exit: [
      [0, 'removed (and, with `--delete-branch`, the branch deleted); a task whose folder was already missing is forgotten (`folderMissing`), its branch kept'],
      [1, 'refused: uncommitted work, unlanded commits, a foreign mount, records that disagree, a workspace off its branch or mid-rebase/merge, a branch checked out elsewhere (`--delete-branch`); or removal was incomplete (`remove_failed`)'],
      TASK_EXIT_2,
    ],
    errors: ['WORKSPACE_DIRTY', 'BRANCH_UNLANDED', 'BRANCH_CHECKED_OUT', 'WORKSPACE_MOUNTED', 'OWNERSHIP_MISMATCH', 'TASK_STATE', 'PATH_ESCAPE', 'REMOVE_INCOMPLETE', 'LOCK_HELD', 'TASK_NOT_FOUND'],
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
[exit 0]`,
    see: [['Workspaces: `rm`', '../design/workspaces.md#rm'], ['After landing', '../design/landing.md#after-landing-rm']],
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
//                    linked?, filled?, snapshot?, lower?, upper?, work?, namespaced?, fuse?, manifest? }`,
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
      [2, 'bad input: no command after `--`, an argument with a NUL byte, an invalid `--timeout`'],
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
[exit 124]`,
    see: [['Execution: bounded endings', '../design/execution.md#warren-exec-and-bounded-endings'], ['Ports and names', '../design/execution.md#ports-and-names']],
  },
  run: {
    json: `// as exec
{ exitCode; signal; timedOut; canceledBy; durationMs; log; sandbox; reason; runId }`,
    exit: [
      [0, "the agent's own exit status is warren's"],
      [124, 'the agent ran past `--timeout`'],
      [141, "warren's output closed, and warren ended the agent (as `exec`)"],
      [1, 'refused before anything ran: an unknown agent, an agent of warren.yaml not trusted yet, the task locked or in the wrong state, the policy or sandbox refused'],
      [2, 'bad input: both or neither of `--prompt` and `--prompt-file`, an unreadable prompt file, a prompt with a NUL byte for an agent that takes it in argv, an invalid `--timeout`'],
    ],
    errors: ['AGENT_UNKNOWN', 'UNTRUSTED_COMMANDS', 'USAGE', 'LOCK_HELD', 'TASK_STATE', 'POLICY_INVALID', 'SANDBOX_UNAVAILABLE', 'DURATION_INVALID'],
    example: `$ warren run cart --agent echo-agent --prompt '-n "quoted" $HOME'
-n "quoted" $HOME
[exit 0]
$ warren run cart --agent nope --prompt hi
warren: no agent named "nope"; nothing was run.
  hint: Use one of aider, claude, codex, echo-agent, gemini, or add it under \`agents:\` in warren.yaml.
[exit 1]`,
    see: [['Agents', '../design/execution.md#agents']],
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
$ cd ../shop     # the repository of the other examples: its gate is the verify command \`test\`
$ warren land cart -m 'feat: a cart'
warren: merge queue: gate test on cart (run 1)…
warren: merge queue: landed cart (ae15254245d7) on main
warren: left out protected .env.testing (created); the workspace keeps its copy
landed cart on main as ae15254245d7
excluded: .env.testing
/tmp/warren-docs-5BwVX2/shop follows main
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
$ echo 'console.log("hi");' > /tmp/warren-docs-5BwVX2/home/worktrees/shop-1fc3eebf81/login/app.js
$ warren checkpoint login -m 'say hi'
committed 14a91b8809d4 on fix/login
[exit 0]
$ warren --json land login --push
warren: merge queue: gate test on login (run 1)…
warren: merge queue: landed login (a4733d1fbe5d) on main
{
  "state": "landed",
  "id": "login",
  "entry": 2,
  "commit": "a4733d1fbe5dcffa2fe2e96381ea9fe93d7ca4ec",
  "tree": "c24d4ade04a727663ee31c7a6253b44b03bd14a8",
  "base": "main",
  "baseBefore": "ae15254245d79f6668aba54a3b9f0819e43d8c13",
  "excluded": [],
  "exclusions": [],
  "rebased": true,
  "checkoutUpdated": "/tmp/warren-docs-5BwVX2/shop",
  "warnings": [],
  "landed": true,
  "push": {
    "remote": "origin",
    "ref": "refs/heads/main",
    "commit": "a4733d1fbe5dcffa2fe2e96381ea9fe93d7ca4ec",
    "ok": true
  }
}
[exit 0]
$ git log --format="%h %s" -3
a4733d1 fix: login
ae15254 feat: a cart
ca18460 initial`,
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
};
