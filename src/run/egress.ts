import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Egress by allowlist for a bwrap-sandboxed run (`sandbox: { kind: bwrap, allow: [...] }`).
 *
 * The sandbox has a network namespace of its own (`--unshare-net`): a loopback and no route
 * out. warren runs this proxy for the length of the run, on a unix socket that is bound into
 * the sandbox; inside, a small bridge (bin/egress-bridge.mjs) listens on the sandbox's loopback and
 * carries each connection over that socket. So a connection leaves the sandbox only through
 * here, and here it is checked against the allowlist:
 * - HTTP CONNECT host:port (HTTPS, and anything tunnelled) and plain HTTP requests with an
 *   absolute URL, as clients send them to HTTP_PROXY / HTTPS_PROXY / ALL_PROXY;
 * - an allowed loopback entry (`127.0.0.1:8080`, `localhost:11434`: a local model server) is
 *   also forwarded as is: the bridge listens on that port of the sandbox's own loopback and
 *   tunnels to the host's, because clients do not send loopback through a proxy (NO_PROXY).
 * A refused connection gets `403` and is reported once per host:port (an event, by the caller).
 */

export interface AllowRule {
  /** Lower-case host name or address; `*.example.com` matches its subdomains (not itself). */
  host: string;
  /** Null: any port. */
  port: number | null;
}

/** Pure: `host`, `host:port`, `*.domain`, `1.2.3.4:5`, `[::1]:5` → a rule. The config schema has checked the syntax. */
export function parseAllowEntry(entry: string): AllowRule {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: (bracketed[1] ?? '').toLowerCase(), port: bracketed[2] ? Number(bracketed[2]) : null };
  const m = /^(.*?)(?::(\d+))?$/.exec(entry);
  return { host: (m?.[1] ?? entry).toLowerCase(), port: m?.[2] ? Number(m[2]) : null };
}

/** Pure: does any rule let a connection to host:port out? */
export function isAllowed(rules: readonly AllowRule[], host: string, port: number): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return rules.some(
    (r) =>
      (r.port === null || r.port === port) && (r.host.startsWith('*.') ? h.endsWith(r.host.slice(1)) : h === r.host),
  );
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Pure: the allowed loopback host:ports the bridge forwards as they are (a loopback rule needs a port). */
export function loopbackForwards(rules: readonly AllowRule[]): { host: string; port: number }[] {
  return rules
    .filter((r) => LOOPBACK.has(r.host) && r.port !== null)
    .map((r) => ({ host: r.host === '::1' ? '::1' : '127.0.0.1', port: r.port as number }));
}

/** Pure: host and port of a CONNECT target (`host:port`, `[v6]:port`); null when malformed. */
export function parseTarget(target: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(target);
  const port = Number(m?.[3]);
  if (!m || !(port >= 1 && port <= 65535)) return null;
  return { host: (m[1] ?? m[2] ?? '').toLowerCase(), port };
}

export interface EgressProxy {
  /** The unix socket on the host side. */
  socket: string;
  /** Where the sandbox sees it. */
  insideSocket: string;
  forwards: { host: string; port: number }[];
  /** Distinct host:port refused so far. */
  refused(): number;
  close(): Promise<void>;
}

export const INSIDE_SOCKET = '/tmp/.warren-egress.sock';

export async function startEgressProxy(
  allow: readonly string[],
  onRefused: (host: string, port: number, via: 'connect' | 'http') => void,
): Promise<EgressProxy> {
  // Loaded here, not at the top: every command would pay ~5 ms for Node's http, and only a sandboxed run with an allow list uses it.
  const { createServer, request } = await import('node:http');
  const rules = allow.map(parseAllowEntry);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-egress-'));
  const socket = path.join(dir, 'proxy.sock');
  const seen = new Set<string>();
  const sockets = new Set<net.Socket>();
  const refuse = (host: string, port: number, via: 'connect' | 'http'): void => {
    const key = `${host}:${port}`;
    if (seen.has(key)) return;
    seen.add(key);
    onRefused(host, port, via);
  };
  const deny = (host: string, port: number) =>
    `warren sandbox: ${host}:${port} is not on this task's allow list (sandbox.allow in warren.yaml)\n`;

  const server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('warren sandbox: only absolute URLs are proxied\n');
      return;
    }
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (url.protocol !== 'http:' || !isAllowed(rules, host, port)) {
      if (url.protocol === 'http:') refuse(host, port, 'http');
      res.writeHead(403, { 'content-type': 'text/plain' }).end(deny(host, port));
      return;
    }
    const upstream = request(
      { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers, setHost: false },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.rawHeaders as unknown as http.OutgoingHttpHeaders);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`warren sandbox: ${host}:${port}: ${err.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = parseTarget(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    if (!isAllowed(rules, target.host, target.port)) {
      refuse(target.host, target.port, 'connect');
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${deny(target.host, target.port)}`,
      );
      return;
    }
    const upstream = net.connect(target.port, target.host);
    let connected = false;
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      connected = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      if (!connected && client.writable)
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nwarren sandbox: ${target.host}:${target.port}: ${err.message}\n`);
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return {
    socket,
    insideSocket: INSIDE_SOCKET,
    forwards: loopbackForwards(rules),
    refused: () => seen.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

/** The bridge that runs first inside the sandbox: bin/egress-bridge.mjs (src/run, dist/run and dist/bundle all sit two folders below it). */
export function bridgeScript(): string {
  return new URL('../../bin/egress-bridge.mjs', import.meta.url).pathname;
}
