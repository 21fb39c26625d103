import { PassThrough, Transform, type Readable } from 'node:stream';

/**
 * The caller's own standard input of a run on a host (`warren exec ID -- cmd < file`), streamed
 * after the `exec` frame (which says `input: true`) on the same connection: one frame a line,
 * each chunk as it comes `{"in":"<base64>"}`, its end `{"end":true}`. The end of the input is a
 * frame and not the end of the connection, which stays the end of the run (a lost connection).
 */

type InputFrame = { in: string } | { end: true };

const END = `${JSON.stringify({ end: true } satisfies InputFrame)}\n`;

/** How much of the input the host keeps ahead of a command that does not read it, before it stops reading the connection. */
const AHEAD_BYTES = 1 << 20;

/**
 * The coordinator's side: `source` as frames, read only as fast as the connection takes them.
 * `stop` leaves `source` unread (this process's own stdin must not keep it alive after the run).
 */
export function inputFrames(source: NodeJS.ReadableStream): { frames: Readable; stop(): void } {
  const frames = new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      done(null, `${JSON.stringify({ in: data.toString('base64') } satisfies InputFrame)}\n`);
    },
    flush(done) {
      done(null, END);
    },
  });
  // An input that cannot be read (EIO of a terminal gone) ends there, as its end would.
  const failed = (): void => {
    source.unpipe(frames);
    frames.end();
  };
  source.once('error', failed);
  source.pipe(frames);
  return {
    frames,
    stop() {
      source.unpipe(frames);
      source.removeListener('error', failed);
      source.pause();
    },
  };
}

/**
 * The host's side: the command's input read back from the frames that follow `exec`'s on
 * `connection`; `lost` is called when the connection ends (the coordinator's run ended, or the
 * connection was lost), whether or not the input had. The connection is read ahead of the
 * command by at most AHEAD_BYTES of input, so that its end is seen while the command is not reading.
 */
export function inputFromFrames(connection: NodeJS.ReadableStream, lost: () => void): Readable {
  const input = new PassThrough({ highWaterMark: AHEAD_BYTES });
  let pending = '';
  connection.on('data', (chunk: Buffer | string) => {
    const from = pending.length;
    pending += chunk.toString();
    // A frame's line may come in many chunks: only the new part is searched for its end.
    for (let nl = pending.indexOf('\n', from); nl !== -1; nl = pending.indexOf('\n')) {
      const frame = parseFrame(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      if (frame === null || input.writableEnded) continue;
      if ('end' in frame) input.end();
      else if (!input.write(Buffer.from(frame.in, 'base64'))) {
        connection.pause();
        input.once('drain', () => connection.resume());
      }
    }
  });
  connection.once('end', () => {
    if (!input.writableEnded) input.end();
    lost();
  });
  connection.resume();
  return input;
}

/** One line as an input frame; null for anything else (ignored). Pure. */
export function parseFrame(line: string): InputFrame | null {
  try {
    const parsed = JSON.parse(line) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return null;
    if ('end' in parsed && parsed.end === true) return { end: true };
    if ('in' in parsed && typeof parsed.in === 'string') return { in: parsed.in };
  } catch {
    // not a frame
  }
  return null;
}
