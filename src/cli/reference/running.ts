import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for exec, run, transcript, setup, verify, trust: what runs in a task (see src/cli/reference.ts). */
export const RUNNING: Readonly<Record<string, CommandReference>> = {
  exec: {
    json: `{
  exitCode: number | null; signal: string | null;
  timedOut: boolean; canceledBy: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGPIPE' | null;   // SIGPIPE: warren's output closed
  durationMs: number;
  log: string;                     // $WARREN_HOME/logs/<project>/<task>/<runId>-exec.log
  sandbox: 'none' | 'bwrap' | 'container';
  reason: string | null;           // why it did not succeed: timeout, cancel, output closed, a sandbox refusal, a mount
  runId: string;
}`,
    exit: [
      [0, "the command's own exit status is warren's"],
      [124, 'the command ran past `--timeout`; its whole process tree was ended'],
      [130, 'warren got SIGINT (143: SIGTERM, 129: SIGHUP) and ended the command'],
      [
        141,
        "warren's output closed (`warren exec … | head -1`: the reader went away) and warren ended the command, as a shell's SIGPIPE would",
      ],
      [
        1,
        'refused before anything ran: the task is locked, in the wrong state, the policy or sandbox refused, the command was not found',
      ],
      [
        127,
        "not root, a cow layer mounted only in the run's namespace: the command was not found there either (looked up after the mounts; it was not started)",
      ],
      [
        2,
        'bad input: no command, a word of the command that starts with `-` without `--` before the command, an argument with a NUL byte, an invalid `--timeout`',
      ],
    ],
    errors: [
      'LOCK_HELD',
      'TASK_STATE',
      'TASK_NOT_FOUND',
      'COMMAND_FAILED',
      'POLICY_INVALID',
      'SANDBOX_UNAVAILABLE',
      'PROVISION_FAILED',
      'DURATION_INVALID',
      'USAGE',
    ],
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
    see: [
      ['Execution: bounded endings', '../design/execution.md#warren-exec-and-bounded-endings'],
      ['Ports and names', '../design/execution.md#ports-and-names'],
      ['Why the command goes after `--`', '../design/workspaces.md#moving-around'],
    ],
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
      [
        1,
        'refused before anything ran: an agent of warren.yaml not trusted yet, no conversation to `--resume`, `--review` with no open comment, the task locked or in the wrong state, the policy or sandbox refused',
      ],
      [
        2,
        'bad input: no such task or agent, more than one of `--prompt`, `--prompt-file` and `--review`, or none without `--resume` (which then sends "continue"), neither `--agent` nor `--resume`, an unreadable prompt file, a prompt with a NUL byte for an agent that takes it in argv, an invalid `--timeout`',
      ],
    ],
    errors: [
      'AGENT_UNKNOWN',
      'AGENT_NO_SESSION',
      'UNTRUSTED_COMMANDS',
      'USAGE',
      'NOTHING_TO_REVIEW',
      'LOCK_HELD',
      'TASK_STATE',
      'POLICY_INVALID',
      'SANDBOX_UNAVAILABLE',
      'DURATION_INVALID',
    ],
    example: `$ warren run cart --agent echo-agent --prompt '-n "quoted" $HOME'
-n "quoted" $HOME
[exit 0]
$ warren run cart --agent nope --prompt hi
warren: no agent named "nope"; nothing was run.
  hint: Use one of aider, claude, codex, echo-agent, gemini, or add it under \`agents:\` in warren.yaml.
[exit 2]
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
    see: [
      ['Agents', '../design/execution.md#agents'],
      ['Using warren with Claude Code, Codex and Gemini', '../agents.md'],
      ['Continuing a conversation', '../agents.md#continuing-a-conversation-warren-run---resume'],
      ['Reviewing a task', '../design/review.md'],
    ],
  },
  transcript: {
    json: `{
  agent: 'claude' | 'codex' | 'gemini';
  runId: string; session: string | null; running: boolean; startedAt: string;
  file: string | null;             // the CLI's transcript in the task's state folder; null when it wrote none
  items: (                         // in the file's order (the human output puts each result under its call)
    | { key: string; kind: 'prompt' | 'text'; at: string | null; text: string }
    | { key: string; kind: 'tool'; at: string | null; callId: string; name: string; input: string }
    | { key: string; kind: 'result'; at: string | null; callId: string; output: string; error: boolean }
  )[];                             // input and output cut at 4,000 characters
}`,
    exit: [
      [0, 'the task has a run of claude, codex or gemini (its transcript may not be written yet)'],
      [1, 'no agent run whose conversation warren can read (`AGENT_NO_SESSION`)'],
      TASK_EXIT_2,
    ],
    errors: ['TASK_NOT_FOUND', 'AGENT_NO_SESSION', 'ID_INVALID'],
    example: `$ warren transcript cart   # after \`warren run cart --agent claude …\`: the real claude 2.1.328, against a scripted model server
claude session e7e580a2-846b-489a-a18b-0a3bc7fda1e1, run 20261206T035438-1b3a39cd (finished)
/tmp/warren-docs-agents/home/logs/shop-8d47cae7df/cart/agents/claude/projects/-tmp-warren-docs-agents-home-worktrees-shop-8d47cae7df-cart/e7e580a2-846b-489a-a18b-0a3bc7fda1e1.jsonl

> Add a cart, then show where you are.
▸ Write  /tmp/warren-docs-agents/home/worktrees/shop-8d47cae7df/cart/agent-note.txt
    File created successfully at: /tmp/warren-docs-agents/home/worktrees/shop-8d47cae7df/cart/agent-note.txt (file state is current in your context — no need to Read it back)
▸ Bash  pwd > ran-in.txt
    (Bash completed with no output)
scripted turn done
[exit 0]
$ warren transcript bare
warren: task bare has no run of claude, codex or gemini, whose conversations warren can read.
  hint: Start one with \`warren run bare --agent claude --prompt …\`; \`warren show bare\` lists its runs.
[exit 1]`,
    see: [
      ['Using warren with Claude Code, Codex and Gemini', '../agents.md#what-each-agent-writes-outside-its-workspace'],
      ['The dashboard: the conversation', '../design/dashboard.md#agents-from-the-page'],
    ],
  },
  setup: {
    json: `{
  state: 'ready' | 'setup_failed' | 'landed';
  log: string | null;
  results: { id: string; exitCode: number | null; timedOut: boolean; required: boolean; durationMs: number; reason: string | null }[];
}`,
    exit: [
      [0, 'setup passed; a `setup_failed` task is `ready` again'],
      [
        1,
        'setup failed (the task stays `setup_failed`), or refused: the task is locked or being removed, or the commands are not trusted',
      ],
      TASK_EXIT_2,
    ],
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
    exit: [
      [0, 'every required command passed (optional ones may fail)'],
      [1, 'a required command failed, or refused: the task is locked or not runnable, or the commands are not trusted'],
      TASK_EXIT_2,
    ],
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
  removed?: { kind; id; run; prompt? }[]; // not trusted: what the last trusted set had and this one has not
}`,
    exit: [
      [0, 'the set is trusted: now (`--yes`, `--hash`, or y at the question), before, or it is empty'],
      [
        1,
        'not trusted: answered no, or no terminal to ask and no `--yes`; or `--hash` names another set. Nothing was recorded',
      ],
    ],
    errors: ['UNTRUSTED_COMMANDS', 'CONFIG_INVALID', 'NOT_A_REPO'],
    example: `$ warren new feat cart
warren: this repository's warren.yaml asks warren to run commands, and you have not trusted them yet: setup hello: echo setting up $WARREN_TASK_ID on port $WARREN_PORT. Nothing was created; \`warren new --no-setup\` creates the workspace without running them.
  hint: Review them with \`warren trust\`, which shows the whole set and records your trust.
[exit 1]
$ warren trust
this repository's commands and security settings (its main checkout's warren.yaml), sha256 7c3a296897cf6f4ab8b7464c19114f154cfb1dadd5e5db8a29635808898440e8:
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
};
