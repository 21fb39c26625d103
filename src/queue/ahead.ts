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
    while (this.specs.length < this.depth) {
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
      // The rest of a failing group on top of its first half is the tree that failed: neither made again nor gated.
      if (this.runner.failedOn?.(part, onto)) return;
      const chain = await integrateAhead(this.ctx, part, onto, onTopOf);
      const spec: Spec<F> = {
        part,
        onto,
        onTopOf,
        chain: chain && chain.candidates.length > 0 ? chain : null,
        verdict: Promise.resolve('unrun'),
        state: 'unrun',
        cancelled: false,
      };
      this.specs.push(spec);
      if (!spec.chain) continue;
      const tasks = taskIds(spec.chain.candidates);
      const message = `${tasks.join(' + ')} integrated on top of ${onTopOf.join(' + ')} (not landed yet) and gated at once`;
      this.ctx.store.addEvent({
        project: this.ctx.key,
        kind: 'queue.speculative',
        level: 'info',
        message,
        data: { tasks, onTopOf, onto },
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

  /**
   * The speculation of `part`, now at the front of the queue, when it was built on `tip` —
   * the base as it is: its gate run tested the tree that lands. Else null, and it is thrown away.
   */
  take(part: Locked[], tip: string): Spec<F> | null {
    const spec = this.specs[0];
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

function taskIds(group: readonly Candidate[]): string[] {
  return group.map((c) => c.entry.taskId);
}
