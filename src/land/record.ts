import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { describeDrift, type Drift, type Fingerprint } from './fingerprint.js';

/** A shared-config change is not refused (git writes that file for ordinary reasons) but never silent. */
export function reportConfigDrift(ctx: ProjectContext, task: Task, drift: Drift, verb: string): void {
  if (!drift.configChanged) return;
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'fingerprint.config_changed',
    level: 'warn',
    message: `${verb}: the repository's shared git config changed since task ${task.id} began (it applies to every worktree); see \`warren audit ${task.id}\``,
    data: { drift },
  });
}

/** `--accept-hooks`: the current hooks become the task's new baseline, and the acceptance is logged. */
export function recordAcceptedHooks(ctx: ProjectContext, task: Task, current: Fingerprint, drift: Drift): void {
  const what = describeDrift(drift);
  if (what.length === 0) return;
  ctx.store.mergeData(ctx.key, task.id, { fingerprint: current });
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'fingerprint.accepted',
    level: 'warn',
    message: `accepted changed hooks/config with --accept-hooks: ${what.join('; ')}`,
    data: { drift },
  });
}
