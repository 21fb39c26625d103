import type { z as Zod } from 'zod';
import {
  advanceIntent,
  claimIntent,
  deleteIntent,
  insertIntent,
  intentOwnerAlive,
  projectIntents,
  type IntentOp,
  type IntentPayloads,
  type IntentRow,
} from '../state/intents.js';
import { faultPointHandled } from '../system/fault.js';
import { ownerTag, settleLeftRunning } from '../system/left-running.js';
import { tryAcquire } from '../util/lockfile.js';
import type { ProjectContext } from './context.js';
import type { Lifecycle } from './types.js';
import { taskLockPath, withRepoLock } from './locks.js';

/**
 * Every multi-step mutation (`new`, `restore`, `rm`, `rm --discard`, `checkpoint`, `land`, the
 * merge queue's advance, `provision --refresh`, `gc`) is one declaration: its steps in order,
 * each with what it does, how it is undone, and which way it is settled when warren dies inside
 * it. One runner executes them:
 *
 * - before the first step it writes an intent (the payload: what a repair needs to know), and
 *   records each step as it passes it; each of those moments is a fault point
 *   (src/system/fault.ts), which the crash test kills at;
 * - a step that throws is settled as a crash inside it would be: `back` undoes it and every
 *   step before it, in reverse, then the operation's `failed` words the error; `forward` means
 *   the operation is past its point of no return, so the step has left a recorded state of its
 *   own (e.g. `remove_failed`) and the error stands;
 * - after a crash, the next command finds the intent, sees its process gone, and settles the
 *   step it was cut off in the same way: `back` runs the same undos, `forward` runs that step's
 *   and every later step's `finish`, from the payload alone.
 *
 * Steps are named by literal unions. The payload's schema is zod's, built only when a payload
 * is read back after a crash (zod is not loaded by a command that does not need it).
 */

/** Which way a step that was cut off (a crash, or a throw inside it) is settled. */
export type Direction = 'back' | 'forward';

export type Schema = typeof Zod;

/** What every part of a step is given: the context and the intent's payload. */
export interface Scope<D> {
  ctx: ProjectContext;
  /** The payload as recorded so far; a step's `run` returns what it adds. */
  data: D;
}

/** A step's run: the command's own state (`live`) is there too. */
export interface RunScope<D, L> extends Scope<D> {
  live: L;
}

export interface UndoScope<D, L> extends Scope<D> {
  /** The command's own state; null when the undo runs after a crash, from the payload alone. */
  live: L | null;
  /**
   * True when the step had finished (a later one failed); false when it failed or was cut off
   * inside: undo only what is provably this run's.
   */
  finished: boolean;
}

export interface Step<N extends string, D, L> {
  readonly name: N;
  /** Does the step's work; returns what it adds to the payload (recorded with the step). */
  run(s: RunScope<D, L>): Promise<Partial<D> | void>;
  /** Undoes the step; returns what it undid, in words. Throwing stops the undoing there. */
  undo?(s: UndoScope<D, L>): Promise<string | void>;
  /** Cut off inside this step (or after the step before it): which way to settle, or how to read the world to decide. */
  readonly recover: Direction | Decision<D>;
  /** Rolling forward after a crash: finishes this step from the payload alone; returns what it did, in words. */
  finish?(s: Scope<D>): Promise<string | void>;
}

/** A direction read from the world (is the ref moved? does git still list the worktree?). */
export interface Decision<D> {
  decide(s: Scope<D>): Promise<Direction>;
}

export interface Failure<D, L> extends Scope<D> {
  live: L;
  /** What the undos did, in words, in the order they ran. */
  undone: string[];
  /** The undo that could not be done (the undoing stopped there), or null. */
  stuck: unknown;
}

export type Outcome = 'rolled-back' | 'rolled-forward' | 'nothing-to-do' | 'failed';

export interface Operation<Op extends IntentOp, N extends string, L> {
  readonly op: Op;
  /** The payload's schema (see above). */
  payload(z: Schema): Zod.ZodType<IntentPayloads[Op]>;
  /** The steps, in order; warren's own `new` adds one per feature of the lifecycle. */
  steps(lifecycle: Lifecycle): readonly Step<N, IntentPayloads[Op], L>[];
  /** Its repair takes the repository lock (it moves the base or the main checkout). */
  readonly repairUnderRepoLock?: boolean;
  /** Fault points outside the intent (the merge queue's phases before its advance): killed at by the crash test too. */
  readonly faultsBefore?: readonly string[];
  /** The error a failed run becomes once it was undone (default: the step's own error, or the undo's that got stuck). */
  failed?(f: Failure<IntentPayloads[Op], L>, err: unknown): unknown;
  /** What a repair did, in words (default: the steps' own words). */
  repaired?(outcome: Outcome, data: IntentPayloads[Op], did: readonly string[]): string;
}

/** An operation of any kind, as the composition lists them. */
// Method syntax above (run, undo, decide, failed) makes them bivariant, so every declaration is one of these.
export type AnyOperation = Operation<IntentOp, string, unknown>;

/** Every fault point of an operation, in order: what `WARREN_FAULT=op:point` can name. */
export function faultPoints(operation: AnyOperation, lifecycle: Lifecycle): string[] {
  return [...(operation.faultsBefore ?? []), 'begun', ...operation.steps(lifecycle).map((s) => s.name)];
}

/**
 * Runs `operation`'s steps with `data` as the first payload and `live` as the command's own
 * state; returns the payload as the steps left it. See the module comment for failures.
 */
export async function runOperation<Op extends IntentOp, N extends string, L>(
  ctx: ProjectContext,
  operation: Operation<Op, N, L>,
  taskId: string | null,
  data: IntentPayloads[Op],
  live: L,
): Promise<IntentPayloads[Op]> {
  const steps = operation.steps(ctx.lifecycle);
  const current = { ...data };
  const id = insertIntent(ctx.store, ctx.key, taskId, operation.op, current);
  await faultPointHandled(operation.op, 'begun');
  for (const [i, step] of steps.entries()) {
    let patch: Partial<IntentPayloads[Op]> | void;
    try {
      patch = await step.run({ ctx, data: current, live });
    } catch (err) {
      throw await settleFailure(ctx, operation, steps, i, id, current, live, err);
    }
    if (patch) Object.assign(current, patch);
    advanceIntent(ctx.store, id, step.name, current);
    await faultPointHandled(operation.op, step.name);
  }
  deleteIntent(ctx.store, id);
  return current;
}

async function settleFailure<Op extends IntentOp, N extends string, L>(
  ctx: ProjectContext,
  operation: Operation<Op, N, L>,
  steps: readonly Step<N, IntentPayloads[Op], L>[],
  at: number,
  id: number,
  data: IntentPayloads[Op],
  live: L,
  err: unknown,
): Promise<unknown> {
  const step = steps[at] as Step<N, IntentPayloads[Op], L>;
  // A decision that cannot be read (git failed) undoes: the steps before were all recorded as done.
  const direction = await directionOf(step, { ctx, data }).catch(() => 'back' as const);
  if (direction === 'forward') {
    deleteIntent(ctx.store, id);
    return err;
  }
  const undone: string[] = [];
  let stuck: unknown = null;
  for (let j = at; j >= 0; j--) {
    const undo = steps[j]?.undo;
    if (!undo) continue;
    try {
      const what = await undo({ ctx, data, live, finished: j < at });
      if (what) undone.push(what);
    } catch (e) {
      stuck = e;
      undone.push(`(${messageOf(e)})`);
      break;
    }
  }
  // Settled either way: what could not be undone is a state of its own (a row left `creating`
  // or `removing`), which scan and gc find; nothing is left for the next command to repeat.
  deleteIntent(ctx.store, id);
  if (operation.failed) return operation.failed({ ctx, data, live, undone, stuck }, err);
  return stuck ?? err;
}

function directionOf<D, L>(step: Step<string, D, L>, s: Scope<D>): Promise<Direction> {
  return typeof step.recover === 'string' ? Promise.resolve(step.recover) : step.recover.decide(s);
}

/** What recovery did with one interrupted operation (also recorded as an event). */
export interface Recovered {
  intent: IntentRow;
  outcome: Outcome;
  message: string;
}

/** Settles one intent whose process is gone: the step it was cut off in, back or forward. */
export async function repairOperation(
  ctx: ProjectContext,
  operation: AnyOperation,
  intent: IntentRow,
): Promise<Omit<Recovered, 'intent'>> {
  const { z } = await import('zod');
  const parsed = operation.payload(z).safeParse(intent.data);
  if (!parsed.success) {
    return { outcome: 'failed', message: `its record cannot be read (${z.prettifyError(parsed.error)})` };
  }
  const data = parsed.data;
  const steps = operation.steps(ctx.lifecycle);
  const reached = intent.step === 'begun' ? -1 : steps.findIndex((s) => s.name === intent.step);
  if (reached === -1 && intent.step !== 'begun') {
    return {
      outcome: 'failed',
      message: `its step ${JSON.stringify(intent.step)} is not one of ${operation.op}'s (another warren's?)`,
    };
  }
  const cut = steps[reached + 1];
  if (!cut) return { outcome: 'nothing-to-do', message: 'it had passed every step' };
  const settle = async (): Promise<Omit<Recovered, 'intent'>> => {
    const direction = await directionOf(cut, { ctx, data });
    const did: string[] = [];
    try {
      if (direction === 'back') {
        for (let j = reached + 1; j >= 0; j--) {
          const step = steps[j];
          const what = await step?.undo?.({ ctx, data, live: null, finished: j <= reached });
          if (what) did.push(what);
        }
      } else {
        for (const step of steps.slice(reached + 1)) {
          const what = await step.finish?.({ ctx, data });
          if (what) did.push(what);
        }
      }
    } catch (err) {
      return { outcome: 'failed', message: [...did, messageOf(err)].join('; ') };
    }
    const outcome: Outcome =
      did.length === 0 ? 'nothing-to-do' : direction === 'back' ? 'rolled-back' : 'rolled-forward';
    return { outcome, message: operation.repaired?.(outcome, data, did) ?? (did.join('; ') || 'nothing needed doing') };
  };
  return operation.repairUnderRepoLock ? withRepoLock(ctx, `repair ${operation.op}`, settle) : settle();
}

/**
 * Repairs every operation on this repository whose process is gone. Each is claimed first
 * (two commands starting at once repair it once) and repaired under the task's lock (a dead
 * holder's is taken over). A repair that fails is recorded and left for the next command; an
 * operation this warren does not know (a newer one's) is left as it is.
 */
export async function recoverInterrupted(
  ctx: ProjectContext,
  operations: Readonly<Partial<Record<string, AnyOperation>>>,
): Promise<Recovered[]> {
  const done: Recovered[] = [];
  for (const intent of projectIntents(ctx.store, ctx.key)) {
    const operation = operations[intent.op];
    if (!operation || intentOwnerAlive(intent) || !claimIntent(ctx.store, intent)) continue;
    const lock = intent.taskId ? tryAcquire(taskLockPath(ctx, intent.taskId), `recover ${intent.op}`) : null;
    if (lock && !lock.ok) continue; // a live command is working on that task: not ours to touch now
    let result: Omit<Recovered, 'intent'>;
    try {
      // A git the dead warren started may still be changing the repository: it finishes (or is ended) first.
      const left = await settleLeftRunning(ownerTag(intent.pid, intent.procStart));
      result = await repairOperation(ctx, operation, intent);
      if (left.found > 0)
        result.message = `first waited for ${left.found} git process(es) it had started${left.ended > 0 ? `, and ended ${left.ended} still running after 10 s` : ''}; ${result.message}`;
    } catch (err) {
      result = { outcome: 'failed', message: messageOf(err) };
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

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
