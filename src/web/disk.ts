import path from 'node:path';
import type { Task } from '../state/types.js';
import { diskUsage } from '../system/disk-usage.js';
import type { ProjectContext } from '../workspace/context.js';
import { mapLimited } from '../util/map-limited.js';
import { modeKind } from '../provision/modes/kinds.js';

/**
 * The fleet's disk and age: what each task's workspace takes on disk, its copy-on-write layers
 * counted where they live (a cow path's or a cow checkout's upper layer under WARREN_HOME, not
 * the snapshot they share), its logs and agent state, how old it is and how long since anything
 * happened in it. Read on demand (a walk of every workspace is not for every refresh).
 */

export interface DiskRow {
  id: string;
  state: string;
  createdAt: string;
  /** The newest thing warren recorded about the task (a run, a verify, a land). */
  lastActivity: string;
  landed: boolean;
  /** The folders counted, each part apart: the workspace (not crossing into mounts), its cow upper layers, its logs. */
  paths: { workspace: string[]; layers: string[]; logs: string[] };
  bytes: { workspace: number; layers: number; logs: number; total: number };
  /** Entries that could not be read while counting: the numbers are then a lower bound. */
  unreadable: number;
}

export interface FleetDisk {
  project: string;
  /** The repository's name (its main checkout's folder). */
  name: string;
  generatedAt: string;
  tasks: DiskRow[];
  total: number;
  /** Tasks in state landed: the one-click removal takes them. */
  landed: string[];
}

/** Pure: the folders that hold a task's bytes, by part. */
export function taskPaths(task: Task, home: string): DiskRow['paths'] {
  const checkout = task.data.checkout;
  const layers = (task.data.provision ?? []).flatMap((r) => (modeKind(r.mode).layered && r.upper ? [r.upper] : []));
  return {
    // A cow checkout's folder is an overlay mount: its own bytes are its upper layer, not the snapshot below.
    workspace: checkout ? [] : [task.path],
    layers: checkout ? [checkout.upper, ...layers] : layers,
    logs: [path.join(home, 'logs', task.project, task.id)],
  };
}

async function taskDisk(ctx: ProjectContext, task: Task): Promise<DiskRow> {
  const paths = taskPaths(task, ctx.store.home);
  // One set of inodes per task: a file linked into two of its parts is counted once, as du does.
  const seen = new Set<string>();
  const workspace = await diskUsage(paths.workspace, seen);
  const layers = await diskUsage(paths.layers, seen);
  const logs = await diskUsage(paths.logs, seen);
  const newest = ctx.store.taskEvents(ctx.key, task.id, 1)[0]?.at;
  return {
    id: task.id,
    state: task.state,
    createdAt: task.createdAt,
    lastActivity: newest && newest > task.updatedAt ? newest : task.updatedAt,
    landed: task.state === 'landed',
    paths,
    bytes: {
      workspace: workspace.bytes,
      layers: layers.bytes,
      logs: logs.bytes,
      total: workspace.bytes + layers.bytes + logs.bytes,
    },
    unreadable: workspace.unreadable + layers.unreadable + logs.unreadable,
  };
}

export async function fleetDisk(ctx: ProjectContext): Promise<FleetDisk> {
  const tasks = ctx.store.listTasks(ctx.key);
  const rows = await mapLimited(tasks, 2, (t) => taskDisk(ctx, t));
  rows.sort((a, b) => b.bytes.total - a.bytes.total);
  return {
    project: ctx.key,
    name: path.basename(ctx.repo.root),
    generatedAt: new Date().toISOString(),
    tasks: rows,
    total: rows.reduce((n, r) => n + r.bytes.total, 0),
    landed: rows.filter((r) => r.landed).map((r) => r.id),
  };
}
