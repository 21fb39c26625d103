import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for checkpoint, land, queue, audit: bringing work to the base (see src/cli/reference.ts). */
export const LANDING: Readonly<Record<string, CommandReference>> = {
  checkpoint: {
    json: `{
  commit: string | null;           // null when there was nothing to commit
  head: string; branch: string;
  nothingToCommit: boolean;
  unstaged: string[];              // provisioned paths staged by hand, taken back out
  warnings: string[];              // shared-git changes that were not refused
  hooks: { hook: string; ms: number }[]; // the commit hooks it ran, each timed
}`,
    exit: [
      [0, 'committed, or nothing to commit'],
      [
        1,
        "refused: the hooks changed (`--accept-hooks`), the lock is held, a hook refused the commit (the hooks run as commands of the task, in its sandbox), a link in the workspace's git directory",
      ],
      TASK_EXIT_2,
    ],
    errors: [
      'HOOKS_CHANGED',
      'LOCK_HELD',
      'COMMAND_FAILED',
      'WORKSPACE_TAMPERED',
      'TASK_STATE',
      'OWNERSHIP_MISMATCH',
      'TASK_NOT_FOUND',
    ],
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
  "warnings": [],
  "hooks": []
}
[exit 0]`,
    see: [
      ['Landing', '../design/landing.md'],
      ['The shared parts of git, watched', '../design/landing.md#the-shared-parts-of-git-watched'],
      ["The commit hooks run inside the task's boundary", '../design/trust.md#what-an-agent-can-and-cannot-do'],
    ],
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
      [
        1,
        'refused before joining the queue (uncommitted work, a conflict, changed hooks, nothing to land…), bounced from the queue (the reason and, for a gate, its log), or landed and the push failed',
      ],
      [2, 'bad input: an invalid ID, a remote name that is not valid or does not exist'],
    ],
    errors: [
      'GATE_FAILED',
      'LAND_CONFLICT',
      'WORKSPACE_DIRTY',
      'NOTHING_TO_LAND',
      'HOOKS_CHANGED',
      'CHECKOUT_DIRTY',
      'PROTECTED_POLICY_INVALID',
      'BASE_UNKNOWN',
      'TASK_STATE',
      'OWNERSHIP_MISMATCH',
      'LOCK_HELD',
    ],
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
    exit: [[0, 'listed (when entries wait and no warren works the queue, a background one is started to resume it)']],
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
    exit: [[0, 'the report was read (it changes nothing)'], TASK_EXIT_2],
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
};
