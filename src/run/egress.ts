import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { removeTreeOrThrow } from '../system/remove-tree.js';
import { assertSocketPath } from '../system/socket-path.js';
import { homeTag } from '../util/home-tag.js';

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

/** Pure: a loopback literal with a port — the one kind of entry that may reach a non-public address. */
export function isLoopbackRule(rule: AllowRule): boolean {
  return rule.port !== null && (LOOPBACK.has(rule.host) || /^127(\.\d{1,3}){3}$/.test(rule.host));
}

/**
 * Pure: is `address` (an IPv4 or IPv6 literal) on the public internet? Loopback, private,
 * link-local, shared (CGNAT), unspecified, documentation, benchmarking, multicast and reserved
 * ranges are not — nor an IPv4 address mapped or embedded in IPv6.
 */
export function isPublicAddress(address: string): boolean {
  const v4 = net.isIPv4(address) ? address : /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4 !== undefined) {
    const [a = 0, b = 0, c = 0] = v4.split('.').map(Number);
    return !(
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 0 && (c === 0 || c === 2)) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      (a === 198 && b === 51 && c === 100) ||
      (a === 203 && b === 0 && c === 113) ||
      a >= 224
    );
  }
  if (!net.isIPv6(address)) return false;
  const h = address.toLowerCase();
  if (h === '::' || h === '::1') return false;
  if (/^::(ffff:)?[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(h)) return false; // IPv4 in IPv6, written in hex
  const first = parseInt(h.split(':')[0] || '0', 16);
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast, 2001:db8::/32 documentation.
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0) return false;
  if ((first & 0xff00) === 0xff00) return false;
  if (h.startsWith('2001:db8:') || h.startsWith('64:ff9b:')) return false;
  return true;
}

/** Why a connection to `host` may not leave, once its addresses are known; null when it may. */
export async function addressRefusal(
  rules: readonly AllowRule[],
  host: string,
  port: number,
  lookup: (host: string) => Promise<string[]> = resolveAll,
): Promise<{ reason: string } | { address: string }> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (rules.some((r) => isLoopbackRule(r) && r.port === port && r.host === bare.toLowerCase())) {
    return { address: bare === 'localhost' ? '127.0.0.1' : bare };
  }
  let addresses: string[];
  try {
    addresses = net.isIP(bare) ? [bare] : await lookup(bare);
  } catch (err) {
    return { reason: `${host} does not resolve (${err instanceof Error ? err.message : String(err)})` };
  }
  const inside = addresses.filter((a) => !isPublicAddress(a));
  if (addresses.length === 0) return { reason: `${host} resolves to no address` };
  if (inside.length > 0) {
    return {
      reason: `${host} resolves to ${inside.join(', ')}, a loopback, private or link-local address; only an entry that is a loopback address with its port reaches one`,
    };
  }
  return { address: addresses[0] as string };
}

async function resolveAll(host: string): Promise<string[]> {
  const { lookup } = await import('node:dns/promises');
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}

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

/** The longest the proxy's folder and socket add below their parent (a tag, mkdtemp's six characters). */
export const EGRESS_SOCKET_TAIL = 'warren-egress-TTTTTTTT-XXXXXX/proxy.sock'.length;

/**
 * The start of the names of the proxy folders a WARREN_HOME's runs make in the temporary folder:
 * `gc` collects its own home's that a killed warren left (egress-gc.ts), never another's.
 */
export function egressPrefix(home: string | null): string {
  return home === null ? 'warren-egress-' : `warren-egress-${homeTag(home)}-`;
}

export async function startEgressProxy(
  allow: readonly string[],
  onRefused: (host: string, port: number, via: 'connect' | 'http', reason: string) => void,
  /** Where its folder goes (default: this process's temporary folder); a unix socket's path holds at most 107 bytes. */
  parent: string = os.tmpdir(),
  /** The WARREN_HOME whose run it is, named in the folder's name (egressPrefix). */
  home: string | null = null,
): Promise<EgressProxy> {
  // Loaded here, not at the top: every command would pay ~5 ms for Node's http, and only a sandboxed run with an allow list uses it.
  const { createServer, request } = await import('node:http');
  const rules = allow.map(parseAllowEntry);
  // Refused before anything is made: a longer path would be cut (libuv), bound elsewhere, and lost.
  const prefix = egressPrefix(home);
  assertSocketPath(path.join(parent, `${prefix}XXXXXX`, 'proxy.sock'), "the sandbox's egress proxy socket");
  // This user's alone: the folder 0700 (mkdtemp's mode, whatever the umask) and the socket 0600,
  // so that another user of this machine cannot send traffic out as this task.
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  const socket = path.join(dir, 'proxy.sock');
  const seen = new Set<string>();
  const sockets = new Set<net.Socket>();
  const refuse = (host: string, port: number, via: 'connect' | 'http', reason: string): void => {
    const key = `${host}:${port}`;
    if (seen.has(key)) return;
    seen.add(key);
    onRefused(host, port, via, reason);
  };
  const notListed = (host: string, port: number) =>
    `${host}:${port} is not on this task's allow list (sandbox.allow in warren.yaml)`;
  const deny = (why: string) => `warren sandbox: ${why}\n`;

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
      if (url.protocol === 'http:') refuse(host, port, 'http', notListed(host, port));
      res.writeHead(403, { 'content-type': 'text/plain' }).end(deny(notListed(host, port)));
      return;
    }
    void forward(host, port, `${url.pathname}${url.search}`, req, res);
  });
  // The name is resolved here, once, and the connection goes to the address that was checked.
  const forward = async (
    host: string,
    port: number,
    target: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ) => {
    const checked = await addressRefusal(rules, host, port);
    if ('reason' in checked) {
      refuse(host, port, 'http', checked.reason);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(deny(checked.reason));
      return;
    }
    const upstream = request(
      {
        host: checked.address,
        port,
        method: req.method,
        path: target,
        headers: req.headers,
        setHost: false,
      },
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
  };
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = parseTarget(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const forbid = (why: string) => {
      refuse(target.host, target.port, 'connect', why);
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${deny(why)}`);
    };
    if (!isAllowed(rules, target.host, target.port)) {
      forbid(notListed(target.host, target.port));
      return;
    }
    void addressRefusal(rules, target.host, target.port).then((checked) => {
      if ('reason' in checked) forbid(checked.reason);
      else tunnel(checked.address);
    });
    const tunnel = (address: string) => {
      const upstream = net.connect(target.port, address);
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
    };
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => {
        removeTreeOrThrow(dir, { inside: parent });
        resolve();
      });
    });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
    fs.chmodSync(socket, 0o600);
  } catch (err) {
    // A listening server left behind holds the event loop: the command that asked would never exit.
    await close();
    throw err;
  }
  return {
    socket,
    insideSocket: INSIDE_SOCKET,
    forwards: loopbackForwards(rules),
    refused: () => seen.size,
    close,
  };
}

/** The bridge that runs first inside the sandbox: bin/egress-bridge.mjs (src/run, dist/run and dist/bundle all sit two folders below it). */
export function bridgeScript(): string {
  return new URL('../../bin/egress-bridge.mjs', import.meta.url).pathname;
}
