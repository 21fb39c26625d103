import type { ProjectContext } from '../workspace/context.js';
import { integrateAhead, type Candidate, type Chain, type Locked } from './chain.js';
import { clearOnTopOf } from './store.js';

/**
 * The queue's speculation (land.speculate, as merge trains do): while a part of the queue is in
 * its gate, the parts behind it are integrated on top of it — each on the one before — and gated
 * at once. A speculative result is used only when the part it was built on landed exactly as it
 * was integrated, so that what it was gated on is the base it lands on; anything else throws it
 * away (a `queue.discarded` event), and its entries are integrated again on the real base and
 * gated again. What lands is always exactly the tree a gate passed.
 */

/** What a gate run said of an integration; `unrun` when a speculative run could not run (the real one will). */
export type AheadVerdict<F> = 'passed' | F | 'unrun';

/** One speculative integration: `part` on top of `onto` (a commit not on the base yet). */
export interface Spec<F> {
  part: Locked[];
  onto: string;
  /** The tasks `onto` holds that have not landed. */
  onTopOf: string[];
  /** Null when the part could not be integrated on `onto` (a conflict with what it is on, say). */
  chain: Chain | null;
  verdict: Promise<AheadVerdict<F>>;
  /** Said when the run ends: passed, failed, or not run. */
  state: 'running' | 'passed' | 'failed' | 'unrun';
  cancelled: boolean;
  /**
   * The part it left out: one entry whose integration on `onto` the gate failed on, so that it
   * is bounced without a run if `onto` lands. `part` is then every part behind it, joined, as
   * the queue joins them once a culprit is out.
   */
  skipped?: Locked[];
}

/** Gate runs at once, at most `size` (land.gates); the front of the queue first, then the nearest speculation. */
export class Slots {
  private free: number;
  private readonly waiting: { priority: number; go: () => void }[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Waits for a slot; the returned function gives it back. */
  async take(priority: number): Promise<() => void> {
    if (this.free > 0 && this.waiting.length === 0) this.free--;
    else {
      await new Promise<void>((go) => {
        this.waiting.push({ priority, go });
        this.waiting.sort((a, b) => a.priority - b.priority);
      });
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next.go();
      else this.free++;
    };
  }
}

export interface AheadRunner<F> {
  /** The gate on a speculative chain, in a slot of `priority`; a known failure of its tree without running. */
  gate(group: Candidate[], onTopOf: string[], priority: number, cancelled: () => boolean): Promise<AheadVerdict<F>>;
  /** Entries that joined the queue since, to be gated behind the rest (after a short window); none yet: empty. */
  arrivals(): Promise<Locked[]>;
  /** Is `part` already integrated on `onto` into a tree the gate failed on (the rest of a failing group)? Then nothing is speculated. */
  failedOn?(part: readonly Locked[], onto: string): boolean;
}

export class Ahead<F> {
  private specs: Spec<F>[] = [];
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly ctx: ProjectContext,
    private readonly depth: number,
    private readonly runner: AheadRunner<F>,
  ) {}

  /**
   * Integrates and starts gating up to `depth` parts of `parts` (the queue behind `front`, in
   * order), each on top of the one before, the first on `front`'s last commit; when fewer parts
   * wait, entries that joined since become one more part at the end.
   */
  async fill(front: Candidate[], parts: Locked[][]): Promise<void> {
    const last = front[front.length - 1];
    if (!last || this.depth === 0) return;
    // A speculation that left an entry out took every part behind the front: none goes deeper.
    while (this.specs.length < this.depth && !this.specs.some((s) => s.skipped)) {
      const i = this.specs.length;
      const prev = this.specs[i - 1];
      if (prev && !prev.chain) return;
      const onto = prev?.chain ? prev.chain.tip : last.plan.commit;
      const onTopOf = [...taskIds(front), ...this.specs.flatMap((s) => (s.chain ? taskIds(s.chain.candidates) : []))];
      let part = parts[i];
      if (!part) {
        const more = await this.runner.arrivals();
        if (more.length === 0) return;
        parts.push(more);
        part = more;
      }
      // The rest of a failing group on top of its first half is the tree that failed: neither made
      // again nor gated. When the front is one entry and that rest another (the two of a failing
      // pair), the front landing bounces the other without a run and the parts behind it are
      // gated together: those are speculated on the front, without it.
      let skipped: Locked[] | undefined;
      if (this.runner.failedOn?.(part, onto)) {
        const rest = parts.slice(i + 1);
        if (i > 0 || front.length !== 1 || part.length !== 1 || rest.length === 0) return;
        skipped = part;
        part = rest.length === 1 ? (rest[0] as Locked[]) : rest.flat();
      }
      const chain = await integrateAhead(this.ctx, part, onto, onTopOf);
      const spec: Spec<F> = {
        part,
        onto,
        onTopOf,
        chain: chain && chain.candidates.length > 0 ? chain : null,
        verdict: Promise.resolve('unrun'),
        state: 'unrun',
        cancelled: false,
        ...(skipped ? { skipped } : {}),
      };
      this.specs.push(spec);
      if (!spec.chain) continue;
      const tasks = taskIds(spec.chain.candidates);
      const leftOut = skipped ? skipped.map((l) => l.entry.taskId) : [];
      const without = skipped
        ? `, leaving out ${leftOut.join(' + ')} (the gate failed on it on top of ${taskIds(front).join(' + ')})`
        : '';
      const message = `${tasks.join(' + ')} integrated on top of ${onTopOf.join(' + ')} (not landed yet)${without} and gated at once`;
      this.ctx.store.addEvent({
        project: this.ctx.key,
        kind: 'queue.speculative',
        level: 'info',
        message,
        data: { tasks, onTopOf, onto, ...(skipped ? { leftOut } : {}) },
      });
      this.ctx.reporter.line(`warren: merge queue: ${message}…`);
      spec.state = 'running';
      const candidates = spec.chain.candidates;
      spec.verdict = this.runner
        .gate(candidates, onTopOf, i + 1, () => spec.cancelled)
        .then((v) => {
          spec.state = v === 'passed' ? 'passed' : v === 'unrun' ? 'unrun' : 'failed';
          return v;
        });
      const tracked = spec.verdict.catch(() => undefined).finally(() => this.running.delete(tracked));
      this.running.add(tracked);
    }
  }

  /** Is `group` the entry the first speculation left out (it was built on the front without it)? */
  leftOut(group: readonly Locked[]): boolean {
    const skipped = this.specs[0]?.skipped;
    return skipped !== undefined && sameEntries(skipped, group);
  }

  /** The parts still waiting, joined into one once a culprit is out: the first speculation's own when it holds exactly them. */
  joined(parts: readonly Locked[][]): Locked[] {
    const flat = parts.flat();
    const spec = this.specs[0];
    return spec?.skipped && sameEntries(spec.part, flat) ? spec.part : flat;
  }

  /**
   * The speculation of `part`, now at the front of the queue, when it was built on `tip` —
   * the base as it is: its gate run tested the tree that lands. Else null, and it is thrown away.
   */
  take(part: Locked[], tip: string): Spec<F> | null {
    const spec = this.specs[0];
    // The entry it left out comes first: it is bounced without a run, and the speculation waits for the rest.
    if (spec?.skipped === part && spec.onto === tip) return null;
    if (!spec || spec.part !== part) {
      this.discardAll('the parts behind it changed');
      return null;
    }
    this.specs.shift();
    if (!spec.chain) return null;
    if (spec.onto !== tip) {
      this.specs.unshift(spec);
      this.discardAll(`it was built on ${spec.onto.slice(0, 12)}, and the base is ${tip.slice(0, 12)}`);
      return null;
    }
    clearOnTopOf(
      this.ctx.store,
      spec.chain.candidates.map((c) => c.entry.id),
    );
    return spec;
  }

  /** Every speculation thrown away: what they were built on did not land as it was integrated. */
  discardAll(reason: string): void {
    const all = this.specs;
    this.specs = [];
    this.discard(all, reason);
  }

  private discard(specs: readonly Spec<F>[], reason: string): void {
    for (const spec of specs) {
      spec.cancelled = true;
      if (!spec.chain) continue;
      const tasks = taskIds(spec.chain.candidates);
      const verdict = spec.state === 'running' ? 'still running' : spec.state === 'unrun' ? 'not run' : spec.state;
      const message = `the speculative run of ${tasks.join(' + ')} on top of ${spec.onTopOf.join(' + ')} (${verdict}) is thrown away: ${reason}; ${tasks.length > 1 ? 'they are' : 'it is'} integrated again on the base and gated again`;
      this.ctx.store.addEvent({
        project: this.ctx.key,
        kind: 'queue.discarded',
        level: 'info',
        message,
        data: { tasks, onTopOf: spec.onTopOf, reason, verdict },
      });
      this.ctx.reporter.line(`warren: merge queue: ${message}`);
    }
  }

  /** Waits for every speculative run still going (none outlives the batch's settling). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

function sameEntries(a: readonly Locked[], b: readonly Locked[]): boolean {
  return a.length === b.length && a.every((l, i) => l.entry.id === b[i]?.entry.id);
}

function taskIds(group: readonly Locked[]): string[] {
  return group.map((c) => c.entry.taskId);
}
