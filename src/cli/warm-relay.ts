/**
 * One output stream of a warm process, passed on until the mark the process writes when its
 * command is done (src/cli/warm-worker.ts). The mark is NUL, a fixed word and a random nonce per
 * command, so output cannot end the stream by chance. Bytes that might be the start of the mark
 * are held back until the next chunk says; nothing else is, so a command's progress shows as it
 * comes. What arrives after the mark (nothing, unless something the command started outlives
 * it and writes to warren's own stream) is not passed on.
 */
export class MarkedStream {
  private held: Buffer = Buffer.alloc(0);
  ended = false;

  constructor(
    private readonly mark: Buffer,
    private readonly pass: (chunk: Buffer) => void,
  ) {}

  /** Takes the next chunk; true once the mark has been seen. */
  push(chunk: Buffer): boolean {
    if (this.ended) return true;
    const data = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const at = data.indexOf(this.mark);
    if (at >= 0) {
      this.held = Buffer.alloc(0);
      if (at > 0) this.pass(data.subarray(0, at));
      this.ended = true;
      return true;
    }
    const keep = this.partialMarkAtEnd(data);
    if (data.length > keep) this.pass(data.subarray(0, data.length - keep));
    this.held = data.subarray(data.length - keep);
    return false;
  }

  /** The stream closed without its mark (the process died): what was held back is output after all. */
  flush(): void {
    if (!this.ended && this.held.length > 0) this.pass(this.held);
    this.held = Buffer.alloc(0);
  }

  /** How many bytes at the end of `data` are the mark's beginning. */
  private partialMarkAtEnd(data: Buffer): number {
    for (let n = Math.min(this.mark.length - 1, data.length); n > 0; n--) {
      if (data.subarray(data.length - n).equals(this.mark.subarray(0, n))) return n;
    }
    return 0;
  }
}

export function endMark(nonce: string): string {
  return `\u0000warren-warm-end ${nonce}\u0000`;
}
