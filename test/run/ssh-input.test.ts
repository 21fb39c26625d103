import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { inputFrames, inputFromFrames, parseFrame } from '../../src/run/ssh/input.js';

/** The caller's input over the SSH runner's connection (src/run/ssh/input.ts): frames after `exec`'s. */

async function read(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

describe('input frames', () => {
  it('carry bytes of any value through, cut anywhere; the input ends before the connection does', async () => {
    const data = randomBytes(300_000);
    const { frames } = inputFrames(Readable.from([data.subarray(0, 7), data.subarray(7)]));
    const text = await read(frames);
    // The connection: the frames, cut at odd places, then open until the run ends.
    const connection = new PassThrough();
    let lost = false;
    const input = inputFromFrames(connection, () => (lost = true));
    for (let i = 0; i < text.length; i += 4093) connection.write(text.subarray(i, i + 4093));
    expect(await read(input)).toEqual(data);
    expect(lost).toBe(false);
    connection.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lost).toBe(true);
  });

  it('a connection that ends before the input did ends the input too, and says so', async () => {
    const connection = new PassThrough();
    let lost = false;
    const input = inputFromFrames(connection, () => (lost = true));
    connection.end(`${JSON.stringify({ in: Buffer.from('half').toString('base64') })}\n`);
    expect((await read(input)).toString()).toBe('half');
    expect(lost).toBe(true);
  });

  it.each([
    ['{"end":true}', { end: true }],
    ['{"in":"aGk="}', { in: 'aGk=' }],
    ['{"end":1}', null],
    ['{"in":5}', null],
    ['null', null],
    ['not json', null],
    ['{"op":"exec"}', null],
  ])('parseFrame(%s)', (line, frame) => {
    expect(parseFrame(line)).toEqual(frame);
  });
});
