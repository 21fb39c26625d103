import type { ErrorDoc } from './error-docs.js';
import type { ErrorCode } from './errors.js';

/** What the errors of the command line, tasks, workspaces and landing mean (part of ERROR_DOCS, in docs/errors.md's order). */
export const TASK_ERROR_DOCS = {
  USAGE: {
    meaning:
      "The command line was wrong: an unknown command or option, a missing argument, both or neither of `--prompt`/`--prompt-file`, a port that is not a number, no command after `--`, a remote name that is not valid or does not exist. The dashboard's HTTP API uses it for a request it cannot take. Nothing was touched.",
    action:
      'Read the message, its hint (the command or option you may have meant) and the usage line under it (`details.usage` with `--json`); `warren help COMMAND` shows every argument and option.',
  },
  ID_INVALID: {
    meaning:
      'A task ID does not match `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$` (or contains `..`, or ends in `.lock`). It is refused before anything is opened or created.',
    action: 'Pick an ID such as `T-123` or `fix-login`.',
  },
  TYPE_INVALID: {
    meaning:
      'The task type of `warren new TYPE ID` is not one of `feat`, `fix`, `refactor`, `docs`, `chore`. Nothing was created.',
    action: 'Use one of those types.',
  },
  BRANCH_INVALID: {
    meaning:
      "The branch `TYPE/ID` would break git's branch-name rules (`git check-ref-format --branch`), or `--base` cannot name a branch, tag or commit (it breaks those rules, starts with `-`, or is longer than 1024 characters; a `~N`/`^N` suffix is fine). Nothing was created.",
    action: 'Pick a task ID that makes a valid branch name, or pass `--base` with an existing branch, tag or commit.',
  },
  DURATION_INVALID: {
    meaning:
      'A duration (`--timeout`, or `timeout:`/`kill_grace:` in warren.yaml) is not a number with a unit, or is zero. Nothing was run.',
    action: 'Write a number with a unit: `500ms`, `2s`, `10m` or `1h`.',
  },
  CONFIG_INVALID: {
    meaning:
      '`warren.yaml` (or your own `$WARREN_HOME/config.yaml`, or `WARREN_WORKTREE_ROOT`) is not valid YAML, expands more than 100 YAML aliases (an alias bomb), has a key warren does not know, or a value of the wrong type (a zero duration among them); the message names each key. Also: a `worktree_root` in `warren.yaml` that resolves outside the repository (or to its root, into `.git`, or onto tracked files) and not under `WARREN_HOME` — a repository may not place files anywhere else. Nothing was changed. Only commands that use the file refuse: `list`, `show`, `scan` and `gc` run with the defaults and say so in one warning line.',
    action:
      'Fix the file; every key is in [configuration.md](configuration.md). To keep workspaces somewhere else, choose the root yourself: `WARREN_WORKTREE_ROOT` or `worktree_root` in `$WARREN_HOME/config.yaml`.',
  },
  PATH_UNSAFE: {
    meaning: 'A task ID would make a workspace path outside the workspace root. Nothing was created.',
    action: 'Pick another ID.',
  },
  NOT_A_REPO: {
    meaning:
      'The folder (`--repo`, or the current directory) is not inside a git repository, or is a bare repository (warren needs a main worktree). Nothing was changed.',
    action: 'Run warren inside a normal clone, or pass `--repo DIR`.',
  },
  HOME_NOT_OWNED: {
    meaning:
      "`WARREN_HOME` belongs to another user than the one warren runs as (typically root through `sudo` with the environment passed on): files written there would be that user's to neither change nor remove. Every command refuses before it opens anything.",
    action:
      "Run warren as the owner of `WARREN_HOME` (e.g. `sudo -u '#1000' warren …`), or set `WARREN_HOME` to a folder of your own.",
  },
  RUNNER_UNAVAILABLE: {
    meaning:
      "The task's sandbox is `container` (warren.yaml's `sandbox:` or `new --sandbox container`) and podman is not installed or does not run on this machine; or the task runs on another machine (`runner: ssh:NAME`, or `new --runner ssh:NAME`) and `ssh` is not installed here or the host did not answer; or its runner is `k8s:NAME` (warren.yaml, or `new --runner`) and $WARREN_HOME/config.yaml declares no cluster NAME, its kubeconfig is missing, its API server does not answer, or the task's claim did not become Ready. Nothing was created or run. In the merge queue (a land's bounce): the gate of a batch holding a cluster's task could not get, or keep, its claim in that cluster, so the gate could not run and nothing landed.",
    action:
      "Install podman (`apt-get install podman runc slirp4netns uidmap`; see `warren help configuration` for the two lines of /etc/containers/containers.conf some machines need), or choose `--sandbox bwrap`. For a host: install `openssh-client`, check `ssh -p PORT USER@HOST true` works with the host's key, and that the host runs its `warren` command. For a cluster: declare it under `clusters:` in $WARREN_HOME/config.yaml and check it answers (`kubectl get sandboxclaims`).",
  },
  RUNNER_WORK_REFUSED: {
    meaning:
      "A task that runs elsewhere (`runner: k8s:NAME`) left work that warren would not bring back: its commits do not descend from what warren gave its sandbox, they change a protected path, the task's branch moved here meanwhile, or the sandbox could not bundle its work. The task's branch and workspace are as they were; the work is still in the sandbox.",
    action:
      'Undo or fix those commits in the sandbox (`warren exec ID -- git …`) and run again, or `warren rm ID` to drop the sandbox and its work.',
  },
  HOST_UNKNOWN: {
    meaning:
      "warren.yaml's `runner: ssh:NAME` or `new --runner ssh:NAME` names a host that `hosts:` in `$WARREN_HOME/config.yaml` does not declare (a repository's warren.yaml cannot declare one). Nothing was created.",
    action:
      'Declare it: `hosts: {NAME: {ssh: user@host, port: 22, identity: /path/to/key, warren: [warren], home: /remote/warren-home}}` in `$WARREN_HOME/config.yaml`; see `warren help configuration`.',
  },
  REMOTE_FAILED: {
    meaning:
      "An SSH task's remote side refused or failed a request (its warren said why), or the connection to the host was lost. What the task committed there stays there and is fetched back by the next command; the task's branch here did not move. From `rm --discard`: the workspace there could not be brought here to be archived, so nothing was removed, there or here.",
    action:
      'Run the command again once the host answers; `warren scan` names a task whose remote work is not fetched back yet.',
  },
  REMOTE_COMMITS_REFUSED: {
    meaning:
      "Commits fetched back from an SSH task's host do not descend from what warren sent there, or touch a protected path (`protected:`). They were kept under `refs/warren/quarantine/ID` for review; the task's branch did not move.",
    action:
      'Look at them (`git log refs/warren/quarantine/ID`); fix the task on its host (undo the commit touching the protected path), then run the command again, or `warren rm ID --discard`.',
  },
  TASK_EXISTS: {
    meaning: 'A task with this ID already exists in this repository. Nothing was changed.',
    action: '`warren show ID` to see it, or `warren rm ID` first.',
  },
  TASK_NOT_FOUND: {
    meaning:
      "No task with this ID is recorded for this repository (the dashboard's API answers 404); for `restore`, no archive of the ID that warren made (a ref under `refs/warren/archive/` it did not record is passed over). Nothing was changed.",
    action: '`warren list` shows the tasks, `warren list --archived` the archives; check `--repo`.',
  },
  TASK_STATE: {
    meaning:
      'The task is in a state that does not allow the command: a command in a task whose setup failed or that is being removed, `setup` of a task that is not ready, a branch that is missing; or, for `rm`, `land` and `checkpoint`, a workspace that is not on its branch — another branch, a detached HEAD (the message names any commits that are on no branch), or a rebase, merge, cherry-pick, revert, `am` or bisect in progress. Nothing was run or changed.',
    action:
      "See `warren show ID`. For `setup_failed`, fix the cause and run `warren setup ID`. For a workspace off its branch, follow the hint: it says how to keep the commits (`git branch NAME HEAD` on a detached HEAD) and how to finish the operation in progress, before switching back to the task's branch.",
  },
  BRANCH_EXISTS: {
    meaning: 'The branch `TYPE/ID` already exists, so `warren new` would not own it. Nothing was created.',
    action:
      'Pick another ID, or delete the branch if its work is no longer needed; `warren scan` lists branches left by failed runs.',
  },
  BRANCH_UNLANDED: {
    meaning:
      '`rm --delete-branch` was refused: the branch holds commits that are on no other branch or ref (the message lists them). Nothing was removed.',
    action: 'Land the work (`warren land ID`), or run `warren rm ID` without `--delete-branch` to keep the branch.',
  },
  BRANCH_CHECKED_OUT: {
    meaning:
      "`rm --delete-branch` was refused: another worktree has the task's branch checked out, and git will not delete a checked-out branch (the message names the worktree). Nothing was removed.",
    action:
      'Switch that worktree to another branch, or run `warren rm ID` without `--delete-branch` to keep the branch.',
  },
  BASE_UNKNOWN: {
    meaning:
      'The base cannot be resolved: `--base` names no branch or commit, the main worktree has a detached HEAD (no default base), the base vanished while creating, or at `land` the base is not a branch any more. Nothing was created or changed.',
    action:
      'Pass `--base` with an existing branch; to land onto something that is not a branch, push the task for review with `warren land ID --branch-only --push`.',
  },
  BASE_DIVERGED: {
    meaning:
      'At `new`, the base and its upstream each have commits the other lacks, so it cannot be fast-forwarded. At `land`, the task and the base share no history, or the base kept moving while landing. Nothing was created or landed.',
    action:
      'Reconcile the base with its upstream (rebase or merge), or use `warren new --no-sync` to branch from the local base as it is; for a moving base, land again.',
  },
  LOCK_HELD: {
    meaning:
      "Another live warren process holds this task's lock (the message names its pid, host, purpose and start time): a running `exec`, `run`, `setup`, `verify`, `checkpoint`, `land` or `rm`. Nothing was changed.",
    action:
      "Wait for that command to finish. If that process is gone, run the command again: a dead holder's lock is taken over.",
  },
  LOCK_TIMEOUT: {
    meaning:
      'The repository lock (held around `git worktree add/remove/prune`, `fetch` and branch deletion) or a snapshot lock stayed held past the wait. Nothing was changed.',
    action: 'Wait for the other process; if no warren process is running, remove the lock file the message names.',
  },
  PATH_ESCAPE: {
    meaning:
      "A workspace or the workspace root now resolves somewhere else (a symlink swapped in, a `..`), was replaced by a file, or lies outside the root. warren refuses to follow it or delete it. Nothing was changed; git's record of the workspace and its branch are kept.",
    action:
      'Put the real folder back where the message says (`warren scan` lists the task as displaced); if a workspace is gone for good, take away what is in its place and `warren rm ID` forgets it, keeping the branch.',
  },
  WORKSPACE_EXISTS: {
    meaning: 'The folder the new workspace would use already exists, but no task claims it. Nothing was changed.',
    action: '`warren scan` shows what it is; `warren gc` clears it when that is provably safe.',
  },
  WORKSPACE_DIRTY: {
    meaning:
      '`rm` would lose uncommitted changes (anything `git status --porcelain --untracked-files=all` shows), or `land` found uncommitted changes (it takes committed work only). Nothing was removed or landed.',
    action: 'Commit them with `warren checkpoint ID`, or discard them in the workspace, then run the command again.',
  },
  WORKSPACE_TAMPERED: {
    meaning:
      "What git would follow from a workspace is not what warren made: its `.git` file names another git directory, its git directory's `commondir` or `gitdir` another repository or path, or its `config.worktree` sets a key that runs a program (`core.fsmonitor`, `core.hooksPath`, a filter, a credential helper…); or its git directory holds a link (or a fifo) where git writes by name (`COMMIT_EDITMSG`, `logs/HEAD`…), which would make git write outside it. Something in the workspace (its agent) wrote it. warren runs no git there, so the program never runs and nothing is written through the link; nothing was changed.",
    action:
      'Look at the file the message names and put back what git made (the message says what), remove the key, or remove the link (its target is left as it is); if you do not trust the workspace, remove it with `git worktree remove --force PATH` and `warren gc`.',
  },
  OUT_OF_SCOPE: {
    meaning:
      "An MCP session that serves one task (`warren mcp --task ID`; any `warren mcp` started inside a command warren runs for a task, which inherits `WARREN_TASK_ID`; or one started in a task's workspace, a folder in it included) was asked about another task, or to create one; or `warren mcp` was started in one task's command or workspace and told to serve another (`--task`, `--repo`), and did not start. Nothing was done.",
    action:
      'Ask about the task the session serves. To drive every task, or another one, start `warren mcp` yourself outside any task — its command and its workspace, in the main checkout say (`warren help agents` says what such a session can do).',
  },
  WORKSPACE_MOUNTED: {
    meaning:
      'Something inside the workspace could not be released: a mount that warren did not make (`git worktree remove` would delete the mounted files), or what a feature holds there and says (a host with uncommitted work, commits an agent made in its container). Nothing was removed.',
    action:
      'For a mount: unmount it (`umount PATH`). Otherwise do what the message says. Then run `warren rm ID` again.',
  },
  OWNERSHIP_MISMATCH: {
    meaning:
      "The task's records disagree, or its folder is not its worktree: the database, the metadata file beside the workspace (`ID.warren.json`) and `git worktree list` name different branches or paths; the folder is missing (for `checkpoint` and `land`); its `.git` file is missing or broken; or the folder holds another repository. Nothing was changed.",
    action:
      "Follow the hint, which names the state: a broken `.git` file is relinked by `git worktree repair PATH` in the main checkout (your files are untouched); a folder that is another repository is not warren's — move it away; a missing folder is put back, or `warren rm ID` forgets the workspace and keeps its branch. `warren scan` shows what warren sees.",
  },
  REMOVE_INCOMPLETE: {
    meaning:
      "git refused to remove the worktree (the workspace is as it was), or git deregistered it but files stayed on disk (an immutable file, another user's file): the task is kept in state `remove_failed`, its branch untouched, no committed work lost.",
    action: 'Fix the cause the message names (e.g. `chattr -i FILE`), then run `warren rm ID` again or `warren gc`.',
  },
  CREATE_FAILED: {
    meaning:
      'A step of `warren new` failed after it began making things; what it had made (worktree, directory, branch, row) was undone and the message lists it. The base and the main checkout are as they were.',
    action: 'Fix the cause the message names and run `warren new` again.',
  },
  SETUP_FAILED: {
    meaning:
      'Reserved: a failing setup is not an error but a result — `new` and `setup` exit 1 with the task in state `setup_failed` and the log path.',
    action: 'Read the setup log, fix the cause, run `warren setup ID`.',
  },
  VERIFY_FAILED: {
    meaning:
      "Reserved: a failing verify is a result, not an error — `warren verify` exits 1 with `passed: false` and each command's outcome.",
    action: 'Read the verify log named in the output.',
  },
  PROVISION_FAILED: {
    meaning:
      'Bringing ignored paths into a workspace failed: `cp` failed, files could neither be hard-linked nor copied, an overlay could not be mounted again, or a namespaced copy-on-write layer cannot be mounted for a command on this machine. What provisioning had made was undone; nothing was run.',
    action:
      'Read the cause in the message; `warren provision ID --refresh` provisions the paths again in a way this machine supports.',
  },
  HOOKS_CHANGED: {
    meaning:
      "The repository's git hooks (shared by every worktree) were added, removed or changed, or the hooks directory moved, since the task began. `checkpoint` and `land` refuse; nothing was changed.",
    action:
      'Check the hooks in the directory the message names; if the change is expected, run the command again with `--accept-hooks`.',
  },
  PROTECTED_POLICY_INVALID: {
    meaning:
      'A `protected:` glob (in warren.yaml on the base or in the main checkout) is absolute, has `..`, a `!` negation or a backslash, or does not compile. Nothing was changed.',
    action: 'Fix the `protected:` list and run the command again.',
  },
  GATE_FAILED: {
    meaning:
      'The merge queue integrated the task onto the latest base and the gate (`land: { gate: [...] }`, else the required verify commands) failed on the result, with the task alone: it bounced. Also when the integrated tree cannot be set up: its install (or a setup step marked `gate: true`) failed in the integration workspace, so the base would no longer install. The base, the task and its branch are as they were.',
    action:
      "Read the log (named in the message: the gate's, or the install's), fix the task in its workspace, `warren checkpoint`, and `warren land` again.",
  },
  LAND_CONFLICT: {
    meaning:
      'The task conflicts with what landed on the base since it branched: the message names the tasks (or commits) that landed there and the paths. In the merge queue, an entry that conflicts only with entries ahead of it that have not landed waits for them instead, and bounces only if they land. Nothing was landed: the base, the task branch and every checkout are as they were.',
    action:
      'Bring the base into the task (`warren exec ID -- git merge main`), resolve, `warren checkpoint ID`, then land again.',
  },
  SYNC_CONFLICT: {
    meaning:
      "`warren sync` could not bring the base's new commits into the task without a conflict: the message names the paths. Without `--keep`, everything was rolled back: the branch, the index and every file are as they were. With `--keep`, the base is merged into the workspace and the conflict is left there for the agent (or you) to resolve.",
    action:
      'Resolve it where it is: `warren sync ID --keep`, then `warren run ID --resolve --agent NAME` (or edit the files), then `warren checkpoint ID`, which concludes the merge; `warren sync ID --abort` puts the task back as it was.',
  },
  NOTHING_TO_SYNC: {
    meaning:
      '`warren sync --abort` found no sync left in the workspace to roll back (no merge in progress), or a merge that is not the one `sync --keep` left. Nothing was changed.',
    action: 'See `git -C WORKSPACE status`; a merge of your own is concluded or aborted with git itself.',
  },
  CHECKOUT_DIRTY: {
    meaning:
      "The checkout that has the base checked out (usually the main worktree) has uncommitted changes that landing (or the fast-forward of `new`'s sync) would overwrite. Nothing was changed.",
    action: 'Commit or stash those changes in that checkout, then run the command again.',
  },
  NOTHING_TO_LAND: {
    meaning:
      'The base already has everything the task changed, once protected and provisioned paths are left out — for a landed task with nothing new since, the message says it is already landed and names the commit. Nothing was changed.',
    action:
      'Commit work with `warren checkpoint ID` first; if only protected files changed, there is nothing to land. A landed task is done: `warren rm ID` removes its workspace and keeps the branch.',
  },
  NOTHING_TO_REVIEW: {
    meaning:
      "`warren run ID --review` (or the dashboard's Send to agent) found no open review comment on the task, so there was no prompt to send. Nothing was run.",
    action:
      'Comment on lines of the diff first (`warren comment ID FILE:LINE TEXT`, or on the dashboard), or reopen one (`warren comments ID --reopen N`); `warren comments ID` lists them.',
  },
} as const satisfies Partial<Record<ErrorCode, ErrorDoc>>;
