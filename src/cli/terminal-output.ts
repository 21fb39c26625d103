import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import { terminalStream, type TerminalStream } from '../util/terminal-text.js';

/**
 * Where a supervised command's output is shown live when that is a terminal: the bytes decoded
 * as UTF-8 and passed through `terminalStream` (colours kept, every other escape sequence shown
 * as text). Each write goes through at once, in order with warren's own lines; a failed write on
 * the terminal is this stream's error too, as the supervisor expects of the stream it writes to.
 */
export class TerminalOutput extends Writable {
  private readonly decoder = new StringDecoder('utf8');
  private readonly filter: TerminalStream = terminalStream();

  /** `before`: told before each write reaches the terminal (a live step's line is left first: src/cli/progress.ts). */
  constructor(
    private readonly target: NodeJS.WritableStream,
    private readonly before: () => void = () => undefined,
  ) {
    super();
    target.on('error', (err: Error) => this.destroy(err));
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = this.filter.write(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    if (text !== '') {
      this.before();
      this.target.write(text);
    }
    done();
  }

  /** Before warren prints on the terminal: what was held back, and a reset of the colours left on. */
  settle(): void {
    const rest = this.filter.flush();
    if (rest !== '' && !this.destroyed) {
      this.before();
      this.target.write(rest);
    }
  }
}

/**
 * `stream` itself when it is no terminal (a pipe or a file gets the command's bytes as they are,
 * as ssh and docker exec give them), else a `TerminalOutput` in front of it.
 */
export function terminalOutput(stream: NodeJS.WritableStream, before?: () => void): NodeJS.WritableStream {
  return isTerminal(stream) ? new TerminalOutput(stream, before) : stream;
}

/** Whether `stream` is a terminal (a pseudo-terminal included). */
export function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}
