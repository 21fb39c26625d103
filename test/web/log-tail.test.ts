import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BoundedSender } from '../../src/web/bounded-sender.js';
import { INITIAL_TAIL_BYTES, followLog, resolveLog, type FollowOptions } from '../../src/web/log-tail.js';
import { tmpDir } from '../helpers/repo.js';

/** Following a real, growing file; conditions are awaited, never timed. */

interface Seen {
  text: string;
  starts: { skipped: number }[];
  skips: { skipped: number }[];
  end: { missing: boolean } | null;
}

function follow(
  file: string,
  finished: { value: boolean },
  options: Partial<FollowOptions> = {},
): Seen & { stop(): void } {
  const seen: Seen = { text: '', starts: [], skips: [], end: null };
  const follower = followLog({
    resolve: () => (fs.existsSync(file) ? file : null),
    isFinished: () => finished.value,
    onStart: (info) => void seen.starts.push(info),
    onChunk: (text) => void (seen.text += text),
    onSkip: (info) => void seen.skips.push(info),
    onEnd: (info) => void (seen.end = info),
    intervalMs: 10,
    ...options,
  });
  return Object.assign(seen, { stop: () => follower.stop() });
}

describe('followLog', () => {
  it('sends appended bytes in order, never splits a character, and sends the last bytes before ending', async () => {
    const file = path.join(tmpDir(), 'run.log');
    fs.writeFileSync(file, 'one\n');
    const finished = { value: false };
    const seen = follow(file, finished);
    await expect.poll(() => seen.text).toBe('one\n');
    const snowman = Buffer.from('☃', 'utf8');
    fs.appendFileSync(file, Buffer.concat([Buffer.from('two '), snowman.subarray(0, 1)]));
    await expect.poll(() => seen.text).toBe('one\ntwo ');
    fs.appendFileSync(file, Buffer.concat([snowman.subarray(1), Buffer.from('\n<script>x</script>\n')]));
    await expect.poll(() => seen.text).toBe('one\ntwo ☃\n<script>x</script>\n');
    // Written, then finished at once: the follower must still read it before ending.
    fs.appendFileSync(file, 'last line\n');
    finished.value = true;
    await expect.poll(() => seen.end).toEqual({ missing: false });
    expect(seen.text).toBe('one\ntwo ☃\n<script>x</script>\nlast line\n');
    expect(seen.starts).toEqual([{ skipped: 0 }]);
  });

  it('waits for a log that does not exist yet, and says so if it never appears', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'late.log');
    const finished = { value: false };
    const seen = follow(file, finished);
    fs.writeFileSync(file, 'appeared\n');
    await expect.poll(() => seen.text).toBe('appeared\n');
    finished.value = true;
    await expect.poll(() => seen.end).toEqual({ missing: false });

    const never = follow(path.join(dir, 'never.log'), { value: true });
    await expect.poll(() => never.end).toEqual({ missing: true });
    expect(never.text).toBe('');
  });

  it('starts over when the log is truncated and rewritten', async () => {
    const file = path.join(tmpDir(), 'rotated.log');
    fs.writeFileSync(file, 'a long first line\n');
    const finished = { value: false };
    const seen = follow(file, finished);
    await expect.poll(() => seen.text).toBe('a long first line\n');
    fs.writeFileSync(file, 'new\n');
    await expect.poll(() => seen.text).toBe('a long first line\nnew\n');
    finished.value = true;
    await expect.poll(() => seen.end).toEqual({ missing: false });
  });

  it('joins a long log at its tail and says how much it left out', async () => {
    const file = path.join(tmpDir(), 'big.log');
    const head = 'x'.repeat(INITIAL_TAIL_BYTES + 1000);
    fs.writeFileSync(file, `${head}TAIL\n`);
    const seen = follow(file, { value: true });
    await expect.poll(() => seen.end).toEqual({ missing: false });
    expect(seen.starts).toEqual([{ skipped: 1005 }]);
    expect(seen.text.length).toBe(INITIAL_TAIL_BYTES);
    expect(seen.text.endsWith('TAIL\n')).toBe(true);
  });

  it('reads no further while the client has not taken the last chunk, and skips ahead with a count when it fell too far behind', async () => {
    const file = path.join(tmpDir(), 'fast.log');
    fs.writeFileSync(file, 'a'.repeat(1000));
    const finished = { value: false };
    // A client that takes nothing until the test lets it.
    let release: () => void = () => undefined;
    let calls = 0;
    const held = follow(file, finished, {
      tailBytes: 100,
      maxBehindBytes: 4000,
      onChunk: (text) => {
        calls++;
        held.text += text;
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    await expect.poll(() => held.text).toBe('a'.repeat(100));
    // The command writes on; the follower waits for the client, so nothing more is read or sent.
    fs.appendFileSync(file, 'b'.repeat(10_000));
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1);
    // The client takes it: it is 10,000 bytes behind (over 4,000), so it hears how much it missed and goes on at the tail.
    fs.appendFileSync(file, 'END\n');
    finished.value = true;
    const drain = setInterval(() => release(), 5);
    try {
      await expect.poll(() => held.end).toEqual({ missing: false });
    } finally {
      clearInterval(drain);
    }
    expect(held.skips).toEqual([{ skipped: 10_004 - 100 }]);
    expect(held.text).toBe(`${'a'.repeat(100)}${'b'.repeat(96)}END\n`);
    expect(held.starts).toEqual([{ skipped: 900 }]);
  });

  it("serves only logs inside warren's folders, also through symlinks", () => {
    const root = tmpDir();
    const inside = path.join(root, 'home');
    fs.mkdirSync(inside);
    fs.writeFileSync(path.join(inside, 'ok.log'), 'ok');
    const secret = path.join(root, 'secret.txt');
    fs.writeFileSync(secret, 'secret');
    fs.symlinkSync(secret, path.join(inside, 'link.log'));
    expect(resolveLog(path.join(inside, 'ok.log'), [inside])).toEqual({ real: path.join(inside, 'ok.log') });
    expect(resolveLog(path.join(inside, 'link.log'), [inside])).toBe('outside');
    expect(resolveLog(secret, [inside])).toBe('outside');
    expect(resolveLog(path.join(inside, 'missing.log'), [inside])).toBeNull();
    expect(resolveLog(inside, [inside])).toBeNull();
  });
});

describe('BoundedSender', () => {
  it('holds at most its bound for a client that does not read, drops the rest, and says how many once the client caught up', async () => {
    const written: { event: string; data: string; taken: () => void }[] = [];
    const sender = new BoundedSender(
      ({ event, data }) => new Promise<void>((resolve) => written.push({ event, data, taken: resolve })),
      100,
    );
    const data = 'x'.repeat(40); // 'change' + 40 bytes = 46 each: two fit under 100
    expect([1, 2, 3, 4, 5].map(() => sender.send({ event: 'change', data }))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(sender.pendingBytes).toBe(92);
    expect(written).toHaveLength(2);
    // The client takes the first: still one pending, so no word yet about what it missed.
    written[0]?.taken();
    await expect.poll(() => sender.pendingBytes).toBe(46);
    expect(written).toHaveLength(2);
    written[1]?.taken();
    await expect.poll(() => written.length).toBe(3);
    expect(written[2]).toMatchObject({ event: 'missed', data: JSON.stringify({ events: 3 }) });
    // After that, events flow again.
    written[2]?.taken();
    await expect.poll(() => sender.pendingBytes).toBe(0);
    expect(sender.send({ event: 'change', data })).toBe(true);
    expect(written[3]?.event).toBe('change');
  });
});
