import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { faultPoint } from '../system/fault.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { advance } from './advance.js';
import { Ahead, Slots, type AheadVerdict } from './ahead.js';
import { bounce, integrate, type Candidate, type Locked } from './chain.js';
import { gateSteps } from './gate.js';
import { describeGatePlace, gatePlace, runGateAt } from './gate-place.js';
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
 * When the entry behind the front is such a known failure on top of it, what waits behind that
 * entry is speculated on the front without it (ahead.ts), so that the front landing leaves the
 * rest's verdict already on its way.
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
  /** A half of a failing group (bisection): its own first half is probed while it runs. */
  half: boolean;
}

/** A bisection's probe: the first half of the group in its gate, gated on the same base at once. */
interface Probe {
  group: Candidate[];
  verdict: Promise<Verdict>;
}

/** A probe's slot: after the front's, before any speculation's. */
const PROBE_PRIORITY = 0.5;

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
    failedOn(part, onto) {
      const chain = chainedOn(part, onto);
      return chain !== null && chain.length > 0 && failures.has((chain[chain.length - 1] as Candidate).plan.tree);
    },
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
  let next: Front | null = { group, tip: base, verdict: null, half: false };
  // The halves of failing groups, and whether a culprit is still being looked for (none bounced since the last failure).
  const halves = new WeakSet<readonly Locked[]>();
  let probing = false;
  const probes = new Set<Promise<unknown>>();
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
          next = { group: spec.chain.candidates, tip, verdict: spec.verdict, half: halves.has(part) };
        } else {
          // A half of a failing group is integrated on this tip already: its own commits, not made again.
          const group = chainedOn(part, tip) ?? (await integrate(ctx, part, tip)).candidates;
          next = { group, tip, verdict: null, half: halves.has(part) };
        }
      }
      const { group: now, tip, verdict: early, half: isHalf }: Front = next;
      next = null;
      if (now.length === 0) continue;
      // While the front is in its gate, what waits behind it is integrated on top of it and gated.
      const meanwhile = async <T>(p: Promise<T>): Promise<T> => {
        const done = p.then((v) => ({ v }));
        // A failure already there (a probe's) is used as it is: nothing is built on it first.
        const already = await Promise.race([done, new Promise<null>((go) => setImmediate(() => go(null)))]);
        if (already && already.v !== 'passed') return already.v;
        for (;;) {
          await ahead.fill(now, parts);
          const r = await Promise.race([done, new Promise<null>((go) => setTimeout(() => go(null), AHEAD_POLL_MS))]);
          if (r) return r.v;
        }
      };
      // A tree the gate already failed on is neither run again nor built on. (A speculative run's
      // own failure is the front's to record, when it gets there: then it is a fresh one.)
      const seen = known(ctx, now, tip, failures);
      // A half of a failing group, gated now: its own first half is gated on the same base at once,
      // so that the next step of the bisection has its verdict whichever way this run goes.
      const probe: Probe | null =
        !seen && !early && isHalf && probing && now.length >= 2 && !ctx.config.land?.parallel
          ? startProbe(ctx, now, counter, slots)
          : null;
      if (probe) probes.add(probe.verdict.catch(() => undefined));
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
      // What was built on top of `now` was built on a tree that does not land as it is (a
      // speculation that left `now` out, a failure known before it was made, was not).
      if (!(seen && ahead.leftOut(now)))
        ahead.discardAll(
          `${now.map((c) => c.entry.taskId).join(' + ')}, which it was built on, ${verdict === 'bounced' ? 'bounced' : 'failed the gate'}`,
        );
      if (verdict === 'bounced') continue;
      failures.set(verdict.tree, verdict);
      probing = now.length > 1;
      if (now.length === 1) {
        bounceFailed(ctx, now[0] as Candidate, tip, verdict);
        // The culprit is out: what still waits is gated together.
        if (parts.length > 1) parts.splice(0, parts.length, ahead.joined(parts));
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
      const cut = Math.ceil(now.length / 2);
      const split: [Candidate[], Candidate[]] = [now.slice(0, cut), now.slice(cut)];
      for (const h of split) halves.add(h);
      if (!ctx.config.land?.parallel) {
        if (probe && probe.group.length === cut) {
          // The first half was probed on this base: its verdict is used, on the very commits it gated.
          next = {
            group: probe.group,
            tip,
            verdict: probe.verdict.then((v): AheadVerdict<Failure> => (v === 'bounced' ? 'unrun' : v)),
            half: true,
          };
          parts.unshift(split[1]);
        } else parts.unshift(...split);
        continue;
      }
      const left = await atOnce(ctx, split, tip, counter, failures, slots);
      if (left === false) return false;
      parts.unshift(...left);
    }
  } finally {
    ahead.discardAll('the batch is settled');
    await ahead.drain();
    await Promise.allSettled([...probes]);
  }
}

/** The first half of `group` (its chain's own commits, on the same base), gated in a slot of its own. */
function startProbe(ctx: ProjectContext, group: Candidate[], counter: Counter, slots: Slots): Probe {
  const first = group.slice(0, Math.ceil(group.length / 2));
  return { group: first, verdict: inSlot(slots, () => gate(ctx, first, counter, null, group), PROBE_PRIORITY) };
}

/**
 * `part` when it is a chain already integrated on `tip` — each entry's squash on the one before,
 * the first on `tip` (a half of a failing group, or the rest of one whose first half landed as
 * it was integrated) — else null: it is integrated again. Pure.
 */
export function chainedOn(part: readonly Locked[], tip: string): Candidate[] | null {
  let onto = tip;
  const chain: Candidate[] = [];
  for (const l of part) {
    if (!('plan' in l) || (l as Candidate).plan.baseTip !== onto) return null;
    chain.push(l as Candidate);
    onto = (l as Candidate).plan.commit;
  }
  return chain;
}

/** `run` once a gate slot is free (the front of the queue first). */
async function inSlot<T>(slots: Slots, run: () => Promise<T>, priority = 0): Promise<T> {
  const release = await slots.take(priority);
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
  probeOf: Candidate[] | null = null,
): Promise<Verdict> {
  const steps = gateSteps(ctx.config);
  const last = group[group.length - 1] as Candidate;
  const tasks = group.map((c) => c.entry.taskId);
  const run = ++counter.gateRuns;
  const over = onTopOf
    ? ` on top of ${onTopOf.join(' + ')} (speculative)`
    : probeOf
      ? ` (the first half of ${probeOf.map((c) => c.entry.taskId).join(' + ')}, probed at once)`
      : '';
  const place = gatePlace(
    ctx,
    tasks.map((id) => ctx.store.getTask(ctx.key, id)).filter((t): t is Task => t !== null),
  );
  ctx.reporter.line(
    `warren: merge queue: gate ${steps.map((s) => s.id).join(', ')} on ${tasks.join(' + ')}${over} (run ${run}, ${describeGatePlace(place)})…`,
  );
  let outcome: Awaited<ReturnType<typeof runGateAt>>;
  try {
    outcome = await runGateAt(ctx, place, last.plan.commit, steps, (gateTask) =>
      setGateTask(
        ctx.store,
        group.map((c) => c.entry.id),
        gateTask,
      ),
    );
  } catch (err) {
    // A speculative run or a probe that cannot run bounces nobody: the front's own run will say.
    if (onTopOf || probeOf) return 'bounced';
    // The gate could not run at all (its commands untrusted, no workspace, its host lost): nothing lands.
    for (const c of group) bounce(ctx, c.entry, err, null);
    return 'bounced';
  }
  faultPoint('queue', 'gating');
  const deps = describeSnapshots(outcome.snapshots);
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'queue.gate',
    level: outcome.passed ? 'info' : 'warn',
    message: `gate ${outcome.passed ? 'passed' : 'FAILED'} on ${tasks.join(' + ')}${over} (run ${run}, ${describeGatePlace(place)}${deps ? `; ${deps}` : ''}; log ${outcome.log})`,
    data: {
      tasks,
      passed: outcome.passed,
      log: outcome.log,
      gateTask: outcome.gateTask,
      run,
      sandbox: place.sandbox,
      ...(place.where === 'ssh' ? { host: place.host } : {}),
      ...(place.where === 'k8s' ? { cluster: place.cluster } : {}),
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
