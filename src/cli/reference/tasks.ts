import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for new, list and show: making a task and finding it (see src/cli/reference.ts). */
export const TASKS: Readonly<Record<string, CommandReference>> = {
  new: {
    json: `{
  id: string; type: string; branch: string;      // branch is TYPE/ID
  path: string;                                  // the workspace
  base: string; baseCommit: string;
  state: 'ready' | 'setup_failed';
  ports?: { first: number; count: number };      // the task's port block
  risk?: { level: 'low' | 'medium' | 'high'; reasons: string[]; recommendedSandbox: 'none' | 'bwrap' };
  log?: string; setupOk?: boolean;               // when setup ran
  setupSkipped?: { id: string; why: string; ran?: { scripts: string[]; command: string; summary?: string } }[];  // install steps skipped: the provisioned tree matched the lockfile; ran: the root package's per-checkout scripts run instead
  warnings: { kind: string; level: string; message: string }[];  // everything recorded above info while creating
  services: { kind: string; message: string }[];  // what was made for services: template, database, process started
  provisionHint?: { paths: { path: string; mode: string }[]; lines: string[] };  // ignored node_modules/.env/venv nothing provisions: once per repository
}`,
    exit: [
      [0, 'the task is `ready`'],
      [
        1,
        'refused (nothing was created; e.g. setup commands not trusted yet), or setup failed: the task is kept in `setup_failed` with its log',
      ],
      [
        2,
        'bad input: an invalid type, ID, branch name, `--sandbox` or warren.yaml (a `worktree_root` it may not choose included); nothing was created',
      ],
    ],
    errors: [
      'ID_INVALID',
      'TYPE_INVALID',
      'BRANCH_INVALID',
      'TASK_EXISTS',
      'BRANCH_EXISTS',
      'WORKSPACE_EXISTS',
      'BASE_UNKNOWN',
      'BASE_DIVERGED',
      'CHECKOUT_DIRTY',
      'SANDBOX_REQUIRED',
      'PORTS_EXHAUSTED',
      'UNTRUSTED_COMMANDS',
      'CONFIG_INVALID',
      'CREATE_FAILED',
    ],
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
  ],
  "services": []
}
[exit 0]
$ warren new feat -- 'x; rm -rf ~'
warren: task ID "x; rm -rf ~" is not allowed: it must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (start with a letter or digit, at most 64 characters, no "..", not ending in ".lock"). Nothing was created.
  hint: Pick an ID such as T-123 or fix-login.
[exit 2]`,
    see: [
      ['Workspaces: what `new` guarantees', '../design/workspaces.md#what-new-guarantees'],
      ['Provisioning', '../design/provisioning.md'],
      ['Setup, ports, risk and sandbox', '../design/execution.md'],
    ],
  },
  list: {
    json: `{ id: string; type: string; branch: string; path: string; base: string; state: TaskState; createdAt: string;
  conflicts: { other: string; paths: string[] }[] }[]   // the conflict map as last computed (\`warren conflicts\`); other: a task, or '@base'
// TaskState: creating | ready | setup_failed | landed | removing | remove_failed
// --archived: what rm --discard saved, oldest first (a ref under refs/warren/archive/ warren did not make, that moved,
// or dated in the future is not listed: a warning on stderr says which and why)
{ id: string; ref: string; at: string;           // refs/warren/archive/<ID>/<UTC time>, and that time
  commit: string; tip: string; index: string;    // the archive, the branch tip it keeps, the index it kept
  type: string; branch: string; base: string; baseCommit: string;
  sandbox?: 'none' | 'bwrap' | 'container' }[]                  // the task's own sandbox (new --sandbox), which restore gives back`,
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
    "createdAt": "2026-11-30T19:12:17.909Z",
    "conflicts": []
  },
  {
    "id": "login",
    "type": "fix",
    "branch": "fix/login",
    "path": "/tmp/warren-docs-5hhMmU/home/worktrees/shop-8a05b0aba1/login",
    "base": "main",
    "state": "ready",
    "createdAt": "2026-11-30T19:12:18.779Z",
    "conflicts": []
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
    see: [
      ['Task states', '../design/workspaces.md#list-and-show'],
      ['Discarding and restoring', '../design/workspaces.md#discarding-and-restoring'],
    ],
  },
  show: {
    json: `{
  id: string; type: string; branch: string; path: string;
  base: string; baseCommit: string; state: TaskState; createdAt: string;
  data: object;            // what later stages recorded: provision, checkout, ports, risk, setup, verify, landed, services, …
  runner: {                // where its processes run and what holds them (\`warren audit\`'s "runner" section)
    runner: string;        // none | bwrap | container | ssh:NAME | k8s:NAME
    where: 'here' | 'host' | 'cluster'; sandbox: 'none' | 'bwrap' | 'container' | 'k8s';
    name: string | null; address: string | null; remotePath: string | null; pending: boolean;
    handle: string | null; boundary: string;   // handle: its container, or its claim in the cluster
  };
  services: {              // warren.yaml's services: as \`service start\` prints each
    name: string; kind: 'postgres' | 'redis' | 'run'; state: 'running' | 'stopped' | 'crashed' | 'absent' | 'external';
    url: string | null; port: number | null; log: string | null; exitCode?: number | null; database?: string; from?: string; cluster?: string; pod?: string;
  }[];
  events: { at: string; kind: string; level: 'info' | 'warn' | 'error'; message: string; [fact: string]: unknown }[];
}`,
    exit: [[0, 'the task exists'], TASK_EXIT_2],
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
    "message": "no task nope in this repository; nothing was changed.",
    "hint": "See \`warren list\`."
  }
}
[exit 2]`,
    see: [['Task states and events', '../design/workspaces.md#list-and-show']],
  },
};
