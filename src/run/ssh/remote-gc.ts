import { commitsNotOn } from '../../git/history.js';
import { otherRefTips } from '../../git/refs.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { GcCollected } from '../../workspace/types.js';
import { request } from './connection.js';
import { hostNamed, type Host } from './hosts.js';
import type { Listed, ProjectName, Report } from './protocol.js';
import { forgetRecord, projectRecords, type RemoteRecord } from './remote-records.js';
import { remoteProject } from './remote-task.js';

/**
 * `gc` of what a task that is gone here left on its host (a `remote-orphan`: its record with no
 * task, e.g. its workspace here deleted and its row forgotten by `gc`, or a `new` undone while
 * the host did not answer). Its workspace and branch there are removed — the host's own
 * `rm --discard` — only when nothing would be lost: no uncommitted change there, no run of it
 * going, and every commit of its branch there is here already. Otherwise it is kept, and why said.
 */
export async function collectRemoteOrphans(ctx: ProjectContext): Promise<GcCollected> {
  const removed: GcCollected['removed'] = [];
  const kept: GcCollected['kept'] = [];
  const home = ctx.store.home;
  for (const { id, record } of projectRecords(home, ctx.key)) {
    if (ctx.store.getTask(ctx.key, id)) continue;
    const where = `${record.host}:${record.path ?? record.repo ?? '(never made)'}`;
    try {
      const reason = await removeOrphan(ctx, id, record);
      if (reason === null)
        removed.push({ kind: 'remote-orphan', id, path: where, action: `removed on host ${record.host}` });
      else kept.push({ path: where, kind: 'remote-orphan', reason });
    } catch (err) {
      kept.push({
        path: where,
        kind: 'remote-orphan',
        reason: `host ${record.host} could not be asked (${err instanceof Error ? err.message : String(err)}); the next \`warren gc\` tries again`,
      });
    }
  }
  return { removed, kept };
}

/**
 * `gc --hosts`: what no record here knows — a workspace on a host whose task and record are both
 * gone here (this machine's WARREN_HOME lost or replaced, then its hosts declared again). Every
 * host in config.yaml is asked which tasks it keeps for this repository; each one no task and no
 * record here names is an orphan as above, removed there only when nothing would be lost. A host
 * that does not answer is said, and the rest go on.
 */
export async function collectUnknownOnHosts(ctx: ProjectContext): Promise<GcCollected> {
  const removed: GcCollected['removed'] = [];
  const kept: GcCollected['kept'] = [];
  const home = ctx.store.home;
  const known = new Set(projectRecords(home, ctx.key).map((r) => r.id));
  const project = remoteProject(ctx);
  for (const name of Object.keys(ctx.user.hosts ?? {})) {
    const host = hostNamed(ctx, name);
    let listed: Listed;
    try {
      listed = await request<Listed>(home, host, { op: 'list', v: 1, project });
    } catch (err) {
      kept.push({
        path: `${name}:`,
        kind: 'remote-unknown',
        reason: `host ${name} could not be asked which workspaces it keeps (${err instanceof Error ? err.message : String(err)}); the next \`warren gc --hosts\` asks again`,
      });
      continue;
    }
    for (const id of listed.tasks) {
      if (known.has(id) || ctx.store.getTask(ctx.key, id)) continue;
      try {
        const reason = await removeThere(ctx, id, host, project);
        if (reason === null)
          removed.push({ kind: 'remote-unknown', id, path: `${name}:`, action: `removed on host ${name}` });
        else kept.push({ path: `${name}:`, kind: 'remote-unknown', reason });
      } catch (err) {
        kept.push({
          path: `${name}:`,
          kind: 'remote-unknown',
          reason: `host ${name} could not be asked about task ${id} (${err instanceof Error ? err.message : String(err)}); the next \`warren gc --hosts\` asks again`,
        });
      }
    }
  }
  return { removed, kept };
}

/** Removes one orphan there and its record here; the reason it is kept instead, or null. */
async function removeOrphan(ctx: ProjectContext, id: string, record: RemoteRecord): Promise<string | null> {
  // Nothing was ever made there: only the record goes.
  const reason = record.repo === null ? null : await removeThere(ctx, id, hostNamed(ctx, record.host), record.project);
  if (reason === null) forgetRecord(ctx.store.home, ctx.key, id);
  return reason;
}

/**
 * Task `id`'s workspace and branch on `host` removed — the host's own `rm --discard` — only when
 * nothing would be lost: no run of it going, no uncommitted change, every commit of its branch
 * here already. The reason it is kept instead, or null.
 */
async function removeThere(ctx: ProjectContext, id: string, host: Host, project: ProjectName): Promise<string | null> {
  const home = ctx.store.home;
  const report = await request<Report>(home, host, { op: 'report', v: 1, project, id });
  if (report.exists) {
    if (report.running) return `a run of task ${id} is still going on host ${host.name}`;
    if (report.dirty)
      return `its workspace on host ${host.name} (${report.path ?? '?'}) has uncommitted changes; warren never removes work`;
    if (report.head !== null) {
      const missing = await commitsNotHere(ctx, report.head);
      if (missing !== 0)
        return `its branch on host ${host.name} holds ${missing < 0 ? 'commits' : `${missing} commit(s)`} not here (${report.head.slice(0, 12)}); fetch them from ${report.path ?? 'its workspace there'} or remove it there by hand`;
    }
  }
  // Also when the host has no task: what `new` pushed there (refs/warren/sent/ID) goes with it.
  await request(home, host, { op: 'remove', v: 1, project, id });
  return null;
}

/** How many commits of `tip` no ref here has; -1 when `tip` itself is not here. */
async function commitsNotHere(ctx: ProjectContext, tip: string): Promise<number> {
  try {
    return (await commitsNotOn(ctx.repo, tip, await otherRefTips(ctx.repo, []))).length;
  } catch {
    return -1;
  }
}
