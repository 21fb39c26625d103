import { WarrenError } from '../errors.js';
import { revParse } from '../git/refs.js';
import { faultPoint } from '../system/fault.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { advance } from './advance.js';
import { bounce, integrate, type Candidate } from './chain.js';
import { gateSandbox, gateSteps, runGate } from './gate.js';
import type { GateSnapshot } from './gate-deps.js';
import { setGateTask } from './store.js';
import { likelyCulprits } from './suspects.js';

/**
 * Settling an integrated group: the gate on it, and what follows — it lands, or the culprit is
 * found. A failing group is bisected: each half is tried on its own, the half that passes
 * lands, the one that fails is split again until the culprit is alone and bounced. With one
 * culprit in a batch of N that is at most 2·log2(N)+1 gate runs; fewer when the failure points
 * at a suspect (suspects.ts), and the gate never runs twice on a tree it failed on in the batch.
 * With `land.parallel`, both halves are gated at once, each on the same base.
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

/**
 * Gates `group` (integrated on `base`) and lands what passes, bisecting a failure. False when
 * the base moved under it before anything landed. `known`: a failure of this batch — a group
 * whose integration is exactly its tree (a second half whose first half landed, nothing else
 * having moved) is split, or bounced when alone, without running the gate on it again.
 */
export async function settle(
  ctx: ProjectContext,
  group: Candidate[],
  base: string,
  counter: Counter,
  known: Failure | null = null,
): Promise<boolean> {
  if (group.length === 0) return true;
  if (gateSteps(ctx.config).length === 0) return advance(ctx, group, base);
  const last = group[group.length - 1] as Candidate;
  const tasks = group.map((c) => c.entry.taskId);
  if (known && last.plan.tree === known.tree) {
    if (group.length === 1) {
      ctx.reporter.line(
        `warren: merge queue: ${last.entry.taskId} onto ${base.slice(0, 12)} is the integration the gate failed on in run ${known.run}; bounced without running it again`,
      );
      bounceFailed(ctx, last, base, known);
      return true;
    }
    ctx.reporter.line(
      `warren: merge queue: ${tasks.join(' + ')} is the integration the gate just failed on; splitting it…`,
    );
    return bisect(ctx, group, base, counter, known);
  }
  const verdict = await gate(ctx, group, counter);
  if (verdict === 'bounced') return true;
  if (verdict === 'passed') return advance(ctx, group, base);
  if (group.length === 1) {
    bounceFailed(ctx, last, base, verdict);
    return true;
  }
  const suspects = await likelyCulprits(ctx, group, verdict.log);
  if (suspects.length > 0 && suspects.length < group.length)
    return isolate(ctx, group, suspects, base, counter, verdict);
  return bisect(ctx, group, base, counter, verdict);
}

/** The gate once on `group`'s integration, recorded as a `queue.gate` event; `bounced` when it could not run at all. */
async function gate(
  ctx: ProjectContext,
  group: Candidate[],
  counter: Counter,
): Promise<'passed' | 'bounced' | Failure> {
  const steps = gateSteps(ctx.config);
  const last = group[group.length - 1] as Candidate;
  const tasks = group.map((c) => c.entry.taskId);
  const run = ++counter.gateRuns;
  const sandbox = gateSandbox(
    ctx,
    tasks.map((id) => ctx.store.getTask(ctx.key, id)).filter((t): t is Task => t !== null),
  );
  ctx.reporter.line(
    `warren: merge queue: gate ${steps.map((s) => s.id).join(', ')} on ${tasks.join(' + ')} (run ${run}, sandbox ${sandbox})…`,
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
    message: `gate ${outcome.passed ? 'passed' : 'FAILED'} on ${tasks.join(' + ')} (run ${run}, sandbox ${sandbox}${deps ? `; ${deps}` : ''}; log ${outcome.log})`,
    data: {
      tasks,
      passed: outcome.passed,
      log: outcome.log,
      gateTask: outcome.gateTask,
      run,
      sandbox,
      snapshots: outcome.snapshots,
      setupLog: outcome.setupLog,
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

/**
 * A failing group with likely culprits (suspects.ts): the rest is integrated and gated without
 * them first (bisected in turn if it fails), then the suspects on whatever the base is after it
 * — when all the rest landed, that is the group's failed tree again, and a suspect alone on it
 * bounces without another run.
 */
async function isolate(
  ctx: ProjectContext,
  group: Candidate[],
  suspects: Candidate[],
  base: string,
  counter: Counter,
  failure: Failure,
): Promise<boolean> {
  const last = group[group.length - 1] as Candidate;
  const rest = group.filter((c) => !suspects.includes(c));
  ctx.reporter.line(
    `warren: merge queue: ${suspects.map((c) => c.entry.taskId).join(', ')} likely broke the gate (${suspects.length > 1 ? 'their' : 'its'} own verify failed, or the failure names what ${suspects.length > 1 ? 'they change' : 'it changes'}); gating ${rest.map((c) => c.entry.taskId).join(' + ')} without ${suspects.length > 1 ? 'them' : 'it'} first…`,
  );
  const left = (await integrate(ctx, rest, base)).candidates;
  if (!(await settle(ctx, left, base, counter))) return false;
  const now = await revParse(ctx.repo, last.plan.baseRef);
  if (!now) return true;
  return settle(ctx, (await integrate(ctx, suspects, now)).candidates, now, counter, failure);
}

/** A failing group of several, split in halves: one after the other, or both at once (`land.parallel`). */
async function bisect(
  ctx: ProjectContext,
  group: Candidate[],
  base: string,
  counter: Counter,
  failure: Failure,
): Promise<boolean> {
  const last = group[group.length - 1] as Candidate;
  const half = Math.ceil(group.length / 2);
  if (ctx.config.land?.parallel)
    return bisectAtOnce(ctx, [group.slice(0, half), group.slice(half)], base, counter, failure);
  // The first half on the same base; the second on whatever the base is after it.
  const left = (await integrate(ctx, group.slice(0, half), base)).candidates;
  if (!(await settle(ctx, left, base, counter))) return false;
  const now = await revParse(ctx.repo, last.plan.baseRef);
  if (!now) return true;
  const right = (await integrate(ctx, group.slice(half), now)).candidates;
  return settle(ctx, right, now, counter, failure);
}

/**
 * Both halves gated at once, each integrated on `base`. A half that passed was tested on the
 * base as it is, so it lands (the first half first when both pass); what is left is integrated
 * on the base after it and settled in turn — the other half on top of the one that landed is
 * the whole group again, the tree that failed, so it is split without a gate run. Two failing
 * halves hold a culprit each: each is bisected on its own failure.
 */
async function bisectAtOnce(
  ctx: ProjectContext,
  halves: [Candidate[], Candidate[]],
  base: string,
  counter: Counter,
  failure: Failure,
): Promise<boolean> {
  const baseRef = (halves[0][0] ?? halves[1][0])?.plan.baseRef;
  if (!baseRef) return true;
  ctx.reporter.line(
    `warren: merge queue: gating ${halves.map((h) => h.map((c) => c.entry.taskId).join(' + ')).join(' and ')} at once…`,
  );
  const integrated = await Promise.all(halves.map(async (h) => (await integrate(ctx, h, base)).candidates));
  const verdicts = await Promise.all(
    integrated.map((h) => (h.length === 0 ? Promise.resolve('bounced' as const) : gate(ctx, h, counter))),
  );
  const passed = integrated.findIndex((h, i) => h.length > 0 && verdicts[i] === 'passed');
  if (passed !== -1 && !(await advance(ctx, integrated[passed] as Candidate[], base))) return false;
  for (const [i, h] of integrated.entries()) {
    const verdict = verdicts[i];
    if (i === passed || h.length === 0 || verdict === 'bounced') continue;
    const now = await revParse(ctx.repo, baseRef);
    if (!now) return true;
    const again = (await integrate(ctx, h, now)).candidates;
    const known = passed !== -1 ? failure : verdict === 'passed' ? null : (verdict as Failure);
    if (!(await settle(ctx, again, now, counter, known))) return false;
  }
  return true;
}

/** `node_modules: snapshot 1a2b3c4d5e6f (installed from package-lock.json)`, for people; empty when the gate had no dependency folder. */
function describeSnapshots(snapshots: readonly GateSnapshot[]): string {
  const how = {
    main: "the main checkout's",
    reused: 'reused for the integrated',
    installed: 'installed from the integrated',
    unmatched: "the main checkout's, not the integrated",
  } as const;
  return snapshots
    .map(
      (s) =>
        `${s.path}: ${s.key ? `snapshot ${s.key.slice(0, 12)}` : 'no snapshot'} (${how[s.how]} ${s.lockfile ?? 'lockfile'})`,
    )
    .join(', ');
}
