import { WarrenError, isWarrenError } from '../errors.js';
import type { ProjectContext } from './context.js';
import type { NewTaskData } from './create.js';
import type { NewTaskLive } from './new-live.js';
import type { SyncOutcome } from './sync.js';

/** How a failed `new` or `restore` is told: what was undone, and what is left of the base. */
export function newTaskFailed(
  { ctx, data, live, undone }: { ctx: ProjectContext; data: NewTaskData; live: NewTaskLive; undone: string[] },
  err: unknown,
): WarrenError {
  const verb = live.restore ? 'restoring' : 'creating';
  // The cause is set inside a sentence of ours: its own full stop would make two.
  const message = errorMessage(err).replace(/\.+$/, '');
  ctx.store.addEvent({
    project: ctx.key,
    taskId: data.id,
    kind: 'task.create_failed',
    level: 'error',
    message: `${verb} task ${data.id} failed (${message}); undone: ${undone.join(', ') || 'nothing was made'}`,
    data: { undone },
  });
  return new WarrenError(
    'CREATE_FAILED',
    `${verb} task ${data.id} failed: ${message}. Undone: ${undone.join(', ') || 'nothing had been made'}; ${baseAfter(live.base, live.sync)}.`,
    {
      hint: isWarrenError(err)
        ? err.hint
        : `Fix the cause and run \`warren ${live.restore ? 'restore' : 'new'}\` again.`,
      cause: err,
    },
  );
}

/** What a failed `new` left of the base: as it was, or fast-forwarded to its upstream (not undone: that is the upstream's history). */
function baseAfter(base: string, sync: SyncOutcome): string {
  if (sync.kind !== 'fast-forwarded') return 'the base and the main checkout are as they were';
  return `${base} stays fast-forwarded to ${sync.upstream} (${sync.to.slice(0, 12)}, from ${sync.from.slice(0, 12)})${sync.checkout ? `, and ${sync.checkout} with it` : ''}`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
