import fs from 'node:fs';
import type { ProjectContext } from '../workspace/context.js';
import type { GcCollected } from '../workspace/types.js';
import { objectsOfProject, taskObjectsOn } from './ledger.js';
import { dropObjects, serverId } from './pg-database.js';
import { clusterDir, clusterRunning, stopCluster } from './pg-server.js';
import { currentTemplates, serverFor, templateOf } from './postgres-task.js';
import { stopOrphanProcesses } from './processes.js';
import { staleSeededDumps } from './pg-pod.js';

/**
 * `gc`: what warren made for services that no task holds any more — a process service's
 * daemon left by a task that is gone, a database or role the ledger names for a task that is
 * gone, a template no task was cloned from and the current seed no longer makes (a seed's
 * database kept for tasks in a cluster likewise) — and, once no
 * task of any project holds a database on it, warren's own PostgreSQL server is stopped.
 * Nothing the ledger does not name is touched.
 */
export async function collectServices(ctx: ProjectContext): Promise<GcCollected> {
  const out: GcCollected = { removed: [], kept: [] };
  const tasks = ctx.store.listTasks(ctx.key);
  // A merge queue gate's services are the gate's while its integration workspace is there (the queue removes both).
  const gates = safeList(ctx.root)
    .filter((n) => n.startsWith('.queue-'))
    .map((n) => n.slice('.queue-'.length));
  const live = new Set([...tasks.map((t) => t.id), ...gates]);
  // Process services of tasks that are gone.
  const orphans = await stopOrphanProcesses(ctx);
  for (const o of orphans.stopped)
    out.removed.push({
      kind: 'service',
      id: o.id,
      path: o.dir,
      action: `stopped service ${o.name} of removed task ${o.id}`,
    });
  for (const k of orphans.kept) out.kept.push({ kind: 'service', path: k.dir, reason: k.reason });
  // Databases and roles of tasks that are gone; templates nobody uses.
  const used = await currentTemplates(ctx);
  for (const name of tasks.flatMap((t) => Object.values(t.data.services ?? {}).flatMap((f) => templateOf(f) ?? [])))
    used.add(name);
  const rows = objectsOfProject(ctx.store, ctx.key).filter((r) =>
    r.taskId === null ? !used.has(r.name) : !live.has(r.taskId),
  );
  const byName = [...new Map(rows.map((r) => [`${r.server}\0${r.name}`, r])).values()];
  if (byName.length > 0) {
    let server;
    try {
      server = await serverFor(ctx, null);
    } catch (err) {
      for (const r of byName)
        out.kept.push({
          kind: 'database',
          path: r.name,
          reason: `its server cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
        });
      server = null;
    }
    for (const r of byName) {
      if (!server) break;
      if (serverId(server) !== r.server) {
        out.kept.push({
          kind: 'database',
          path: r.name,
          reason: `it is on ${r.server}, not on the server warren uses now (${serverId(server)})`,
        });
        continue;
      }
      try {
        await dropObjects(ctx.store, server, r.name);
        out.removed.push({
          kind: 'database',
          ...(r.taskId ? { id: r.taskId } : {}),
          path: r.name,
          action: `dropped database and role ${r.name}${r.taskId ? ` of removed task ${r.taskId}` : ' (a template no task uses, of a seed warren.yaml no longer has)'}`,
        });
      } catch (err) {
        out.kept.push({ kind: 'database', path: r.name, reason: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  // The seeds' databases kept for tasks in a cluster (the cluster's templates) that nothing uses.
  for (const file of await staleSeededDumps(ctx, tasks)) {
    fs.rmSync(file, { force: true });
    out.removed.push({
      kind: 'database',
      path: file,
      action: `removed ${file} (a seed's database kept for tasks in a cluster, of a seed warren.yaml no longer has)`,
    });
  }
  // A ledger row of a template is forgotten with it; stop warren's server once nothing is left on it.
  if (taskObjectsOn(ctx.store, 'warren') === 0 && clusterRunning(ctx.store.home)) {
    const stopped = await stopCluster(ctx.store.home);
    if (stopped && stopped.survivors.length === 0)
      out.removed.push({
        kind: 'postgres',
        path: clusterDir(ctx.store.home),
        action: "stopped warren's PostgreSQL server (no task holds a database on it)",
      });
  }
  if (out.removed.length > 0) {
    ctx.store.addEvent({
      project: ctx.key,
      kind: 'service.gc',
      message: out.removed.map((r) => r.action).join('; '),
      data: {
        dropped: out.removed.filter((r) => r.kind === 'database').map((r) => r.path ?? ''),
        stopped: out.removed.filter((r) => r.kind !== 'database').map((r) => r.path ?? ''),
      },
    });
  }
  return out;
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
