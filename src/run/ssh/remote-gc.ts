import { commitsNotOn } from '../../git/history.js';
import { otherRefTips } from '../../git/refs.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { GcCollected } from '../../workspace/types.js';
import { request } from './connection.js';
import { hostNamed } from './hosts.js';
import type { Report } from './protocol.js';
import { forgetRecord, projectRecords, type RemoteRecord } from './remote-records.js';

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

/** Removes one orphan there and its record here; the reason it is kept instead, or null. */
async function removeOrphan(ctx: ProjectContext, id: string, record: RemoteRecord): Promise<string | null> {
  const home = ctx.store.home;
  // Nothing was ever made there: only the record goes.
  if (record.repo === null) {
    forgetRecord(home, ctx.key, id);
    return null;
  }
  const host = hostNamed(ctx, record.host);
  const report = await request<Report>(home, host, { op: 'report', v: 1, project: record.project, id });
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
  await request(home, host, { op: 'remove', v: 1, project: record.project, id });
  forgetRecord(home, ctx.key, id);
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
