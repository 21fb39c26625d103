import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { describeDrift, type Drift, type Fingerprint } from './fingerprint.js';

/**
 * What the fingerprint comparison found that is not refused, recorded as warning events and
 * returned so the command shows it: a shared-config change (git writes that file for ordinary
 * reasons), and hooks accepted with `--accept-hooks`, which become the task's new baseline.
 */
export function recordDrift(
  ctx: ProjectContext,
  task: Task,
  verb: string,
  current: Fingerprint,
  drift: Drift | null,
  acceptHooks: boolean,
): string[] {
  if (!drift) return [];
  const warnings: string[] = [];
  if (drift.configChanged) {
    const message = `${verb}: the repository's shared git config changed since task ${task.id} began (it applies to every worktree); see \`warren audit ${task.id}\``;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'fingerprint.config_changed',
      level: 'warn',
      message,
      data: { drift },
    });
    warnings.push(message);
  }
  const what = describeDrift(drift);
  if (acceptHooks && what.length > 0) {
    const message = `${verb}: accepted changed hooks/config with --accept-hooks: ${what.join('; ')}`;
    ctx.store.mergeData(ctx.key, task.id, { fingerprint: current });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'fingerprint.accepted',
      level: 'warn',
      message,
      data: { drift },
    });
    warnings.push(message);
  }
  return warnings;
}
