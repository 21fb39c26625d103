import path from 'node:path';
import { isWarrenError } from '../errors.js';
import { provisionedChanges, type ProvisionedStatus } from '../provision/status/status.js';
import type { PortBlock } from '../run/ports.js';
import type { Store } from '../state/store.js';
import type { Task } from '../state/types.js';
import { openProjectWith, type ProjectContext } from '../workspace/context.js';
import { baseTip, changeCount, drift } from '../workspace/git-view.js';
import { scan, type Stray } from '../workspace/scan.js';
import { portEndpoints, listeningPorts, type TaskEndpoint } from './endpoints.js';
import { lastRun, type LastRun } from './run-events.js';
import { listQueue, type QueueListing } from '../queue/operations.js';
import { describeCommand } from '../config/trust.js';
import { trustState } from '../run/trust.js';

/** One row of the fleet table: the task record plus what git and the events say about it. */
export interface FleetTask {
  project: string;
  id: string;
  type: string;
  branch: string;
  base: string;
  path: string;
  state: string;
  createdAt: string;
  updatedAt: string;
  behind: number | null;
  ahead: number | null;
  changes: number | null;
  provision: ProvisionedPath[];
  ports: PortBlock | null;
  /** What it serves, as links: listening ports of its block (and services, as they come). */
  endpoints: TaskEndpoint[];
  lastRun: LastRun | null;
  /** The task's latest verify: passed, or which commands failed (a failed required one fails it). */
  verify: { at: string; passed: boolean; failed: { id: string; required: boolean }[] } | null;
  /** The task's newest merge-queue entry: waiting, being tested, or why it bounced. */
  queue: QueueRow | null;
  /** What `land` put on the base: the page says "landed as <commit>". */
  landed: { commit: string; base: string; at: string } | null;
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
  strays: Stray[];
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

/** Base commits by base name, read once per fleet rather than once per task. */
export type BaseTips = Map<string, Promise<string | null>>;

export async function fleetTask(
  ctx: ProjectContext,
  task: Task,
  tips: BaseTips = new Map(),
  queue: QueueListing | null = listQueue(ctx),
): Promise<FleetTask> {
  if (!tips.has(task.base))
    tips.set(
      task.base,
      baseTip(ctx.repo, task.base).catch(() => null),
    );
  const base = await tips.get(task.base)!;
  const [d, changes, provision] = await Promise.all([
    drift(ctx.repo, task, base).catch(() => null),
    changeCount(ctx, task),
    provisionedOf(task),
  ]);
  return {
    project: task.project,
    id: task.id,
    type: task.type,
    branch: task.branch,
    base: task.base,
    path: task.path,
    state: task.state,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    behind: d?.behind ?? null,
    ahead: d?.ahead ?? null,
    changes,
    provision,
    ports: task.data.ports ?? null,
    endpoints: portEndpoints(task.data.ports ?? null, listeningPorts()),
    lastRun: lastRun(ctx.store.taskEvents(task.project, task.id, 200)),
    verify: verifyOf(task),
    queue: queue?.entries.findLast((e) => e.id === task.id) ?? null,
    landed: task.data.landed
      ? { commit: task.data.landed.commit, base: task.data.landed.base, at: task.data.landed.at }
      : null,
  };
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

const FLEET_CONCURRENCY = 4;

/** Maps with at most `limit` calls in flight, keeping the input order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export async function projectFleet(ctx: ProjectContext): Promise<FleetProject> {
  const tasks = ctx.store.listTasks(ctx.key);
  const tips: BaseTips = new Map();
  // A few tasks at a time: each costs two git processes, and the machine is busy running agents.
  const queue = listQueue(ctx);
  const rows = await mapLimited(tasks, FLEET_CONCURRENCY, (task) => fleetTask(ctx, task, tips, queue));
  const { strays } = await scan(ctx);
  return {
    key: ctx.key,
    name: path.basename(ctx.repo.root),
    root: ctx.repo.root,
    tasks: rows,
    strays,
    queue,
    trust: trustView(ctx),
    error: null,
  };
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
        await projectFleet(await openProjectWith(p.root, { lifecycle: via.lifecycle, store, reporter: via.reporter })),
      );
    } catch (err) {
      const message = isWarrenError(err) ? err.message : err instanceof Error ? err.message : String(err);
      projects.push({
        key: p.key,
        name: path.basename(p.root),
        root: p.root,
        tasks: [],
        strays: [],
        queue: { processor: null, entries: [] },
        trust: null,
        error: message,
      });
    }
  }
  return { generatedAt: new Date().toISOString(), projects };
}
