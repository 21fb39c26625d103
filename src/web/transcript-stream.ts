import type { Conversation } from '../run/transcript.js';
import { TranscriptReader } from '../run/transcript.js';
import type { TranscriptItem } from '../run/transcript-parse.js';

/**
 * Follows an agent run's transcript for the page: its items as the CLI writes them, until the
 * run has ended and the file is read to its end. Like the log's follower, it reads on only once
 * the client took what was sent, so a client that stops reading stops it.
 */

/** A page joining a long conversation gets its last items, not all of them. */
export const INITIAL_ITEMS = 500;

type Sent = Promise<void> | void;

export interface TranscriptFollowOptions {
  /** The run, looked up afresh each tick; null once it is no longer the task's newest. */
  conversation(): Conversation | null;
  onMeta(meta: Omit<Conversation, 'file'> & { file: string | null }): Sent;
  /** New items, or items written again (same key); `skipped`: older items left out of the first batch. */
  onItems(items: TranscriptItem[], skipped: number): Sent;
  /** `missing`: the run ended and its CLI wrote no transcript; `replaced`: a newer run took its place. */
  onEnd(info: { missing: boolean; replaced: boolean }): Sent;
  intervalMs?: number;
}

export function followTranscript(options: TranscriptFollowOptions): { stop(): void } {
  let stopped = false;
  let reader: TranscriptReader | null = null;
  let sentMeta: string | null = null;
  let first = true;
  let timer: NodeJS.Timeout | null = null;

  const tick = async (): Promise<void> => {
    if (stopped) return;
    const conv = options.conversation();
    if (conv === null) {
      stopped = true;
      await options.onEnd({ missing: false, replaced: true });
      return;
    }
    const metaKey = `${conv.running}\0${conv.file ?? ''}`;
    if (metaKey !== sentMeta) {
      sentMeta = metaKey;
      await options.onMeta(conv);
    }
    if (conv.file !== null && reader === null) reader = new TranscriptReader(conv.agent, conv.file);
    if (reader !== null) {
      const batch: TranscriptItem[] = [];
      for (;;) {
        let got: TranscriptItem[];
        try {
          got = reader.readNew();
        } catch {
          break; // not readable this tick (replaced under us): the next one tries again
        }
        if (got.length === 0) break;
        batch.push(...got);
        if (!first) {
          await options.onItems(batch.splice(0), 0);
          if (stopped) return;
        }
      }
      if (first) {
        const skipped = Math.max(0, batch.length - INITIAL_ITEMS);
        await options.onItems(batch.slice(skipped), skipped);
        first = false;
      }
    }
    if (stopped) return;
    // Read once more after the run ended (checked before the read), so its last lines are sent.
    if (!conv.running) {
      stopped = true;
      await options.onEnd({ missing: conv.file === null, replaced: false });
      return;
    }
    timer = setTimeout(follow, options.intervalMs ?? 300);
  };
  const follow = (): void => void tick().catch(() => (stopped = true));
  follow();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
