/**
 * What the coordinator and the host's warren (`warren runner --stdio`) say to each other: one
 * JSON frame a line. A request is the first line of the remote's standard input; a control
 * request (`prepare`, `create`, `commit`, `report`, `remove`) is answered by one reply frame on
 * its standard output. `exec` runs a command of the task through the host's own runner (its
 * boundary, sandbox, setup, layers): its output is the command's own, streamed as it comes, its
 * exit status the command's; its standard input stays open while the coordinator's ssh lives,
 * and its end (the connection lost, the coordinator's run ended) ends the command.
 */

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
    }
  | { op: 'commit'; v: 1; project: ProjectName; id: string; message?: string; noVerify?: boolean }
  | { op: 'report'; v: 1; project: ProjectName; id: string }
  | { op: 'remove'; v: 1; project: ProjectName; id: string };

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

/** `commit`'s answer. */
export interface Committed {
  commit: string | null;
  head: string;
}
