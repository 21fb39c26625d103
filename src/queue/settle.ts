import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { faultPoint } from '../system/fault.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { advance } from './advance.js';
import { Ahead, Slots, type AheadVerdict } from './ahead.js';
import { bounce, integrate, type Candidate, type Locked } from './chain.js';
import { gateSandbox, gateSteps, runGate } from './gate.js';
import { describeSnapshots } from './gate-deps.js';
import { setGateTask } from './store.js';
import { likelyCulprits } from './suspects.js';

/**
 * Settling a batch: the gate on its integration, and what follows — it lands, or its culprit is
 * found. A failing group is split (its likely culprits apart from the rest when the failure
 * points at some, suspects.ts; else in halves), and the parts are settled one after another in
 * queue order, each integrated on the base as it is then: a part that passes lands, one that
 * fails is split again, until a culprit is alone and bounced. Once a culprit has bounced, the
 * parts still waiting are gated together again (one culprit is the likely case), not one by one.
 * The gate never runs twice on a tree it failed on in the batch: a part whose integration is
 * such a tree (the rest of a group on top of its passing first half) is split, or bounced when
 * alone, at once. With `land.parallel`, a failing group's two halves are gated at the same time.
 */

export interface Counter {
  gateRuns: number;
}

/** A gate run that failed: on which integrated tree, and what it said. */
export interface Failure {
  tree: string;
  run: number;
  /** `no-culprit (exit 1)`: the steps that failed. */
  what: string;
  log: string | null;
  setupFailed: boolean;
}

type Verdict = 'passed' | 'bounced' | Failure;

/** land.speculate's default: one batch gated ahead of the one in its gate. */
export const DEFAULT_SPECULATE = 1;
/** land.gates' default: at most two gate runs at once (the front and one speculation). */
export const DEFAULT_GATES = 2;
/** While a gate runs, how often the queue looks for entries to integrate and gate behind it. */
const AHEAD_POLL_MS = 250;

/** The part of the queue at its front: `group` integrated on `tip`, and its speculative run when it had one. */
interface Front {
  group: Candidate[];
  tip: string;
  verdict: Promise<AheadVerdict<Failure>> | null;
}

/**
 * Gates `group` (integrated on `base`) and lands what passes, finding the culprits of a failure.
 * With land.speculate, what waits behind the part in its gate — the rest of a bisection, then
 * entries that joined since (`arrivals`) — is integrated on top of it and gated at once
 * (ahead.ts); a speculative run counts only when what it was built on landed as integrated.
 * False when the base moved under it (what is left waits in the queue again).
 */
export async function settle(
  ctx: ProjectContext,
  group: Candidate[],
  base: string,
  counter: Counter,
  arrivals: () => Promise<Locked[]> = () => Promise.resolve([]),
): Promise<boolean> {
  const first = group[0];
  if (!first) return true;
  if (gateSteps(ctx.config).length === 0) return advance(ctx, group, base);
  const baseRef = first.plan.baseRef;
  const failures = new Map<string, Failure>();
  const slots = new Slots(ctx.config.land?.gates ?? DEFAULT_GATES);
  const ahead = new Ahead<Failure>(ctx, ctx.config.land?.speculate ?? DEFAULT_SPECULATE, {
    arrivals,
    async gate(chain, onTopOf, priority, cancelled) {
      // A tree the gate failed on is not run again: the front says so when it gets there.
      if (failures.has((chain[chain.length - 1] as Candidate).plan.tree)) return 'unrun';
      const release = await slots.take(priority);
      try {
        if (cancelled()) return 'unrun';
        const verdict = await gate(ctx, chain, counter, onTopOf);
        if (verdict === 'passed') faultPoint('queue', 'speculated');
        return verdict === 'bounced' ? 'unrun' : verdict;
      } finally {
        release();
      }
    },
  });
  // Parts still to settle, in queue order; the first is `group`, integrated on `base` already.
  const parts: Locked[][] = [];
  let next: Front | null = { group, tip: base, verdict: null };
  try {
    for (;;) {
      if (!next) {
        const part = parts.shift();
        if (!part) return true;
        const tip = await revParse(ctx.repo, baseRef);
        if (!tip) return true;
        const spec = ahead.take(part, tip);
        if (spec?.chain) {
          ctx.reporter.line(
            `warren: merge queue: ${spec.chain.candidates.map((c) => c.entry.taskId).join(' + ')} was gated on top of ${spec.onTopOf.join(' + ')}, which landed: that run tested the base it lands on`,
          );
          next = { group: spec.chain.candidates, tip, verdict: spec.verdict };
        } else next = { group: (await integrate(ctx, part, tip)).candidates, tip, verdict: null };
      }
      const { group: now, tip, verdict: early } = next;
      next = null;
      if (now.length === 0) continue;
      // While the front is in its gate, what waits behind it is integrated on top of it and gated.
      const meanwhile = async <T>(p: Promise<T>): Promise<T> => {
        const done = p.then((v) => ({ v }));
        for (;;) {
          await ahead.fill(now, parts);
          const r = await Promise.race([done, new Promise<null>((go) => setTimeout(() => go(null), AHEAD_POLL_MS))]);
          if (r) return r.v;
        }
      };
      // A tree the gate already failed on is neither run again nor built on. (A speculative run's
      // own failure is the front's to record, when it gets there: then it is a fresh one.)
      const seen = known(ctx, now, tip, failures);
      const ran = seen ?? (early ? await meanwhile(early) : 'unrun');
      const verdict: Verdict =
        ran !== 'unrun' ? ran : await meanwhile(inSlot(slots, () => gate(ctx, now, counter, null)));
      if (verdict === 'passed') {
        if (!(await advance(ctx, now, tip))) {
          ahead.discardAll('the base moved under the queue');
          return false;
        }
        continue;
      }
      // What was built on top of `now` was built on a tree that does not land as it is.
      ahead.discardAll(
        `${now.map((c) => c.entry.taskId).join(' + ')}, which it was built on, ${verdict === 'bounced' ? 'bounced' : 'failed the gate'}`,
      );
      if (verdict === 'bounced') continue;
      failures.set(verdict.tree, verdict);
      if (now.length === 1) {
        bounceFailed(ctx, now[0] as Candidate, tip, verdict);
        // The culprit is out: what still waits is gated together.
        if (parts.length > 1) parts.splice(0, parts.length, parts.flat());
        continue;
      }
      const suspects = seen ? [] : await likelyCulprits(ctx, now, verdict.log);
      if (suspects.length > 0 && suspects.length < now.length) {
        isolating(ctx, now, suspects);
        parts.unshift(
          now.filter((c) => !suspects.includes(c)),
          suspects,
        );
        continue;
      }
      const half = Math.ceil(now.length / 2);
      const halves: [Candidate[], Candidate[]] = [now.slice(0, half), now.slice(half)];
      if (!ctx.config.land?.parallel) {
        parts.unshift(...halves);
        continue;
      }
      const left = await atOnce(ctx, halves, tip, counter, failures, slots);
      if (left === false) return false;
      parts.unshift(...left);
    }
  } finally {
    ahead.discardAll('the batch is settled');
    await ahead.drain();
  }
}

/** `run` once a gate slot is free (the front of the queue first). */
async function inSlot<T>(slots: Slots, run: () => Promise<T>): Promise<T> {
  const release = await slots.take(0);
  try {
    return await run();
  } finally {
    release();
  }
}

/** The failure already seen on `group`'s integrated tree in this batch, said as it is used; null when the gate has not failed on it. */
function known(ctx: ProjectContext, group: Candidate[], tip: string, failures: Map<string, Failure>): Failure | null {
  const last = group[group.length - 1] as Candidate;
  const failure = failures.get(last.plan.tree);
  if (!failure) return null;
  ctx.reporter.line(
    group.length === 1
      ? `warren: merge queue: ${last.entry.taskId} onto ${tip.slice(0, 12)} is the integration the gate failed on in run ${failure.run}; bounced without running it again`
      : `warren: merge queue: ${group.map((c) => c.entry.taskId).join(' + ')} is the integration the gate failed on in run ${failure.run}; splitting it…`,
  );
  return failure;
}

/**
 * Both halves of a failing group gated at once, each integrated on `tip`. A half that passed
 * was tested on the base as it is, so it lands (the first half first when both pass); the
 * parts left to settle are returned, in queue order: the other half (on top of the one that
 * landed it is the group's failed tree again, split without a run), or both failing halves,
 * each holding a culprit. False when the base moved under it.
 */
async function atOnce(
  ctx: ProjectContext,
  halves: [Candidate[], Candidate[]],
  tip: string,
  counter: Counter,
  failures: Map<string, Failure>,
  slots: Slots,
): Promise<Candidate[][] | false> {
  ctx.reporter.line(
    `warren: merge queue: gating ${halves.map((h) => h.map((c) => c.entry.taskId).join(' + ')).join(' and ')} at once…`,
  );
  const integrated = await Promise.all(halves.map(async (h) => (await integrate(ctx, h, tip)).candidates));
  // Both settle before anything is thrown (a full disk, say): no gate is left running behind the processor.
  const settled = await Promise.allSettled(
    integrated.map((h) => (h.length === 0 ? ('bounced' as const) : inSlot(slots, () => gate(ctx, h, counter, null)))),
  );
  const verdicts: Verdict[] = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  });
  for (const v of verdicts) if (typeof v === 'object') failures.set(v.tree, v);
  const passed = integrated.findIndex((h, i) => h.length > 0 && verdicts[i] === 'passed');
  if (passed !== -1 && !(await advance(ctx, integrated[passed] as Candidate[], tip))) return false;
  return integrated.filter((h, i) => i !== passed && h.length > 0 && verdicts[i] !== 'bounced');
}

/**
 * The gate once on `group`'s integration, recorded as a `queue.gate` event; `bounced` when it
 * could not run at all. `onTopOf`: a speculative run, on top of those tasks (not landed); one
 * that cannot run bounces nobody — the real run will say.
 */
async function gate(
  ctx: ProjectContext,
  group: Candidate[],
  counter: Counter,
  onTopOf: string[] | null,
): Promise<Verdict> {
  const steps = gateSteps(ctx.config);
  const last = group[group.length - 1] as Candidate;
  const tasks = group.map((c) => c.entry.taskId);
  const run = ++counter.gateRuns;
  const over = onTopOf ? ` on top of ${onTopOf.join(' + ')} (speculative)` : '';
  const sandbox = gateSandbox(
    ctx,
    tasks.map((id) => ctx.store.getTask(ctx.key, id)).filter((t): t is Task => t !== null),
  );
  ctx.reporter.line(
    `warren: merge queue: gate ${steps.map((s) => s.id).join(', ')} on ${tasks.join(' + ')}${over} (run ${run}, sandbox ${sandbox})…`,
  );
  let outcome: Awaited<ReturnType<typeof runGate>>;
  try {
    outcome = await runGate(ctx, last.plan.commit, steps, sandbox, (gateTask) =>
      setGateTask(
        ctx.store,
        group.map((c) => c.entry.id),
        gateTask,
      ),
    );
  } catch (err) {
    if (onTopOf) return 'bounced';
    // The gate could not run at all (its commands are no longer trusted, the workspace could not be made): nothing lands.
    for (const c of group) bounce(ctx, c.entry, err, null);
    return 'bounced';
  }
  faultPoint('queue', 'gating');
  const deps = describeSnapshots(outcome.snapshots);
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'queue.gate',
    level: outcome.passed ? 'info' : 'warn',
    message: `gate ${outcome.passed ? 'passed' : 'FAILED'} on ${tasks.join(' + ')}${over} (run ${run}, sandbox ${sandbox}${deps ? `; ${deps}` : ''}; log ${outcome.log})`,
    data: {
      tasks,
      passed: outcome.passed,
      log: outcome.log,
      gateTask: outcome.gateTask,
      run,
      sandbox,
      snapshots: outcome.snapshots,
      setupLog: outcome.setupLog,
      ...(onTopOf ? { onTopOf } : {}),
    },
  });
  if (deps) ctx.reporter.line(`warren: merge queue: gate run ${run} ran with ${deps}`);
  if (outcome.passed) return 'passed';
  const what = outcome.results
    .filter((r) => r.exitCode !== 0 || r.timedOut)
    .map((r) => `${r.id} (${r.reason ?? `exit ${r.exitCode}`})`)
    .join(', ');
  return { tree: last.plan.tree, run, what, log: outcome.log, setupFailed: outcome.setupFailed };
}

/** The culprit, alone: bounced with the failure of the gate on its integration. */
function bounceFailed(ctx: ProjectContext, culprit: Candidate, base: string, failure: Failure): void {
  const id = culprit.entry.taskId;
  bounce(
    ctx,
    culprit.entry,
    new WarrenError(
      'GATE_FAILED',
      failure.setupFailed
        ? `the integrated tree of ${id} onto ${base.slice(0, 12)} cannot be set up: setup ${failure.what} failed in the merge queue's integration workspace; landed, it would break the setup of every task made from the base`
        : `the gate failed on ${id} integrated onto ${base.slice(0, 12)}: ${failure.what}`,
    ),
    failure.log,
  );
}

/** Says that the likely culprits are gated apart from the rest, the rest first. */
function isolating(ctx: ProjectContext, group: Candidate[], suspects: Candidate[]): void {
  const rest = group.filter((c) => !suspects.includes(c));
  const many = suspects.length > 1;
  ctx.reporter.line(
    `warren: merge queue: ${suspects.map((c) => c.entry.taskId).join(', ')} likely broke the gate (${many ? 'their' : 'its'} own verify failed, or the failure names what ${many ? 'they change' : 'it changes'}); gating ${rest.map((c) => c.entry.taskId).join(' + ')} without ${many ? 'them' : 'it'} first…`,
  );
}
