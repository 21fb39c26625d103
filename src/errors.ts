/**
 * The one error type users see. `code` is stable (scripts match on it), `message` says what
 * happened and what was left as it was, `hint` says what to do next. Programmer errors stay
 * plain `Error`.
 */

/** Each code maps to the exit status the CLI uses: 2 bad input (nothing touched), 1 refused/failed, 124 timed out. */
export const ERROR_CODES = {
  // bad input or usage: nothing was touched
  USAGE: 2,
  ID_INVALID: 2,
  TYPE_INVALID: 2,
  BRANCH_INVALID: 2,
  DURATION_INVALID: 2,
  CONFIG_INVALID: 2,
  PATH_UNSAFE: 2,
  NOT_A_REPO: 2,
  HOME_NOT_OWNED: 2,
  // the sandbox a task asks for needs a tool this machine lacks (a container: podman)
  RUNNER_UNAVAILABLE: 2,
  // `--runner ssh:NAME` names a host $WARREN_HOME/config.yaml does not declare
  HOST_UNKNOWN: 2,
  // a name given that names nothing warren has (a task, an agent, a task's service): bad input too
  TASK_NOT_FOUND: 2,
  AGENT_UNKNOWN: 2,
  SERVICE_UNKNOWN: 2,
  // refusals and failures
  TASK_EXISTS: 1,
  TASK_STATE: 1,
  BRANCH_EXISTS: 1,
  BRANCH_UNLANDED: 1,
  BRANCH_CHECKED_OUT: 1,
  BASE_UNKNOWN: 1,
  BASE_DIVERGED: 1,
  LOCK_HELD: 1,
  LOCK_TIMEOUT: 1,
  PATH_ESCAPE: 1,
  WORKSPACE_EXISTS: 1,
  WORKSPACE_DIRTY: 1,
  WORKSPACE_MOUNTED: 1,
  WORKSPACE_TAMPERED: 1,
  OUT_OF_SCOPE: 1,
  OWNERSHIP_MISMATCH: 1,
  REMOVE_INCOMPLETE: 1,
  CREATE_FAILED: 1,
  SETUP_FAILED: 1,
  VERIFY_FAILED: 1,
  PROVISION_FAILED: 1,
  HOOKS_CHANGED: 1,
  PROTECTED_POLICY_INVALID: 1,
  LAND_CONFLICT: 1,
  SYNC_CONFLICT: 1,
  NOTHING_TO_SYNC: 1,
  GATE_FAILED: 1,
  CHECKOUT_DIRTY: 1,
  NOTHING_TO_LAND: 1,
  NOTHING_TO_REVIEW: 1,
  POLICY_INVALID: 1,
  SANDBOX_UNAVAILABLE: 1,
  RUNNER_WORK_REFUSED: 1,
  // an SSH task's remote side failed, or its connection was lost (src/run/ssh/)
  REMOTE_FAILED: 1,
  // commits fetched from an SSH task's host failed the coordinator's check: the task's branch did not move
  REMOTE_COMMITS_REFUSED: 1,
  SANDBOX_REQUIRED: 1,
  PORTS_EXHAUSTED: 1,
  UNTRUSTED_COMMANDS: 1,
  AGENT_NO_SESSION: 1,
  COMMAND_FAILED: 1,
  TOKEN_FILE_UNSAFE: 1,
  // the machine refused a write: a full disk, a read-only file system, a state database kept locked
  DISK_FULL: 1,
  READ_ONLY: 1,
  STATE_LOCKED: 1,
  STATE_UNAVAILABLE: 1,
  SERVICE_FAILED: 1,
  SERVICE_UNAVAILABLE: 1,
  // git failures, classified from stderr by src/git/errors.ts
  GIT_FAILED: 1,
  GIT_LOCKED: 1,
  GIT_TIMEOUT: 1,
  GIT_NOT_FOUND: 1,
  GIT_WORKTREE_EXISTS: 1,
  GIT_BRANCH_EXISTS: 1,
  GIT_PATH_EXISTS: 1,
  GIT_DIRTY: 1,
  GIT_UNKNOWN_REF: 1,
  // a supervised command ran past its timeout
  TIMED_OUT: 124,
  INTERNAL: 1,
} as const satisfies Record<string, 0 | 1 | 2 | 124>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface WarrenErrorOptions {
  hint?: string;
  cause?: unknown;
  /** Extra facts for `--json` consumers (paths, commits, holders). */
  details?: Record<string, unknown>;
}

export class WarrenError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: WarrenErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WarrenError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  get exitCode(): 0 | 1 | 2 | 124 {
    return ERROR_CODES[this.code];
  }

  toJSON(): { code: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

export function isWarrenError(err: unknown, code?: ErrorCode): err is WarrenError {
  return err instanceof WarrenError && (code === undefined || err.code === code);
}
