import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INITIAL_TAIL_BYTES, followLog, resolveLog } from '../../src/web/log-tail.js';
import { tmpDir } from '../helpers/repo.js';

/** Following a real, growing file; conditions are awaited, never timed. */

interface Seen {
  text: string;
  starts: { skipped: number }[];
  end: { missing: boolean } | null;
}

function follow(file: string, finished: { value: boolean }): Seen & { stop(): void } {
  const seen: Seen = { text: '', starts: [], end: null };
  const follower = followLog({
    resolve: () => (fs.existsSync(file) ? file : null),
    isFinished: () => finished.value,
    onStart: (info) => seen.starts.push(info),
    onChunk: (text) => (seen.text += text),
    onEnd: (info) => (seen.end = info),
    intervalMs: 10,
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

  it('serves only logs inside warren\'s folders, also through symlinks', () => {
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
