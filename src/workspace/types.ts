import type { Task } from '../state/types.js';
import type { MountEntry, RunMount } from '../system/mounts.js';
import type { WarrenConfig } from '../config/schema.js';
import type { UserConfig } from '../config/user-schema.js';
import type { WarrenError } from '../errors.js';
import type { Repository } from '../git/repo.js';
import type { WorktreeSnapshot } from '../git/snapshot.js';
import type { Store } from '../state/store.js';
import type { Reporter } from './reporter.js';

/**
 * The workspace core's types: the project context every command works in, and what the
 * features plug into a task's life.
 */

/** Everything a command needs about one repository: read once, before any mutation. */
export interface ProjectContext {
  repo: Repository;
  key: string;
  config: WarrenConfig;
  /** Canonical workspace root (its parent resolved; the root itself must not be a symlink). */
  root: string;
  store: Store;
  /** The user's own settings (`$WARREN_HOME/config.yaml`), which no repository can set. */
  user: UserConfig;
  /** The features' steps, in order (src/composition.ts composes warren's own). */
  lifecycle: Lifecycle;
  reporter: Reporter;
  /**
   * Set only when opened with `lenientConfig` and warren.yaml is invalid: the defaults stand in
   * (the default workspace root among them), and this says what is wrong with the file.
   */
  configProblem?: WarrenError;
}

/**
 * What the features (provisioning, landing, execution, audit) add to a workspace's life, as
 * plain ordered lists. One module composes them (src/composition.ts) and hands the result to
 * every command through the project context: the order is read in one place, and a test can
 * pass its own list — a step that fails, say — without touching a global.
 */

/** What `warren new` (and `restore`) was asked for, as the features' create steps see it. */
export interface CreateOptions {
  type: string;
  id: string;
  /** Default: the branch checked out in the main worktree. */
  base?: string;
  /** Fetch and fast-forward the base first (default true). */
  sync?: boolean;
  /** Run setup commands (default true). */
  setup?: boolean;
  /** This task's sandbox, overriding warren.yaml's `sandbox:` (stored on the task). */
  sandbox?: 'none' | 'bwrap' | 'container';
  /** Refuse to create a medium-or-higher risk task that would run without a sandbox. */
  requireSandbox?: boolean;
  /** Where the task's processes run: `ssh:NAME`, a host of the user's config.yaml (stored on the task). */
  runner?: string;
  /**
   * Aborted (ctrl-c): `new` stops before its next step and undoes what it made. A task that
   * already reached a state of its own (setup ran and failed) is kept.
   */
  signal?: AbortSignal;
  /** `restore`: the archive's stamp (archive.ts's archiveStamp), to find what features saved with it (`RemoveStep.save`). */
  restoredFrom?: string;
}

/** A step of `warren new`, after the worktree exists and before the task is `ready`. */
export interface CreateStep<P = unknown> {
  name: string;
  /**
   * A guard read before anything is made (no lock, file, row or branch yet): throwing refuses
   * the whole `new` with nothing to undo. Pure reads only.
   */
  check?(ctx: ProjectContext, options: CreateOptions): Promise<void>;
  /**
   * Reads that do not need the workspace (e.g. which paths to provision from the main
   * checkout). They run while git creates the worktree; a failure rolls creation back. A value
   * with `close()` (a host's warren started ahead, a container being made) is closed, and what
   * `close` returns awaited, once `new` ends and before the task's lock is let go.
   */
  prepare?(ctx: ProjectContext, options: CreateOptions): Promise<P>;
  /**
   * Work that needs the worktree's records — its folder, `.git` file and git directory — but
   * not its files (a container made with them bound), started as soon as git made them, while
   * git checks the files out. `wanted`, asked before git runs, says whether this task has any:
   * the worktree is then made in two steps (records, then files). `start` gets `prepare`'s value
   * and must not throw: what it starts is that value's, which `run` and `close` wait for. A
   * checkout made otherwise (copy-on-write) calls no `start`: `run` starts the work itself.
   */
  whileCheckingOut?: {
    wanted(ctx: ProjectContext, options: CreateOptions): boolean;
    start(ctx: ProjectContext, task: Task, options: CreateOptions, prepared: P): void;
  };
  /** Throwing rolls the whole creation back; leaving the task in another state (setup_failed) keeps it. */
  run(ctx: ProjectContext, task: Task, options: CreateOptions, prepared: P): Promise<void>;
}

/**
 * How a workspace's tracked files are made in place of a plain `git worktree add` (copy-on-write
 * checkouts). Runs where the worktree would be added, with the task's row inserted.
 */
export interface CheckoutStep {
  name: string;
  /** True when it made the worktree and its branch; false (having undone its own work and said why) to let `git worktree add` make it. */
  add(ctx: ProjectContext, task: Task): Promise<boolean>;
}

/** A workspace's files read from elsewhere for `rm --discard`'s archive (RemoveStep.snapshot). */
export interface HeldSnapshot {
  snapshot: WorktreeSnapshot;
  /** Its uncommitted changes there, as `git status` counts them. */
  changes: number;
  /** Once the archive holds its objects (or the removal was refused): what held them here is dropped. */
  release(): Promise<void>;
}

/** What a feature plugs into removal (`rm`, and the rollback of a failed `new`). */
export interface RemoveStep {
  name: string;
  /** True when this mount inside the workspace is the feature's own (taken off by `release`). */
  ownsMount?(ctx: ProjectContext, task: Task, mount: MountEntry): boolean;
  /**
   * Before removal's guards read the task: work of the task the feature holds outside the
   * workspace (an agent's commits inside its container) brought onto its branch, so that the
   * guards count it as the task's work.
   */
  collect?(ctx: ProjectContext, task: Task): Promise<void>;
  /**
   * After every guard passed, before git removes the worktree: teardown, unmount. Returns the
   * problems it met (a mount that would not come off), each in words; removal then refuses.
   * `discarded`: `rm --discard`, its archive made (the workspace's files saved in it).
   */
  release?(ctx: ProjectContext, task: Task, discarded?: { archive: string }): Promise<readonly string[]>;
  /**
   * True when the workspace's files themselves live in what this step releases (a cow
   * checkout's overlay, a host's workspace): it is released after every other step, and after
   * what removal saves from the workspace (`rm --discard`'s archive), which must still see the files.
   */
  holdsWorkspace?: boolean;
  /**
   * `rm --discard`, before removal's guards read the task: the workspace's files as they are,
   * when they live elsewhere (a host's workspace), brought here as trees for the archive — and
   * the task's commits there onto its branch first. Null: none elsewhere for this task.
   * Throwing refuses the removal with nothing changed.
   */
  snapshot?(ctx: ProjectContext, task: Task): Promise<HeldSnapshot | null>;
  /**
   * `rm --discard`, before any release: saves what the feature keeps outside the workspace and
   * release would destroy (a task's databases, dumped), under `stamp` (an archive stamp, at or
   * before the archive's own), for `restore` to bring back. Throwing refuses the removal.
   */
  save?(ctx: ProjectContext, task: Task, stamp: string): Promise<void>;
  /** After the worktree and directory are gone: ports, layers. */
  afterRemove?(ctx: ProjectContext, task: Task): Promise<void>;
  /** True when the task's work is on the base although not by ancestry (squash-landed). */
  isLanded?(ctx: ProjectContext, task: Task): Promise<boolean>;
}

export interface GcCollected {
  removed: { kind: string; path?: string; id?: string; branch?: string; action: string }[];
  kept: { path: string; kind: string; reason: string }[];
}

/** What `gc` was asked for beyond its default. */
export interface GcAsk {
  /** `--hosts`: every host in config.yaml is asked for workspaces of this repository no task here knows. */
  hosts: boolean;
}

/** What a feature leaves beside the workspaces and collects in `gc` (snapshots, logs). */
export interface GcStep {
  name: string;
  collect(ctx: ProjectContext, ask: GcAsk): Promise<GcCollected>;
}

/**
 * Before any command runs in a workspace, after every guard passed: e.g. mount a cow layer
 * again after a reboot. May return mounts that exist only in the run's own namespace.
 */
export interface BeforeRunStep {
  name: string;
  run(ctx: ProjectContext, task: Task): Promise<readonly RunMount[]>;
  /** Run before a service of the task starts, too (default); false for a step that starts services itself. */
  beforeServices?: boolean;
}

/**
 * After any command of a task has ended, its processes gone: what a feature cleans up of the run
 * (a database session its client left behind). Problems are said, never thrown: the run has ended.
 */
export interface AfterRunStep {
  name: string;
  run(ctx: ProjectContext, task: Task): Promise<void>;
}

/**
 * What a feature gives every process of a task (src/run/boundary.ts asks each): variables it sees
 * (a service's DATABASE_URL) and loopback addresses its sandbox lets it reach (the service's port).
 * Pure reads of the task's facts; this is how the runner learns of services without importing them.
 */
export interface ReachStep {
  name: string;
  env(ctx: ProjectContext, task: Task): Record<string, string>;
  /** `host:port`, reachable from inside a sandbox without the network. */
  addresses(ctx: ProjectContext, task: Task): string[];
}

/** One section of `warren audit ID`, owned by the feature that knows the facts. */
export interface AuditSection {
  name: string;
  collect(ctx: ProjectContext, task: Task): Promise<{ data: unknown; lines: string[] }>;
}

export interface Lifecycle {
  create: readonly CreateStep<unknown>[];
  remove: readonly RemoveStep[];
  gc: readonly GcStep[];
  beforeRun: readonly BeforeRunStep[];
  /** Absent: nothing to clean up after a run. */
  afterRun?: readonly AfterRunStep[];
  audit: readonly AuditSection[];
  reach: readonly ReachStep[];
  /** Replaces the plain `git worktree add` when it can; absent, every worktree is a plain one. */
  checkout?: CheckoutStep;
}

/** What one feature adds to a task's life besides what it makes and removes. */
interface FeatureSteps {
  gc?: Readonly<Record<string, GcStep>>;
  beforeRun?: BeforeRunStep;
  afterRun?: AfterRunStep;
  audit?: Readonly<Record<string, AuditSection>>;
  reach?: ReachStep;
}

/**
 * One feature's part in a task's life, declared in one place (src/composition.ts): what `new`
 * makes (its create steps, or the checkout it makes in place of `git worktree add`) together
 * with the removal step that undoes it, what `gc` collects, what runs before and after a
 * command, what `warren audit` shows. A feature that makes something and declares no removal
 * does not compile; the lifecycle then places each step in its list, in order.
 */
export type Feature = FeatureSteps &
  (
    | { create?: Readonly<Record<string, CreateStep<unknown>>>; checkout?: CheckoutStep; remove: RemoveStep }
    | { create?: never; checkout?: never; remove?: RemoveStep }
  );

/** A lifecycle with nothing added: a bare worktree per task. */
export const BARE_LIFECYCLE: Lifecycle = { create: [], remove: [], gc: [], beforeRun: [], audit: [], reach: [] };
