import fs from 'node:fs';
import path from 'node:path';
import { warmDir } from '../state/home.js';
import { readCommandWords } from './argv.js';

/**
 * What `warren warm` (src/cli/warm-server.ts) and the command line (src/cli/warm-client.ts) say
 * to each other over the socket under WARREN_HOME. Every message is a frame: one byte of kind,
 * four bytes of length (big-endian), then the payload (JSON, or output bytes as they came).
 *
 *  client → warm: R the request (argv, cwd, environment, umask, build), G go (the client has
 *                 heard A: from now on it will not run the command itself), S a signal to pass
 *                 on, P a question: how many warm processes are idle (`bench core` waits on it)
 *  warm → client: A accepted (a warm process is set aside for it), N not taken (why; the client
 *                 runs it itself), O / E output for stdout / stderr, X how the command ended,
 *                 K the answer to P
 *
 * The command starts only on G, so it runs exactly once: a client that never heard A runs it
 * itself, and then warren warm never hears G.
 */
export type FrameKind = 'R' | 'G' | 'S' | 'P' | 'A' | 'N' | 'O' | 'E' | 'X' | 'K';

export interface WarmRequest {
  build: string;
  argv: string[];
  /** The client's `process.argv[1]`: the command line warren was started as (hooks and the queue start it again). */
  entry: string;
  cwd: string;
  env: Record<string, string>;
  umask: number;
}

/** What warren warm hands a warm process: the request, and the mark that ends its output (src/cli/warm-relay.ts). */
export interface WarmJob extends WarmRequest {
  end: string;
}

/** Why a request was not taken: the client then runs the command in its own process. */
export interface WarmRefusal {
  reason: 'build' | 'busy' | 'stopping';
  message: string;
}

export interface WarmExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WarmStatus {
  idle: number;
  busy: number;
  size: number;
}

/**
 * The commands a warm process may run: each finishes on its own, never reads stdin or asks a
 * question, and starts nothing that outlives it in the foreground. Excluded: what runs a command
 * or an agent in the foreground (exec, run, setup, verify, provision, land, queue — their
 * start-up is small beside their work, and a terminal's job control should reach them
 * directly), what reads stdin (trust's question, the git hooks, mcp), what stays up (serve, warm).
 */
export const WARM_COMMANDS: ReadonlySet<string> = new Set([
  'new', 'list', 'show', 'path', 'status', 'diff', 'rm', 'restore', 'comment', 'comments', 'checkpoint', 'audit', 'scan', 'gc',
]);

/** The socket under WARREN_HOME (unix sockets are limited to 107 bytes of path: see `socketPathFits`). */
export function warmSocket(home: string): string {
  return path.join(warmDir(home), 'cli.sock');
}

export function socketPathFits(socket: string): boolean {
  return Buffer.byteLength(socket) <= 107;
}

/**
 * What must be equal for a warm process to run a command exactly as the client would: the same
 * Node, the same warren files. Read the same way on both sides, from the bundle's folder
 * (dist/bundle/): its entry file's path and time.
 */
export function buildId(bundleDir: string): string {
  const entry = path.join(bundleDir, 'bin.js');
  let stamp = 'missing';
  try {
    stamp = String(fs.statSync(entry).mtimeMs);
  } catch {
    // A build without the entry file still gets an id; a client never has one that matches.
  }
  return `${process.version} ${process.execPath} ${entry} ${stamp}`;
}

/** The command a command line names (the first word that is not a global option), or null: help, the version or a mistake, which the local command line answers. */
export function commandOf(argv: readonly string[]): string | null {
  return readCommandWords(argv).command;
}

export function encodeFrame(kind: FrameKind, payload: Buffer | string | object): Buffer {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  const head = Buffer.alloc(5);
  head.write(kind, 0, 'latin1');
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into frames; `push` returns the complete ones. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ kind: FrameKind; body: Buffer }> {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Array<{ kind: FrameKind; body: Buffer }> = [];
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) break;
      frames.push({ kind: this.pending.toString('latin1', 0, 1) as FrameKind, body: this.pending.subarray(5, 5 + length) });
      this.pending = this.pending.subarray(5 + length);
    }
    return frames;
  }
}

export function json<T>(body: Buffer): T {
  return JSON.parse(body.toString('utf8')) as T;
}
