import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/run/transcript.js';
import type { TranscriptItem } from '../../src/run/transcript-parse.js';
import { followTranscript, INITIAL_ITEMS } from '../../src/web/transcript-stream.js';
import { tmpDir } from '../helpers/repo.js';

/** The dashboard's follower of a transcript, on a file written as a CLI writes it. */

const line = (uuid: string, text: string) =>
  `${JSON.stringify({ type: 'assistant', uuid, message: { content: [{ type: 'text', text }] } })}\n`;

function follow(conv: () => Conversation | null) {
  const got: { items: string[]; skipped: number }[] = [];
  const metas: (string | null)[] = [];
  let ended: { missing: boolean; replaced: boolean } | null = null;
  const f = followTranscript({
    conversation: conv,
    onMeta: (m) => void metas.push(m.file),
    onItems: (items: TranscriptItem[], skipped) =>
      void got.push({ items: items.map((i) => (i.kind === 'text' ? i.text : i.kind)), skipped }),
    onEnd: (info) => void (ended = info),
    intervalMs: 20,
  });
  return { got, metas, ended: () => ended, stop: () => f.stop() };
}

describe('following a transcript', () => {
  it('waits for the file, sends what is written as it comes, and ends once the run has ended', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 's.jsonl');
    const conv: Conversation = {
      agent: 'claude',
      runId: 'r',
      session: 's',
      running: true,
      startedAt: '',
      file: null,
    };
    const f = follow(() => conv);
    await new Promise((r) => setTimeout(r, 60));
    expect(f.metas).toEqual([null]); // no file yet: said once
    fs.writeFileSync(file, line('a', 'one'));
    conv.file = file;
    await expect.poll(() => f.got.flatMap((g) => g.items)).toEqual(['one']);
    fs.appendFileSync(file, line('b', 'two') + line('c', 'thr').slice(0, 20));
    await expect.poll(() => f.got.flatMap((g) => g.items)).toEqual(['one', 'two']);
    fs.appendFileSync(file, line('c', 'thr').slice(20));
    conv.running = false;
    await expect.poll(() => f.ended()).toEqual({ missing: false, replaced: false });
    expect(f.got.flatMap((g) => g.items)).toEqual(['one', 'two', 'thr']);
    expect(f.metas).toEqual([null, file, file]);
  });

  it('a page joining a long conversation gets its last items; a newer run ends the stream', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 's.jsonl');
    fs.writeFileSync(file, Array.from({ length: INITIAL_ITEMS + 7 }, (_, i) => line(`u${i}`, `t${i}`)).join(''));
    let current: Conversation | null = {
      agent: 'claude',
      runId: 'r',
      session: 's',
      running: true,
      startedAt: '',
      file,
    };
    const f = follow(() => current);
    await expect.poll(() => f.got.length).toBe(1);
    expect(f.got[0]!.skipped).toBe(7);
    expect(f.got[0]!.items[0]).toBe('t7');
    expect(f.got[0]!.items).toHaveLength(INITIAL_ITEMS);
    current = null;
    await expect.poll(() => f.ended()).toEqual({ missing: false, replaced: true });
  });

  it('says so when the run ended and its CLI wrote no transcript', async () => {
    const f = follow(() => ({ agent: 'codex', runId: 'r', session: null, running: false, startedAt: '', file: null }));
    await expect.poll(() => f.ended()).toEqual({ missing: true, replaced: false });
    expect(f.got).toEqual([]);
  });
});
