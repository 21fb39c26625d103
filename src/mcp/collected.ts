import { Writable } from 'node:stream';
import type { Reporter } from '../workspace/reporter.js';

/** How much of the commands' output one tool call returns: its tail. */
export const OUTPUT_LIMIT = 64 * 1024;

/** What one tool call collects instead of printing: warren's lines and the commands' output (its tail, when long). */
export class Collected {
  lines: string[] = [];
  private out = '';
  private dropped = 0;
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      this.out += chunk.toString('utf8');
      if (this.out.length > OUTPUT_LIMIT) {
        this.dropped += this.out.length - OUTPUT_LIMIT;
        this.out = this.out.slice(-OUTPUT_LIMIT);
      }
      done();
    },
  });
  reporter(): Reporter {
    return { line: (text) => this.lines.push(text), output: { stdout: this.stream, stderr: this.stream } };
  }
  output(): string {
    return this.dropped > 0
      ? `[${this.dropped} earlier bytes left out; the run's log has everything]\n${this.out}`
      : this.out;
  }
}
