/**
 * Pushes events to one client without ever holding more than `maxPendingBytes` for it. Events
 * arrive whether or not the client reads (another process changed something); one that would
 * go over the bound is dropped and counted, and once the client has taken everything pending it
 * gets one `missed` event saying how many it lost, so the page re-reads everything instead of
 * the server queueing without end for a tab that stopped reading.
 */

export const MAX_PENDING_EVENT_BYTES = 256 * 1024;

export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

export type SendEvent = (message: SseMessage) => Promise<unknown>;

export class BoundedSender {
  private pending = 0;
  private dropped = 0;

  constructor(
    private readonly write: SendEvent,
    private readonly maxPendingBytes = MAX_PENDING_EVENT_BYTES,
  ) {}

  /** False when the event was dropped. */
  send(message: SseMessage): boolean {
    const size = Buffer.byteLength(message.event) + Buffer.byteLength(message.data);
    if (this.pending + size > this.maxPendingBytes) {
      this.dropped++;
      return false;
    }
    this.pending += size;
    void this.write(message)
      .catch(() => undefined) // the client went away: its stream's own abort ends the subscription
      .finally(() => {
        this.pending -= size;
        if (this.pending === 0 && this.dropped > 0) {
          const events = this.dropped;
          this.dropped = 0;
          this.send({ event: 'missed', data: JSON.stringify({ events }) });
        }
      });
    return true;
  }

  /** Bytes handed to the stream that the client has not taken yet. */
  get pendingBytes(): number {
    return this.pending;
  }
}
