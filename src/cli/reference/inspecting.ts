import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for status, provisioned, path and diff: looking inside a task (see src/cli/reference.ts). */
export const INSPECTING: Readonly<Record<string, CommandReference>> = {
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
    replaced?: { by: 'folder' | 'file' | 'link'; entries: number; layerChanges: number };
                                                        // cow: something else is at the path instead of the layer, which is
                                                        // not mounted over it; changed = what that folder holds against the snapshot
  }[];
  stale: boolean;                                       // a node_modules does not match its lockfile, or a lockfile changed
  staleLockfiles: { path: string; provisionedFrom: string; now: string | null;
    tree?: string; why?: string; fix?: string }[];       // node_modules: checked against its lockfile
  envRewritten: { file: string; keys: string[] }[];     // copied env files whose keys named the main checkout's services, set to the task's own at new
  services: ServiceStatus[];                            // as \`show\` lists them: state, URL, and which template (and seed) a database came from
  conflicts: { other: string; paths: string[] }[];      // what its work (uncommitted included) does not merge with: a task, or '@base'
}`,
    exit: [[0, 'the status was read'], [1, 'a layer could not be mounted again'], TASK_EXIT_2],
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
  "staleLockfiles": [],
  "envRewritten": [],
  "services": [],
  "conflicts": []
}
[exit 0]`,
    see: [['What changed: `warren status`', '../design/provisioning.md#what-changed-warren-status-id']],
  },
  path: {
    json: `{ path: string }   // the workspace, canonical (symlinks resolved)`,
    exit: [[0, 'the task exists (its path is printed even if the folder is gone: see `warren scan`)'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'ID_INVALID'],
    example: `$ warren path cart
/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/cart
[exit 0]
$ warren --json path login
{
  "path": "/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/login"
}
[exit 0]`,
    see: [
      ['Moving around: path, completion, exec', '../design/workspaces.md#moving-around'],
      ['Where workspaces live', '../design/workspaces.md#where-workspaces-live'],
    ],
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
    exit: [
      [0, 'the diff was read (no changes is not a failure)'],
      [1, 'the workspace is gone (only `--committed` can be shown)'],
      [2, 'bad input: both `--committed` and `--uncommitted`, an invalid ID, no such task'],
    ],
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
    see: [
      ['Reviewing a task', '../design/review.md'],
      ['What changed in provisioned paths: `warren status`', '../design/provisioning.md#what-changed-warren-status-id'],
    ],
  },
};
