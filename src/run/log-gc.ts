import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from '../system/remove-tree.js';
import type { ProjectContext } from '../workspace/context.js';
import type { GcPlan, GcResult } from '../workspace/gc.js';
import { listDir } from '../util/list-dir.js';
import { recordRemoval } from '../workspace/gc-record.js';

/**
 * How long the run logs of a task stay after the task is gone: `rm` keeps them so that what
 * happened can still be read; `gc` deletes them once the newest is this old.
 */
export const LOG_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `gc` for run logs: `$WARREN_HOME/logs/<project>/<ID>/` of a task this project no longer has,
 * once its newest file is LOG_KEEP_DAYS old, together with the task's rows in `runs` (which
 * name those files). Younger ones are kept, and listed with the day they become garbage.
 */
export async function collectRunLogs(
  ctx: ProjectContext,
  now = Date.now(),
): Promise<{ removed: GcResult['removed']; kept: GcPlan['kept'] }> {
  const out: { removed: GcResult['removed']; kept: GcPlan['kept'] } = { removed: [], kept: [] };
  const root = path.join(ctx.store.home, 'logs', ctx.key);
  const live = new Set(ctx.store.listTasks(ctx.key).map((t) => t.id));
  for (const id of listDir(root)) {
    if (live.has(id)) continue;
    const dir = path.join(root, id);
    // A gone task's TMPDIR goes at once (rm removes it; this is for one a crash left).
    const tmp = path.join(dir, 'tmp');
    if (fs.lstatSync(tmp, { throwIfNoEntry: false })) {
      recordRemoval(out, 'task_tmp', tmp, removeTree(tmp), id);
    }
    const newest = newestMtime(dir);
    if (now - newest < LOG_KEEP_DAYS * DAY_MS) {
      const until = new Date(newest + LOG_KEEP_DAYS * DAY_MS).toISOString().slice(0, 10);
      out.kept.push({
        kind: 'run_logs',
        path: dir,
        reason: `logs of a removed task are kept ${LOG_KEEP_DAYS} days after its last run; gc deletes them from ${until}`,
      });
      continue;
    }
    const failures = removeTree(dir);
    if (failures.length > 0) {
      out.kept.push({
        kind: 'run_logs',
        path: dir,
        reason: `could not delete ${failures[0]?.path} (${failures[0]?.code})`,
      });
      continue;
    }
    ctx.store.db.prepare('DELETE FROM runs WHERE project = ? AND task_id = ?').run(ctx.key, id);
    out.removed.push({ kind: 'run_logs', path: dir, id, action: 'delete-dir' });
  }
  return out;
}

/** The newest modification time in a log folder (lstat: links are not followed). */
function newestMtime(dir: string): number {
  let newest = fs.lstatSync(dir).mtimeMs;
  for (const name of listDir(dir)) newest = Math.max(newest, fs.lstatSync(path.join(dir, name)).mtimeMs);
  return newest;
}
