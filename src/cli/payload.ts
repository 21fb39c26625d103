import { WarrenError } from '../errors.js';

/** The most a hook's payload on stdin may be. Claude Code's are a few hundred bytes: a name, paths, a session id. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

export interface ReadPayloadOptions {
  /** Default MAX_PAYLOAD_BYTES. */
  maxBytes?: number;
  /** Takes what came after this long (default 30 s). */
  timeoutMs?: number;
  /** What the payload is for, in the refusal: `the WorktreeCreate hook`. */
  what: string;
}

/**
 * A JSON payload from stdin, read once. It ends at end of file, or where its top-level object
 * or array closes: a caller that keeps stdin open must not hang the hook. That end is found by
 * looking at each byte once — not by parsing everything read so far on every chunk, which took
 * seconds and ~900 MB for 16 MiB. Past `maxBytes` it is refused (USAGE) and read no further;
 * the caller parses the text once.
 */
export function readJsonPayload(stdin: NodeJS.ReadableStream, options: ReadPayloadOptions): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_PAYLOAD_BYTES;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const scan = new JsonEnd();
    const stop = (): void => {
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', done);
      stdin.off('error', done);
      stdin.pause();
    };
    function done(): void {
      stop();
      resolve(Buffer.concat(chunks).toString('utf8'));
    }
    const onData = (data: Buffer | string): void => {
      const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      const room = maxBytes - received;
      const end = scan.feed(chunk, Math.min(chunk.length, room));
      if (end !== null) {
        chunks.push(chunk.subarray(0, end));
        done();
        return;
      }
      if (chunk.length > room) {
        stop();
        reject(
          new WarrenError(
            'USAGE',
            `${options.what} got more than ${maxBytes / 1024 / 1024} MiB on stdin, far more than any hook payload (a few hundred bytes); it read no further, and nothing was done.`,
            { hint: 'Claude Code sends the payload itself; see `warren hooks install claude`.', details: { maxBytes } },
          ),
        );
        return;
      }
      chunks.push(chunk);
      received += chunk.length;
    };
    const timer = setTimeout(done, options.timeoutMs ?? 30_000);
    stdin.on('data', onData);
    stdin.once('end', done);
    stdin.once('error', done);
  });
}

/**
 * Where a JSON object or array that starts the input closes, fed a chunk at a time: depth
 * counted outside strings, escapes skipped inside them. Bytes, not characters: in UTF-8 every
 * byte of a multi-byte character is above 0x7f, so none is mistaken for `"`, `\`, a bracket or a
 * brace. Input that starts with anything else has no end but end of file.
 */
class JsonEnd {
  private state: 'before' | 'inside' | 'other' = 'before';
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** The end (exclusive) within this chunk when the value closed in its first `length` bytes, else null. */
  feed(chunk: Buffer, length: number): number | null {
    for (let i = 0; i < length; i++) {
      const b = chunk[i] ?? 0;
      if (this.state === 'other') return null;
      if (this.state === 'before') {
        if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
        this.state = b === 0x7b || b === 0x5b ? 'inside' : 'other';
        if (this.state === 'inside') this.depth = 1;
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) this.inString = false;
      } else if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if ((b === 0x7d || b === 0x5d) && --this.depth === 0) return i + 1;
    }
    return null;
  }
}
