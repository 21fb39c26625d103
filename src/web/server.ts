import { createAdaptorServer } from '@hono/node-server';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Hono } from 'hono';
import { WarrenError } from '../errors.js';
import type { Store } from '../state/store.js';
import type { ProjectContext } from '../workspace/context.js';
import { registerApi } from './api.js';
import { EventHub } from './event-hub.js';
import { judgePeer, peerRefusal, type PeerVerdict } from './peer.js';
import {
  SECURITY_HEADERS,
  TOKEN_HEADER,
  allowedHosts,
  hostAllowed,
  isJsonMediaType,
  isLoopbackHost,
  listenAddress,
  originAllowed,
  tokenMatches,
} from './security.js';
import { loadOrCreateToken } from './token-file.js';

export interface ServeOptions {
  /** The project `warren serve` was started in; the default view. */
  project: ProjectContext;
  store: Store;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Required for a host that is not loopback. */
  allowRemote?: boolean;
  pollMs?: number;
  /** Where warnings go (the CLI passes stderr). */
  warn?(line: string): void;
}

export interface RunningServer {
  /** Where the server answers: `http://127.0.0.1:PORT/`. */
  url: string;
  /** The address to open in a browser: `url` with the token, `?token=…`. */
  openUrl: string;
  host: string;
  port: number;
  token: string;
  /** Where the token is kept: `$WARREN_HOME/dashboard/token`, 0600. */
  tokenFile: string;
  hub: EventHub;
  close(): Promise<void>;
}

/** Client files: plain HTML/CSS/JS, no bundler. Same relative place from src/web and dist/web. */
const CLIENT_DIR = new URL('../../web/', import.meta.url);
const JS = 'text/javascript; charset=utf-8';
const CLIENT_FILES: Record<string, string> = {
  '/app.js': JS,
  '/actions.js': JS,
  '/dom.js': JS,
  '/fleet.js': JS,
  '/state.js': JS,
  '/task.js': JS,
  '/toast.js': JS,
  '/cells.js': JS,
  '/log.js': JS,
  '/diff.js': JS,
  '/ansi.js': JS,
  '/transcript.js': JS,
  '/results.js': JS,
  '/disk.js': JS,
  '/conflicts.js': JS,
  '/app.css': 'text/css; charset=utf-8',
  // Served here, never fetched from elsewhere; also at /favicon.ico, where browsers look unasked.
  '/favicon.svg': 'image/svg+xml',
};

/**
 * What the page shares with the command line: src/util/terminal-text.ts, built for the browser
 * by scripts/bundle.js, so that a name shows the same on the page as on the terminal.
 */
const SHARED_DIR = new URL('../../dist/client/', import.meta.url);
const SHARED_FILES = ['/terminal-text.js'];

function readClient(name: string, dir = CLIENT_DIR): string {
  return fs.readFileSync(new URL(name, dir), 'utf8');
}

export function assertHostPermitted(host: string, allowRemote: boolean): void {
  if (!isLoopbackHost(host) && !allowRemote) {
    throw new WarrenError(
      'USAGE',
      `--host ${host} is not a loopback address; the dashboard can remove workspaces, so it listens on 127.0.0.1 unless you say otherwise. Nothing was started.`,
      {
        hint: 'Add --allow-remote if other machines on this network should reach it (they get full control), or drop --host.',
      },
    );
  }
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const allowRemote = options.allowRemote === true;
  assertHostPermitted(options.host, allowRemote);
  const { token, file: tokenFile, replaced } = loadOrCreateToken(options.store.home);
  if (replaced !== undefined) {
    const message = `${replaced}; a new token was written in its place (the old one no longer opens the dashboard).`;
    options.warn?.(`warning: ${message}`);
    options.store.addEvent({
      project: options.project.key,
      kind: 'serve.token-replaced',
      level: 'warn',
      message,
      data: { file: tokenFile, reason: replaced },
    });
  }
  const hub = new EventHub(options.store, options.pollMs, (err) =>
    options.warn?.(`warren serve: reading events failed, retrying: ${String(err)}`),
  );
  let allowed = new Set<string>();
  const closers = new Set<() => void>();
  const inflight = new Set<Promise<unknown>>();

  const app = new Hono();
  app.use('*', async (c, next) => {
    // DNS rebinding: a page from evil.example resolved to 127.0.0.1 sends Host: evil.example.
    if (!hostAllowed(c.req.header('host'), allowed)) {
      return c.text('warren: this dashboard answers only to the address it serves (Host header refused).\n', 421);
    }
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
  });
  app.use('/api/*', async (c, next) => {
    const method = c.req.method;
    const mutating = method !== 'GET' && method !== 'HEAD';
    if (!originAllowed(c.req.header('origin'), allowed)) return refuse(c, 'the request came from another origin');
    // EventSource cannot send headers, so a GET may carry the token as a query parameter.
    // A state-changing request must carry it in the header, and as JSON.
    const given = c.req.header(TOKEN_HEADER) ?? (mutating ? undefined : c.req.query('token'));
    if (!tokenMatches(token, given)) return refuse(c, `the request lacks the dashboard's token (${TOKEN_HEADER})`);
    const type = c.req.header('content-type');
    if (mutating && !isJsonMediaType(type)) {
      const message = `a state-changing request must be application/json, not ${type === undefined ? 'without a Content-Type' : JSON.stringify(type)}; nothing was changed.`;
      return c.json(
        { error: { code: 'USAGE', message, hint: 'Send the body as JSON with `Content-Type: application/json`.' } },
        415,
      );
    }
    await next();
  });

  // The page holds no token and no data: it reads the token from its own address (the URL
  // `warren serve` printed), and says how to open it when there is none.
  const indexHtml = readClient('index.html');
  app.get('/', (c) => c.html(indexHtml));
  for (const [file, type] of Object.entries(CLIENT_FILES)) {
    const body = readClient(file.slice(1));
    app.get(file, (c) => c.body(body, 200, { 'Content-Type': type }));
  }
  for (const file of SHARED_FILES) {
    const body = readClient(file.slice(1), SHARED_DIR);
    app.get(file, (c) => c.body(body, 200, { 'Content-Type': JS }));
  }
  const icon = readClient('favicon.svg');
  app.get('/favicon.ico', (c) => c.body(icon, 200, { 'Content-Type': 'image/svg+xml' }));
  registerApi(app, { project: options.project, store: options.store, hub, closers, inflight });

  // Who is at the other end is asked once per connection, as it is accepted; a request is
  // answered only on a connection that was judged and allowed.
  const verdicts = new WeakMap<Socket, PeerVerdict>();
  const reported = new Set<string>();
  const server = createAdaptorServer({
    fetch: (req: Request, env: { incoming: { socket: Socket } }) => {
      const verdict = verdicts.get(env.incoming.socket);
      if (verdict?.ok === true) return app.fetch(req, env);
      const reason = verdict?.reason ?? 'this connection was not checked';
      return new Response(peerRefusal(reason), {
        status: 403,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close', ...SECURITY_HEADERS },
      });
    },
  }) as Server;
  server.prependListener('connection', (socket: Socket) => {
    const client = { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
    const verdict = judgePeer(client, { address: socket.localAddress ?? '', port: socket.localPort ?? 0 });
    verdicts.set(socket, verdict);
    if (verdict.ok) return;
    const key = String(verdict.uid);
    if (reported.has(key)) return;
    reported.add(key);
    const peer = `${client.address}:${client.port}`;
    const message =
      verdict.uid === null
        ? `refused a connection from ${peer}: ${verdict.reason}.`
        : `refused a connection from uid ${verdict.uid} (${peer}): this dashboard serves uid ${process.geteuid?.()} alone.`;
    options.warn?.(`warren serve: ${message}`);
    options.store.addEvent({
      project: options.project.key,
      kind: 'serve.refused',
      level: 'warn',
      message,
      data: { uid: verdict.uid, peer, reason: verdict.reason },
    });
  });
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenRefusal(err, options.host, options.port)));
    server.listen(options.port, listenAddress(options.host), () => resolve(server.address() as AddressInfo));
  });
  allowed = allowedHosts(options.host, address.port);
  // While closing, each finished response frees its keep-alive connection so that close completes.
  let closing = false;
  server.on('request', (_req, res) => res.on('close', () => closing && server.closeIdleConnections()));
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostPart}:${address.port}/`;

  return {
    url,
    openUrl: `${url}?token=${token}`,
    host: options.host,
    port: address.port,
    token,
    tokenFile,
    hub,
    /** Stops taking requests, lets running actions finish (a removal is never cut in half), then closes. */
    async close() {
      closing = true;
      hub.stop();
      for (const close of [...closers]) close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.allSettled([...inflight]);
      // The last responses are being written; a client that keeps its connection anyway is cut.
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
    },
  };
}

/** Why the server could not listen, as a refusal when it is the address or port given. */
function listenRefusal(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    const why = err.code === 'EADDRINUSE' ? 'is already in use' : 'needs privileges this process does not have';
    return new WarrenError('USAGE', `port ${port} on ${host} ${why}; nothing was started.`, {
      hint: 'Pass another --port, or --port 0 for any free one.',
    });
  }
  const why: Record<string, string> = {
    ENOTFOUND: 'is not an address or a name this machine can resolve',
    EAI_AGAIN: 'could not be resolved (the name service did not answer)',
    EADDRNOTAVAIL: 'is not an address of this machine',
  };
  const reason = err.code === undefined ? undefined : why[err.code];
  if (reason === undefined) return err;
  return new WarrenError('USAGE', `--host ${host} ${reason}; nothing was started.`, {
    hint: 'Use an address of this machine, such as 127.0.0.1 or [::1] (the default is 127.0.0.1).',
  });
}

function refuse(c: { json: (body: unknown, status: 403) => Response }, why: string): Response {
  return c.json(
    {
      error: {
        code: 'FORBIDDEN',
        message: `refused: ${why}. Nothing was changed.`,
        hint: 'Open the URL `warren serve` printed (it carries the token), or add ?token= and the token in $WARREN_HOME/dashboard/token to the address.',
      },
    },
    403,
  );
}
