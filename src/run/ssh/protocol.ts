/**
 * What the coordinator and the host's warren (`warren runner --stdio`) say to each other: one
 * JSON frame a line. A request is the first line of the remote's standard input; a control
 * request (`prepare`, `create`, `commit`, `report`, `remove`, `agent-state`, `worktree`, `list`,
 * `gate`, `snapshot`, `provision`) is
 * answered by one reply frame on its standard output. `exec` runs a command of the task through the host's own runner (its
 * boundary, sandbox, setup, layers): its output is the command's own, streamed as it comes, its
 * exit status the command's; its standard input stays open while the coordinator's ssh lives,
 * and its end (the connection lost, the coordinator's run ended) ends the command. The caller's
 * own input, when it is forwarded, follows the `exec` frame as frames of its own (input.ts).
 */

import type { WarrenConfig } from '../../config/schema.js';
import type { TaskStatus } from '../../provision/status/status.js';
import type { StepResult } from '../commands.js';

/** Where a coordinator's repository lives on the host: `<home>/remote/<project>/repo`. */
export type ProjectName = string;

export type RemoteRequest =
  | { op: 'prepare'; v: 1; project: ProjectName }
  | {
      op: 'create';
      v: 1;
      project: ProjectName;
      type: string;
      id: string;
      /** The commit the task starts from, pushed there first. */
      base: string;
      sandbox?: 'none' | 'bwrap' | 'container';
      /** The hash of the settings the coordinator's user trusted: the host trusts that set, no other. */
      trusted?: string;
    }
  | {
      op: 'exec';
      v: 1;
      project: ProjectName;
      id: string;
      kind: string;
      label: string;
      argv: string[];
      timeoutMs?: number;
      env?: Record<string, string>;
      stdin?: string;
      /** The caller's own input follows this frame, as input frames (input.ts); its end is a frame of its own. */
      input?: true;
      /** A coding agent's run (`warren run`): placed on the host's own paths there (remote-agent.ts). */
      agent?: AgentFrame;
    }
  | { op: 'commit'; v: 1; project: ProjectName; id: string; message?: string; noVerify?: boolean }
  | { op: 'report'; v: 1; project: ProjectName; id: string }
  | { op: 'remove'; v: 1; project: ProjectName; id: string }
  | { op: 'agent-state'; v: 1; project: ProjectName; id: string; agent: string; run: string }
  | { op: 'worktree'; v: 1; project: ProjectName; id: string }
  | { op: 'list'; v: 1; project: ProjectName }
  | { op: 'snapshot'; v: 1; project: ProjectName; id: string }
  | {
      op: 'provision';
      v: 1;
      project: ProjectName;
      id: string;
      /** The task's base: the host's main checkout is put there first, as at `create`. */
      base: string;
      refresh?: boolean;
      /** The hash of the settings the coordinator's user trusted, as at `create`. */
      trusted?: string;
    }
  | GateRequest;

/**
 * `gate`: the merge queue's gate of a batch run on this host (src/queue/gate-host.ts here,
 * src/cli/ssh-host-gate.ts there). The integrated commit was pushed to `gateRef(gate)` first;
 * the commands are the coordinator's, from the warren.yaml its user trusted — never the host's
 * checkout's.
 */
export interface GateRequest {
  op: 'gate';
  v: 1;
  project: ProjectName;
  /** The integration workspace's id there (`queue-…`), the ref's name too. */
  gate: string;
  commit: string;
  sandbox: 'none' | 'bwrap' | 'container';
  /** The verify steps the gate runs (`land.gate`, else the required ones). */
  steps: WarrenConfig['verify'];
  /** The coordinator's setup (the gate picks its install and `gate: true` steps from it) and services. */
  setup: WarrenConfig['setup'];
  services?: WarrenConfig['services'];
}

/** Where the coordinator pushes the integrated commit for a gate there (dropped once the gate is done). */
export const gateRef = (gate: string): string => `refs/warren/gate/${gate}`;

/** A log of the gate there, sent back: its file's name and its text (the end of it, past 8 MiB). */
export interface SentLog {
  name: string;
  text: string;
}

/** `gate`'s answer: how the gate went there. */
export interface GateRan {
  passed: boolean;
  results: StepResult[];
  snapshots: {
    path: string;
    key: string | null;
    lockfile: string | null;
    how: 'main' | 'reused' | 'installed' | 'unmatched';
  }[];
  setupFailed: boolean;
  log: SentLog | null;
  setupLog: SentLog | null;
}

export type RemoteReply =
  { ok: true; data: unknown } | { ok: false; error: { code: string; message: string; hint?: string } };

/** `prepare`'s answer: the repository the coordinator pushes to. */
export interface Prepared {
  repo: string;
}

/** `create`'s answer. */
export interface Created {
  path: string;
  branch: string;
  state: string;
  /** The task's port block there, taken by the host's `new` (absent from a host's warren before it said). */
  ports?: HostPorts | null;
}

/** A port block on the host: its first port and how many. */
export interface HostPorts {
  first: number;
  count: number;
}

/** `report`'s answer: where the task stands there. */
export interface Report {
  exists: boolean;
  head: string | null;
  /** Uncommitted changes in the remote workspace. */
  dirty: boolean;
  path: string | null;
  /** A run of the task there still going (the coordinator's connection was lost). */
  running: boolean;
}

/** `list`'s answer: the tasks the host keeps for the project (none when it never had it). */
export interface Listed {
  tasks: string[];
}

/** `commit`'s answer. */
export interface Committed {
  commit: string | null;
  head: string;
}

/**
 * An agent's run sent to the host: the coordinator's paths of its state folder, final-result
 * marker and prompt file, which the host replaces (in argv and environment) by its own; the
 * user's variables that reach the agent's model, with their values here.
 */
export interface AgentFrame {
  name: string;
  /** The coordinator's run: the host keeps how the agent ended under it, for `agent-state`. */
  run: string;
  /** The agent's state folder here (null: an agent that keeps none); the host's own is used there. */
  home: string | null;
  /** The final-result marker here; the host watches its own. */
  done: string;
  graceMs: number;
  /** The names of the user's variables the agent is given in a sandbox (AGENT_ENV), and their values here. */
  passEnv: string[];
  values: Record<string, string>;
  /** A prompt given as a file (aider, `prompt: file`): its path here and its text. */
  prompt?: { file: string; text: string };
}

/** `agent-state`'s answer: how the agent's run ended there, and its transcript. */
export interface AgentState {
  /** Ended by the host's warren after its final result (the exit status was made 0 there). */
  endedAfterFinal: boolean;
  leftovers: string[];
  /** The conversation (codex's is read after its run). */
  session: string | null;
  /** The transcript, relative to the agent's state folder, and its text; null when the CLI wrote none. */
  transcript: { file: string; text: string } | null;
}

/**
 * `worktree`'s answer: the workspace there as it is. Its uncommitted work, untracked files
 * included, is a commit on `head` at `refs/warren/worktree/<id>` there (`commit` is `head` when
 * there is none), for `status` and `diff` here to read without moving anything.
 */
export interface RemoteWorktree {
  head: string;
  commit: string;
  /** `git status` there: each changed path and its two-letter code. */
  tracked: { code: string; path: string }[];
  /** The host's `warren status` of the paths it provisioned there (absent from a host's warren before it said). */
  provisioned?: TaskStatus['provisioned'];
  stale?: boolean;
  staleLockfiles?: TaskStatus['staleLockfiles'];
}

/** Where the host keeps the workspace's uncommitted work as a commit (`worktree`). */
export const worktreeRef = (id: string): string => `refs/warren/worktree/${id}`;

/**
 * `snapshot`'s answer, for `rm --discard` here: the workspace there as `rm --discard` archives it
 * (its files, untracked included, provisioned and ignored paths left out; and its index), as a
 * commit on `head` at `refs/warren/discard/<id>` there — its tree the files, its second parent a
 * commit of the index (of `head`'s tree when `indexKept` is false: unmerged paths). Made under
 * the task's lock there: a run going there refuses it (LOCK_HELD).
 */
export interface Snapshot {
  head: string;
  commit: string;
  indexKept: boolean;
  /** Uncommitted changes there (`git status` entries). */
  changes: number;
}

/** Where the host keeps `snapshot`'s commit until the task is removed there. */
export const snapshotRef = (id: string): string => `refs/warren/discard/${id}`;

/** A host's event of the task, recorded there during a request, for the coordinator to record too. */
export interface HostEvent {
  kind: string;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/**
 * `provision`'s answer: the host's `warren provision` of the task (ProvisionOutcome, src/provision/
 * operations.ts), the lines it said and the task's events it recorded there meanwhile.
 */
export interface HostProvisioned {
  outcome: unknown;
  lines: string[];
  events: HostEvent[];
}
