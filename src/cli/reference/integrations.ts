import type { CommandReference } from './shared.js';

/** The command reference for policy, serve, mcp, hooks, completion: warren alongside other tools (see src/cli/reference.ts). */
export const INTEGRATIONS: Readonly<Record<string, CommandReference>> = {
  'policy keygen': {
    json: `{ privateKey: string; publicKey: string }   // $WARREN_HOME/policy/signing.key (0600), trusted.pub`,
    exit: [
      [0, 'the key pair was written'],
      [1, 'a key already exists (`--force` replaces it)'],
    ],
    errors: ['POLICY_INVALID'],
    example: `$ warren policy keygen
private key /tmp/warren-docs-5hhMmU/home/policy/signing.key
trusted public key /tmp/warren-docs-5hhMmU/home/policy/trusted.pub
[exit 0]`,
    see: [['Signed policy', '../design/execution.md#signed-policy']],
  },
  'policy sign': {
    json: `{ signature: string; expires: string }   // signature: the path of FILE.sig`,
    exit: [
      [0, 'signed'],
      [1, 'no signing key, or the file is not a valid policy'],
    ],
    errors: ['POLICY_INVALID'],
    example: `$ warren policy sign warren.policy.yaml
signed: /tmp/warren-docs-5hhMmU/shop/warren.policy.yaml.sig (expires 2027-06-30T00:00:00Z)
[exit 0]`,
    see: [['Signed policy', '../design/execution.md#signed-policy']],
  },
  'policy verify': {
    json: `{ valid: true; file: string; expires: string; rules: { tasks: string; sandbox: string[]; network: boolean }[] }`,
    exit: [
      [0, 'the policy is valid and signed by the trusted key'],
      [1, 'it is not: changed after signing, another signer, expired, no trusted key, unparsable'],
    ],
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
    json: `{ url: string; host: string; port: number; pid: number; token: string; tokenFile: string }   // printed once listening; url carries the token (?token=…), which is also in tokenFile`,
    exit: [
      [0, 'stopped with ctrl-c (SIGINT) or SIGTERM, after the running action answered'],
      [
        1,
        "refused before listening: `$WARREN_HOME/dashboard` is a link, a file or another user's, or its `token` is not a regular file",
      ],
      [
        2,
        'refused before listening: a non-loopback `--host` without `--allow-remote`, a `--host` this machine does not have or cannot resolve, a bad `--port`, a port in use, `WARREN_HOME` of another user',
      ],
    ],
    errors: ['USAGE', 'HOME_NOT_OWNED', 'TOKEN_FILE_UNSAFE'],
    example: `$ warren serve --port 0
warren dashboard: http://127.0.0.1:42391/?token=cbc937d21f3f4786ad69b3d3ca989888f1c73c18a367aea3edc0bbc618427e20
(the token is also in /tmp/doc-serve/home/dashboard/token; ctrl-c to stop)
^C
[exit 0]
$ warren --json serve --port 0
{
  "url": "http://127.0.0.1:39507/?token=cbc937d21f3f4786ad69b3d3ca989888f1c73c18a367aea3edc0bbc618427e20",
  "host": "127.0.0.1",
  "port": 39507,
  "pid": 20878,
  "token": "cbc937d21f3f4786ad69b3d3ca989888f1c73c18a367aea3edc0bbc618427e20",
  "tokenFile": "/tmp/doc-serve/home/dashboard/token"
}
^C
[exit 0]
$ warren serve --host 0.0.0.0
warren: --host 0.0.0.0 is not a loopback address; the dashboard can remove workspaces, so it listens on 127.0.0.1 unless you say otherwise. Nothing was started.
  hint: Add --allow-remote if other machines on this network should reach it (they get full control), or drop --host.
[exit 2]`,
    see: [
      ['Dashboard', '../design/dashboard.md'],
      ['Security model', '../design/dashboard.md#security-model'],
      ['Scripting the dashboard', '../design/dashboard.md#scripting-the-dashboard'],
    ],
  },
  mcp: {
    json: "// none: stdout carries the MCP protocol (JSON-RPC over stdio). Each tool answers with the JSON the CLI prints; a refusal is a tool error whose text is the CLI's --json error.",
    exit: [
      [0, 'the client closed stdin (calls already sent are answered first)'],
      [
        1,
        "refused before serving (`OUT_OF_SCOPE`): started in one task's workspace or command, and `--task` (or `--repo`) names another",
      ],
      [2, 'refused before serving: not a repository, `WARREN_HOME` of another user'],
    ],
    errors: ['NOT_A_REPO', 'HOME_NOT_OWNED', 'OUT_OF_SCOPE'],
    example:
      '$ printf \'%s\\n\' \'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}\' \'{"jsonrpc":"2.0","method":"notifications/initialized"}\' \'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":{}}}\' \'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm","arguments":{"id":"nope"}}}\' | warren mcp\n{"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"warren","version":"0.1.0"}},"jsonrpc":"2.0","id":1}\n{"result":{"content":[{"type":"text","text":"{\\n  \\"error\\": {\\n    \\"code\\": \\"TASK_NOT_FOUND\\",\\n    \\"message\\": \\"no task nope in this repository; nothing was changed.\\",\\n    \\"hint\\": \\"See `warren list`.\\"\\n  }\\n}"}],"isError":true},"jsonrpc":"2.0","id":3}\n{"result":{"content":[{"type":"text","text":"[\\n  {\\n    \\"id\\": \\"cart\\",\\n    \\"type\\": \\"feat\\",\\n    \\"branch\\": \\"feat/cart\\",\\n    \\"path\\": \\"/tmp/warren-docs-agents/home/worktrees/shop-1061e4e954/cart\\",\\n    \\"base\\": \\"main\\",\\n    \\"state\\": \\"ready\\",\\n    \\"createdAt\\": \\"2026-11-30T21:12:32.391Z\\"\\n  }\\n]"}]},"jsonrpc":"2.0","id":2}\n[exit 0]\n$ claude mcp add warren -- warren mcp        # register it with Claude Code (in the repository)\nAdded stdio MCP server warren with command: warren mcp to local config\n$ codex mcp add warren -- warren --repo /path/to/repo mcp     # with Codex (global: name the repository)\nAdded global MCP server \'warren\'.',
    see: [
      ['warren as an MCP server', '../agents.md#warren-as-an-mcp-server-warren-mcp'],
      ['Benchmarks', '../benchmarks.md#mcp-npm-run-bench-mcp'],
    ],
  },
  'hooks install': {
    json: `{
  file: string;                                   // <repo>/.claude/settings.local.json
  added: ('WorktreeCreate' | 'WorktreeRemove')[];  // empty: both were there already
  hooks: { WorktreeCreate: unknown; WorktreeRemove: unknown };   // those keys as written
  excluded: boolean;   // /.claude/settings.local.json added to .git/info/exclude now (false: it was there)
}`,
    exit: [
      [0, 'the hooks are there (written now, or already)'],
      [
        2,
        'refused, nothing changed: an agent other than `claude`, the settings file is not JSON, or another command already answers WorktreeCreate',
      ],
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
            "command": "/home/me/.npm-global/bin/warren hook claude-create"
          }
        ]
      }
    ],
    "WorktreeRemove": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/home/me/.npm-global/bin/warren hook claude-remove"
          }
        ]
      }
    ]
  }
}
added /.claude/settings.local.json to .git/info/exclude, so git status does not list it
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
      [
        1,
        'refused (nothing created), or its setup failed (the task is kept in `setup_failed`): Claude Code shows the message',
      ],
      [
        2,
        'a payload that is not JSON, is over 1 MiB, names no worktree, or leaves no usable task ID; an invalid `--type`',
      ],
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
      [1, 'refused, nothing removed: work would be lost'],
      [
        2,
        'a payload that is not JSON, is over 1 MiB, or names no worktree_path, or a path that is not a warren workspace of this repository',
      ],
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
  help: {
    json: `{ topics: string[] }                     // no topic: every page's name
{ topic: string; file: string; text: string }   // a page: its file in the package, and its text (Markdown, as the file has it)
{ topic: string; usage: string }                // a command without a page: its usage`,
    exit: [
      [0, 'the page, the usage or the list is printed'],
      [2, 'no command or page of that name'],
    ],
    errors: ['USAGE'],
    example: `$ warren help configuration | head -4
Configuration: \`warren.yaml\`
============================

Checked in at the repository root. Every key is optional; a repository without the file gets
$ warren help nope
warren: no command or page named "nope".
  hint: Run \`warren help\` for the commands; pages: agents, benchmarks, checkouts, configuration, contributing, dashboard, design/trust, errors, execution, landing, merge-queue, provisioning, review, services, testing, workspaces; or a command's name for its page.
  usage: warren [--repo <dir>] [--json] help [topic...]
[exit 2]`,
    see: [['Documentation', '../../README.md#documentation']],
  },
  completion: {
    json: `{ shell: 'bash' | 'zsh' | 'fish'; script: string }`,
    exit: [
      [0, 'the script is printed'],
      [2, 'a shell it has no script for'],
    ],
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
