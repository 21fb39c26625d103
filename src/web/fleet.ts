import path from 'node:path';
import { mapLimited } from '../util/map-limited.js';
import { conflictsOf, lastMap } from '../conflicts/view.js';
import type { PairResult } from '../conflicts/types.js';
import { isWarrenError } from '../errors.js';
import { provisionedChanges, type ProvisionedStatus } from '../provision/status/status.js';
import type { PortBlock } from '../run/ports.js';
import type { Store } from '../state/store.js';
import type { Task } from '../state/types.js';
import { openProjectWith, type ProjectContext } from '../workspace/context.js';
import { branchTips, changeCount, driftBetween } from '../workspace/git-view.js';
import { scan, type Stray } from '../workspace/scan.js';
import { portEndpoints, listeningPorts, type ServicePort, type TaskEndpoint } from './endpoints.js';
import { lastRun, type LastRun } from './run-events.js';
import { listQueue, type QueueListing } from '../queue/operations.js';
import { describeCommand } from '../config/trust.js';
import { trustState } from '../trust/trust.js';
import type { RunKind } from '../run/records.js';
import { listeningPort, serviceKind } from '../services/kinds.js';

/**
 * One row of the fleet table: the task record and what its events say, read from the database
 * alone so that the fleet answers at once. What takes reading git and each workspace (drift,
 * changes, provisioned paths) is {@link TaskDetails}, which the page asks for next.
 */
export interface FleetTask {
  project: string;
  id: string;
  type: string;
  branch: string;
  base: string;
  path: string;
  state: string;
  /** The state as the page shows it: what runs in the task now (`agent running`), else `state`. */
  shownState: string;
  createdAt: string;
  updatedAt: string;
  ports: PortBlock | null;
  /** What it serves, as links: its services by name, and the other listening ports of its block. */
  endpoints: TaskEndpoint[];
  lastRun: LastRun | null;
  /** The task's latest verify: passed, or which commands failed (a failed required one fails it). */
  verify: { at: string; passed: boolean; failed: { id: string; required: boolean }[] } | null;
  /** The task's newest merge-queue entry: waiting, being tested, or why it bounced. */
  queue: QueueRow | null;
  /** What `land` put on the base: the page says "landed as <commit>". */
  landed: { commit: string; base: string; at: string } | null;
  /** Whom its work does not merge with (a task, or `@base`) and where: the conflict map as last computed. */
  conflicts: { other: string; paths: string[] }[];
}

/** What reading git and the workspace says about a task: slower than the record, so asked for apart. */
export interface TaskDetails {
  id: string;
  behind: number | null;
  ahead: number | null;
  changes: number | null;
  provision: ProvisionedPath[];
}

export type QueueRow = QueueListing['entries'][number];

export interface ProvisionedPath {
  path: string;
  mode: string;
  isolated: boolean;
  /** Changes inside it since it was provisioned, as `warren status` counts them; null when they could not be read. */
  changed: number | null;
}

export interface FleetProject {
  /** warren's internal key for the repository (`<name>-<hash>`). */
  key: string;
  /** What people call it: its main checkout's folder name. */
  name: string;
  root: string;
  tasks: FleetTask[];
  /** The merge queue: who works it, and its recent entries (oldest first). */
  queue: QueueListing;
  /** Whether warren.yaml's commands are trusted; when not, the set `warren trust` would show. */
  trust: TrustView | null;
  /** Set when the project could not be read (repository moved, config invalid). */
  error: string | null;
}

export interface TrustView {
  trusted: boolean;
  /** The hash the Trust button sends back: only this set is trusted. */
  hash: string;
  /** Each command and setting as `warren trust` lists it (`setup deps: npm ci`). */
  commands: string[];
  /** Those new or changed since the set trusted before (all, the first time). */
  changed: string[];
  settingsChanged: string[];
  trustedAt: string | null;
}

/** The repository's trust, as the page shows it. */
export function trustView(ctx: ProjectContext): TrustView {
  const state = trustState(ctx);
  return {
    trusted: state.trusted,
    hash: state.hash,
    commands: state.commands.map(describeCommand),
    changed: state.changed.map(describeCommand),
    settingsChanged: state.settingsChanged,
    trustedAt: state.trustedAt,
  };
}

export interface Fleet {
  generatedAt: string;
  projects: FleetProject[];
}

/** Pure: the fleet's view of `warren status`'s per-path changes. */
export function provisionOf(statuses: readonly ProvisionedStatus[]): ProvisionedPath[] {
  return statuses.map((p) => ({
    path: p.path,
    mode: p.mode,
    isolated: p.isolated,
    changed: p.unknown === undefined ? p.changedCount : null,
  }));
}

/** The changes inside the provisioned paths; a task whose workspace cannot be read shows its records with unknown counts. */
async function provisionedOf(task: Task): Promise<ProvisionedPath[]> {
  try {
    return provisionOf(await provisionedChanges(task));
  } catch {
    return (task.data.provision ?? []).map((r) => ({
      path: r.path,
      mode: r.mode,
      isolated: r.isolated,
      changed: null,
    }));
  }
}

/** The labels of what runs in a task, for the state the page shows. */
const RUNNING: Record<RunKind, string> = {
  agent: 'agent running',
  setup: 'setting up',
  verify: 'verifying',
  exec: 'command running',
  teardown: 'tearing down',
  hook: 'hook running',
};

/** Pure: what the page shows as a task's state: what runs in it now, else its recorded state. */
export function shownState(state: string, run: Pick<LastRun, 'kind' | 'running'> | null): string {
  return run?.running && state !== 'removing' ? RUNNING[run.kind] : state;
}

/** The row of one task, from the database and the kernel's socket table: no git, no walk of the workspace. */
export function fleetTask(
  ctx: ProjectContext,
  task: Task,
  queue: QueueListing | null = listQueue(ctx),
  pairs: readonly PairResult[] = lastMap(ctx),
): FleetTask {
  const run = lastRun(ctx.store.taskEvents(task.project, task.id, 200));
  return {
    project: task.project,
    id: task.id,
    type: task.type,
    branch: task.branch,
    base: task.base,
    path: task.path,
    state: task.state,
    shownState: shownState(task.state, run),
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    ports: task.data.ports ?? null,
    endpoints: portEndpoints(task.data.ports ?? null, listeningPorts(), servicePorts(task)),
    lastRun: run,
    verify: verifyOf(task),
    queue: queue?.entries.findLast((e) => e.id === task.id) ?? null,
    landed: task.data.landed
      ? { commit: task.data.landed.commit, base: task.data.landed.base, at: task.data.landed.at }
      : null,
    conflicts: conflictsOf(pairs, task.id).with,
  };
}

/** Pure: the task's services that listen on a port of their own (a dev server, redis), by port. */
export function servicePorts(task: Pick<Task, 'data'>): ServicePort[] {
  return Object.entries(task.data.services ?? {}).flatMap(([name, fact]) => {
    const port = listeningPort(fact);
    return port === null ? [] : [{ name, port, http: serviceKind(fact.kind).http }];
  });
}

/** The commits of the tasks' bases and branches, read once for the fleet rather than once per task. */
export type Tips = Awaited<ReturnType<typeof branchTips>>;

/** Drift, changes and provisioned paths of one task: git and a walk of its provisioned paths. */
export async function taskDetails(ctx: ProjectContext, task: Task, tips?: Tips): Promise<TaskDetails> {
  const known = tips ?? (await branchTips(ctx.repo, [task.base], [task.branch]).catch(() => null));
  const base = known?.bases.get(task.base);
  const branch = known?.branches.get(task.branch);
  const [d, changes, provision] = await Promise.all([
    base && branch ? driftBetween(ctx.repo, base, branch).catch(() => null) : null,
    changeCount(ctx, task),
    provisionedOf(task),
  ]);
  return { id: task.id, behind: d?.behind ?? null, ahead: d?.ahead ?? null, changes, provision };
}

/** Pure: the task's recorded verify, reduced to what the fleet shows. */
export function verifyOf(task: Pick<Task, 'data'>): FleetTask['verify'] {
  const v = task.data.verify;
  if (!v) return null;
  return {
    at: v.at,
    passed: v.passed,
    failed: v.results.filter((r) => r.exitCode !== 0 || r.timedOut).map((r) => ({ id: r.id, required: r.required })),
  };
}

const DETAILS_CONCURRENCY = 4;

/** The fleet of one repository: its tasks as the database has them, its queue and its trust. */
export function projectFleet(ctx: ProjectContext): FleetProject {
  const queue = listQueue(ctx);
  const pairs = lastMap(ctx);
  return {
    key: ctx.key,
    name: path.basename(ctx.repo.root),
    root: ctx.repo.root,
    tasks: ctx.store.listTasks(ctx.key).map((task) => fleetTask(ctx, task, queue, pairs)),
    queue,
    trust: trustView(ctx),
    error: null,
  };
}

/** What the page fills the fleet in with: each task's drift, changes and provisioned paths, and the strays. */
export interface FleetDetails {
  project: string;
  generatedAt: string;
  tasks: TaskDetails[];
  strays: Stray[];
}

export async function projectDetails(ctx: ProjectContext): Promise<FleetDetails> {
  const tasks = ctx.store.listTasks(ctx.key);
  const tips = await branchTips(
    ctx.repo,
    tasks.map((t) => t.base),
    tasks.map((t) => t.branch),
  ).catch(() => ({ bases: new Map<string, string>(), branches: new Map<string, string>() }));
  // A few tasks at a time: each costs a git process and a walk, and the machine is busy running agents.
  const rows = await mapLimited(tasks, DETAILS_CONCURRENCY, (task) => taskDetails(ctx, task, tips));
  const { strays } = await scan(ctx);
  return { project: ctx.key, generatedAt: new Date().toISOString(), tasks: rows, strays };
}

/** Every project warren knows under WARREN_HOME; one that cannot be opened is shown with why. */
export async function allProjectsFleet(
  store: Store,
  via: Pick<ProjectContext, 'lifecycle' | 'reporter'>,
): Promise<Fleet> {
  const projects: FleetProject[] = [];
  for (const p of store.listProjects()) {
    try {
      projects.push(
        projectFleet(await openProjectWith(p.root, { lifecycle: via.lifecycle, store, reporter: via.reporter })),
      );
    } catch (err) {
      const message = isWarrenError(err) ? err.message : err instanceof Error ? err.message : String(err);
      projects.push({
        key: p.key,
        name: path.basename(p.root),
        root: p.root,
        tasks: [],
        queue: { processor: null, entries: [] },
        trust: null,
        error: message,
      });
    }
  }
  return { generatedAt: new Date().toISOString(), projects };
}
