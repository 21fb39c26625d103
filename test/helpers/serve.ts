import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { onTestFinished } from 'vitest';
import { BIN } from './repo.js';

/** A real `warren serve` process (the built CLI), stopped when the test finishes. */
export interface ServeProcess {
  /** Where it answers, `http://127.0.0.1:PORT/`, to append API paths to. */
  url: string;
  /** The URL it printed, the one to open: with the token (`?token=…`). */
  openUrl: string;
  /** The token, as the printed URL carries it. */
  token: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  /** With `json: true`: the document `warren --json serve` printed. */
  printed?: Record<string, unknown>;
}

export function startServe(opts: {
  cwd: string;
  home: string;
  args?: string[];
  json?: boolean;
  /** More environment for the server (and so for the agents and commands it starts). */
  env?: Record<string, string>;
}): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [BIN, ...(opts.json ? ['--json'] : []), 'serve', '--port', '0', ...(opts.args ?? [])],
    {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env, WARREN_HOME: opts.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  onTestFinished(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (opts.json) {
        let printed: Record<string, unknown>;
        try {
          printed = JSON.parse(out) as Record<string, unknown>;
        } catch {
          return; // not all of it yet
        }
        resolve({ ...printedUrl(String(printed.url)), child, stderr: () => err, printed });
        return;
      }
      const m = /warren dashboard: (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve({ ...printedUrl(m[1]), child, stderr: () => err });
    });
    child.once('exit', (code) =>
      reject(new Error(`warren serve exited ${code} before printing its URL:\n${out}\n${err}`)),
    );
  });
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** node:http, not fetch: fetch will not let a test forge the Host header. */
export function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The parts of the URL `warren serve` printed: where it answers, and the token it carries. */
function printedUrl(openUrl: string): { url: string; openUrl: string; token: string; port: number } {
  const parsed = new URL(openUrl);
  const token = parsed.searchParams.get('token');
  if (token === null || !/^[0-9a-f]{64}$/.test(token)) throw new Error(`no token in the printed URL ${openUrl}`);
  return { url: `${parsed.origin}/`, openUrl, token, port: Number(parsed.port) };
}

export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads server-sent events off a response as they arrive: each complete block (`event:` and
 * `data:` lines, ended by a blank line) goes to `onEvent`, in order.
 */
export function readSse(res: http.IncomingMessage, onEvent: (e: SseEvent) => void): void {
  let buffer = '';
  res.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
      onEvent({ event, data: [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n') });
    }
  });
}
