import { faultPoint } from '../system/fault.js';
import {
  advanceIntent,
  claimIntent,
  deleteIntent,
  insertIntent,
  intentOwnerAlive,
  projectIntents,
  type IntentOp,
  type IntentRow,
} from '../state/intents.js';
import { tryAcquire } from '../util/lockfile.js';
import type { ProjectContext } from './context.js';
import type { Lifecycle } from './lifecycle.js';
import { taskLockPath } from './locks.js';

/**
 * Every multi-step mutation (`new`, `rm`, `checkpoint`, `land`, `provision --refresh`, `gc`,
 * `rm --discard`, `restore`) writes an intent record before its first mutation, names each step
 * as it passes it, and deletes the record after its last. A process killed half way (SIGKILL, power loss) leaves its
 * record behind; the next warren command on the repository (and `scan`, `gc`) finds it, sees
 * its process is gone, and rolls the operation back or forward to a consistent state, with an
 * event saying which. Each step is also a fault-injection point (src/system/fault.ts).
 */

export interface Intent {
  readonly id: number;
  readonly op: IntentOp;
  /** Marks a step as passed (after its mutation), adding what recovery would need to know. */
  step(name: string, patch?: Record<string, unknown>): void;
  /** The operation finished: nothing to recover. */
  done(): void;
}

export function beginIntent(
  ctx: ProjectContext,
  op: IntentOp,
  taskId: string | null,
  data: Record<string, unknown>,
): Intent {
  const id = insertIntent(ctx.store, ctx.key, taskId, op, data);
  const current = { ...data };
  faultPoint(op, 'begun');
  return {
    id,
    op,
    step(name, patch = {}) {
      Object.assign(current, patch);
      advanceIntent(ctx.store, id, name, current);
      faultPoint(op, name);
    },
    done() {
      deleteIntent(ctx.store, id);
    },
  };
}

/**
 * The named steps of each operation, in order: what `WARREN_FAULT` can name, and what the crash
 * test kills at. `new` has one step after each of the lifecycle's create steps.
 */
export function intentSteps(op: IntentOp, lifecycle: Lifecycle): string[] {
  switch (op) {
    case 'new':
      return [
        'begun',
        'row-inserted',
        'worktree-added',
        'meta-written',
        ...lifecycle.create.map((s) => `after-${s.name}`),
        'ready',
      ];
    case 'rm':
      return ['begun', 'removing', 'released', 'worktree-removed', 'branch-deleted', 'after-remove'];
    case 'discard':
      // `rm --discard`: everything is saved under refs/warren/archive/ after teardown and before
      // the workspace's own mount (a cow checkout) is released and the worktree goes.
      return ['begun', 'removing', 'archived', 'released', 'worktree-removed', 'branch-deleted', 'after-remove'];
    case 'restore':
      // `restore` is a `new` at the archived branch tip, with the archived files put in first.
      return [
        'begun',
        'row-inserted',
        'worktree-added',
        'files-restored',
        'meta-written',
        ...lifecycle.create.map((s) => `after-${s.name}`),
        'ready',
      ];
    case 'checkpoint':
      return ['begun', 'staged', 'committed'];
    case 'land':
      return ['begun', 'checkout-moved', 'ref-moved', 'recorded'];
    case 'provision':
      return ['begun', 'released', 'cleared', 'provisioned'];
    case 'gc':
      return ['begun', 'strays-collected', 'features-collected'];
    case 'queue':
      // The merge queue's processor: a batch integrated, its gate run, then the base advanced.
      return ['integrating', 'gating', 'begun', 'checkout-moved', 'ref-moved', 'recorded'];
  }
}

/** What recovery did with one interrupted operation, in words (also recorded as an event). */
export interface Recovered {
  intent: IntentRow;
  outcome: 'rolled-back' | 'rolled-forward' | 'nothing-to-do' | 'failed';
  message: string;
}

/** How the operation `op` is repaired: the core's own (new, rm, gc) or a feature's, through the lifecycle. */
export type RecoverFn = (ctx: ProjectContext, intent: IntentRow) => Promise<Omit<Recovered, 'intent'>>;

/**
 * Repairs every operation on this repository whose process is gone. Each is claimed first
 * (two commands starting at once repair it once) and repaired under the task's lock (a dead
 * holder's is taken over). A repair that fails is recorded and left for the next command.
 */
export async function recoverInterrupted(
  ctx: ProjectContext,
  handlers: Partial<Record<IntentOp, RecoverFn>>,
): Promise<Recovered[]> {
  const done: Recovered[] = [];
  for (const intent of projectIntents(ctx.store, ctx.key)) {
    if (intentOwnerAlive(intent) || !claimIntent(ctx.store, intent)) continue;
    const handler = handlers[intent.op];
    if (!handler) continue;
    const lock = intent.taskId ? tryAcquire(taskLockPath(ctx, intent.taskId), `recover ${intent.op}`) : null;
    if (lock && !lock.ok) continue; // a live command is working on that task: not ours to touch now
    let result: Omit<Recovered, 'intent'>;
    try {
      result = await handler(ctx, intent);
    } catch (err) {
      result = { outcome: 'failed', message: err instanceof Error ? err.message : String(err) };
    } finally {
      if (lock?.ok) lock.lock.release();
    }
    const failed = result.outcome === 'failed';
    if (!failed) deleteIntent(ctx.store, intent.id);
    ctx.store.addEvent({
      project: ctx.key,
      taskId: intent.taskId,
      kind: failed ? 'intent.recovery_failed' : 'intent.recovered',
      level: failed ? 'error' : 'warn',
      message: `${intent.op}${intent.taskId ? ` ${intent.taskId}` : ''} was interrupted after step ${intent.step} (its warren, pid ${intent.pid}, is gone): ${result.message}`,
      data: { op: intent.op, step: intent.step, outcome: result.outcome, startedAt: intent.startedAt },
    });
    ctx.reporter.line(
      `warren: ${failed ? 'could not repair' : 'repaired'} an interrupted \`${intent.op}\`${intent.taskId ? ` of ${intent.taskId}` : ''}: ${result.message}`,
    );
    done.push({ intent, ...result });
  }
  return done;
}
