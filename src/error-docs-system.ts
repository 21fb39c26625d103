import type { ErrorDoc } from './error-docs.js';
import type { ErrorCode } from './errors.js';

/** What the errors of sandboxes, services, agents, the system and git mean (part of ERROR_DOCS, in docs/errors.md's order). */
export const SYSTEM_ERROR_DOCS = {
  POLICY_INVALID: {
    meaning:
      'The signed run policy refused the run, or cannot be trusted: a policy without a trusted key (or the reverse), a missing or wrong signature, another signer, expired, no rule for the task, a sandbox or network the rule does not allow; or `policy keygen` found a key already there, or `policy sign` found no signing key. Nothing was run.',
    action:
      'Follow the hint: sign the policy again with `warren policy sign`, create the task with the sandbox the rule asks for, or `warren policy keygen` (`--force` to replace a key).',
  },
  SANDBOX_UNAVAILABLE: {
    meaning:
      "The task runs in a bwrap sandbox but bubblewrap is not installed or cannot run here; or warren is root and the sandbox's root cannot be another uid outside (no perl, no idmapped mounts on this kernel or file system, the uid taken), or the task's copy-on-write layers are overlays mounted for every process, which that uid cannot be given; or, for a `container` task, podman failed to make, start or reach the task's container (its words are in the message), or the image warren.yaml names is not on this machine; or the egress proxy's unix socket would be over the 107 bytes a socket's path may have (a deep TMPDIR), or the short folder of this user's that takes the sockets of a deep WARREN_HOME (/tmp/warren-UID) is a link, another user's, or open to others. Nothing was run.",
    action:
      'Install bubblewrap (`apt-get install bubblewrap`); as root, do what the hint says (perl, a kernel with idmapped mounts, `warren provision ID --refresh`), run warren as a user who is not root, or set `sandbox: none`. For a socket: a shorter TMPDIR, or remove the /tmp/warren-UID the message names.',
  },
  SANDBOX_REQUIRED: {
    meaning:
      '`warren new --require-sandbox` refused a task of medium or higher risk that would run without a sandbox; the message says why it is risky. Nothing was created.',
    action: 'Create it with `--sandbox bwrap`, or set `sandbox: bwrap` in warren.yaml.',
  },
  SERVICE_UNKNOWN: {
    meaning:
      '`warren service` names a service that warren.yaml does not define under `services:`. Nothing was changed.',
    action: "Use one of the names the message lists (`warren show ID` lists the task's services).",
  },
  SERVICE_FAILED: {
    meaning:
      'A service of the task could not be made or did not become ready in time (its database could not be cloned, its server or command exited, its readiness check never passed). What had been started for it was stopped; at `warren new` the task was not created.',
    action:
      'Read the log the message names (or `warren service logs ID NAME`), fix the cause, and run the command again.',
  },
  SERVICE_UNAVAILABLE: {
    meaning:
      "A service needs a server that is not installed here (PostgreSQL's initdb and postgres, or redis-server), or one this machine cannot run; or a task in a cluster has a `postgres` service and its pod cannot run PostgreSQL's server: the pod runs as root and may not change its user (PostgreSQL refuses root), or its image has no PostgreSQL. Nothing was changed (a `new` is undone, its claim deleted).",
    action:
      "Install what the message names (Debian: `apt-get install postgresql` or `apt-get install redis-server`), or point warren at a PostgreSQL server of yours (postgres.url in $WARREN_HOME/config.yaml). In a cluster: give the warren SandboxTemplate's container a user of its own (`securityContext: {runAsUser: 70, runAsNonRoot: true}`) and PostgreSQL in its image, or run the task here (`--runner local`).",
  },
  PORTS_EXHAUSTED: {
    meaning: 'No block of free ports of the configured size is left in 20000–32767. The task was not created.',
    action: 'Remove finished tasks (`warren rm`), or lower `ports.count` in warren.yaml.',
  },
  AGENT_UNKNOWN: {
    meaning:
      '`warren run --agent NAME` names neither a built-in agent (claude, codex, gemini, aider) nor one under `agents:` in warren.yaml. Nothing was run.',
    action: 'Use one of the names the hint lists, or add the agent under `agents:`.',
  },
  UNTRUSTED_COMMANDS: {
    meaning:
      "The repository's `warren.yaml` defines commands (setup, verify, teardown, its own agents) that you have not trusted, or that changed since you did. warren runs none of them until you do: `new` refuses before anything is made (`--no-setup` still works), `setup`, `verify` and `run --agent` refuse before anything runs; `rm` skips teardown with a warning. The message names the commands that would have run.",
    action:
      'Read them with `warren trust`, which shows the whole set and records your trust in it (per user, under `WARREN_HOME`); then run the command again.',
  },
  AGENT_NO_SESSION: {
    meaning:
      '`warren run ID --resume` found no conversation to continue: no agent that keeps sessions (claude, codex, gemini) has run in this task, or not the one `--agent` names. Nothing was run.',
    action: 'Start a conversation first with `warren run ID --agent NAME --prompt …`, then resume it.',
  },
  COMMAND_FAILED: {
    meaning:
      'The command to run was not found on `PATH` or is not executable (nothing was run), or `git commit` in the workspace failed during `checkpoint`, e.g. a hook refused it (the changes stay staged; no file was lost).',
    action:
      "Check the command's name or install it; for a refused commit, read the hook's output and fix what it names.",
  },
  TOKEN_FILE_UNSAFE: {
    meaning:
      "`warren serve` keeps the dashboard's token in `$WARREN_HOME/dashboard/token` (the folder 0700, the file 0600, both yours), and that folder is a link, a file or another user's, or the token's place is not a regular file: the token cannot be kept there for you alone. Nothing was started and nothing was changed.",
    action:
      'Remove what the message names (warren makes the folder and the file again, private), then run `warren serve` again.',
  },
  DISK_FULL: {
    meaning:
      "A write failed because the file system holding the file the message names is full (`ENOSPC`, `EDQUOT`, or SQLite's `SQLITE_FULL` for the state database). Nothing was lost: what was written stays, and an operation cut short is recorded as an intent that the next warren command repairs (rolls back or forward).",
    action:
      'Free space on that file system (`df -h`; `warren gc` removes what warren no longer needs: strays, old logs, unused snapshots), then run the command again.',
  },
  READ_ONLY: {
    meaning:
      "A write failed because the file the message names is on a read-only file system (`EROFS`, or SQLite's `SQLITE_READONLY` for the state database). Nothing was lost; an operation cut short is repaired by the next warren command.",
    action:
      "Make that file system writable again, or, when it is warren's own state, set `WARREN_HOME` to a writable folder of yours; then run the command again.",
  },
  STATE_LOCKED: {
    meaning:
      "Another process kept warren's state database (`$WARREN_HOME/state.db`) locked for longer than warren waits (`WARREN_STATE_TIMEOUT`, 30 s by default). A lock still held after one second is said on stderr (`waiting up to …`) before warren waits on. This command changed nothing.",
    action:
      'See what holds it (`fuser $WARREN_HOME/state.db`): another warren command finishing a long step, or a `sqlite3` shell left in a transaction. Let it finish or end it, then run the command again.',
  },
  STATE_UNAVAILABLE: {
    meaning:
      "warren cannot open or read its state database: `$WARREN_HOME` is missing, not writable, on a read-only file system, or its file system failed a read or write (SQLite's `SQLITE_CANTOPEN`, `SQLITE_IOERR`). Nothing was changed by this command.",
    action:
      "Check `$WARREN_HOME`'s folder, permissions and mount (`dmesg` for I/O errors), or set `WARREN_HOME` to a writable folder of your own.",
  },
  GIT_FAILED: {
    meaning:
      "A git command failed in a way no other `GIT_*` code describes; the message carries git's first line of stderr and `details` the argv, exit code and stderr.",
    action: "Read git's message; run the same git command by hand to see more.",
  },
  GIT_LOCKED: {
    meaning:
      'git could not take one of its own lock files (`index.lock`, a ref lock): another git process is working in the repository.',
    action: 'Wait and run the command again; if no git process is running, remove the stale `.lock` file git names.',
  },
  GIT_TIMEOUT: {
    meaning: 'A git command ran past its time limit and was killed with its process group.',
    action: 'Look for another process holding the repository, then try again.',
  },
  GIT_NOT_FOUND: {
    meaning: 'git could not be started. Nothing was changed.',
    action: 'Install git 2.38 or newer and make sure it is on `PATH`.',
  },
  GIT_WORKTREE_EXISTS: {
    meaning: 'git says the branch is already checked out in another worktree, or the worktree is already registered.',
    action: '`git worktree list` and `warren scan` show where.',
  },
  GIT_BRANCH_EXISTS: {
    meaning: 'git says a branch of that name already exists.',
    action: 'Pick another name, or delete the branch if its work is no longer needed.',
  },
  GIT_PATH_EXISTS: {
    meaning:
      "git refused because a file or folder is already where it would write (`'<path>' already exists`), e.g. `git worktree add` onto a path that is taken.",
    action:
      'Run `warren scan` to see what is at that path; move or remove it if it is not yours to keep, then run the command again.',
  },
  GIT_DIRTY: {
    meaning: 'git refused because local changes would be overwritten, or the worktree has modified or untracked files.',
    action: 'Commit, stash or discard the changes git names.',
  },
  GIT_UNKNOWN_REF: {
    meaning: 'git does not know a revision or reference (a branch, commit or remote ref).',
    action: 'Check the name; `git fetch` if it lives on a remote.',
  },
  TIMED_OUT: {
    meaning:
      'Reserved: a supervised command that runs past `--timeout` is a result, not an error — `exec` and `run` exit 124 with `timedOut: true`.',
    action: "Give it a longer `--timeout`, or find why it hangs in the run's log.",
  },
  INTERNAL: {
    meaning:
      "A bug in warren: an unexpected exception, or a post-condition that failed after landing (the base or the checkout's index not where warren put them).",
    action:
      'Report it with the command you ran; after a failed land post-condition, run `git status` in the checkout the message names.',
  },
} as const satisfies Partial<Record<ErrorCode, ErrorDoc>>;
