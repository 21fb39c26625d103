import type { Store } from '../state/store.js';
import type { WarrenEvent } from '../state/types.js';

/**
 * Notices every change to warren's state, whichever process made it: the CLI in another
 * terminal records events in the same database, so polling the events table is what makes a
 * `warren new` typed elsewhere appear in the page. Each poll is one indexed read outside any
 * transaction (WAL: it never blocks a writer), and polling runs only while a page listens.
 */
export class EventHub {
  private readonly subscribers = new Set<(events: WarrenEvent[]) => void>();
  private seq: number;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly pollMs = 400,
    /** A failed poll is retried on the next tick; this hears about it so it is not silent. */
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.seq = store.lastEventSeq();
  }

  get lastSeq(): number {
    return this.seq;
  }

  subscribe(fn: (events: WarrenEvent[]) => void): () => void {
    this.subscribers.add(fn);
    if (this.timer === null) {
      this.seq = this.store.lastEventSeq();
      this.schedule();
    }
    return () => {
      this.subscribers.delete(fn);
      if (this.subscribers.size === 0) this.stop();
    };
  }

  /** One poll, now: returns what it found. Exposed so a test can drive it without waiting. */
  poll(): WarrenEvent[] {
    const events = this.store.eventsSince(this.seq);
    const last = events.at(-1);
    if (last) this.seq = last.seq;
    if (events.length > 0) for (const fn of this.subscribers) fn(events);
    return events;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      try {
        this.poll();
      } catch (err) {
        this.onError(err);
      } finally {
        if (this.subscribers.size > 0) this.schedule();
        else this.timer = null;
      }
    }, this.pollMs);
  }
}
