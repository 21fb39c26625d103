import { randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';

/**
 * The dashboard's threat model. It serves one person on their own machine:
 * - Other users of that machine must not reach it: loopback is open to every uid, so on Linux
 *   each loopback connection's client socket must be the server's own uid's (peer.ts), and the
 *   token is never served: it reaches the page in the URL `warren serve` printed, and lives in
 *   a file only this user can read (token-file.ts).
 * - Other web pages in that person's browser must not drive it (CSRF): every request to /api
 *   carries the token, a state-changing one in a header (a cross-site form cannot set one) on a
 *   JSON POST (a cross-site fetch of that kind needs a CORS preflight, which is never answered).
 * - A hostile DNS name rebound to 127.0.0.1 must not read it (DNS rebinding): the Host header
 *   must name the address being served, so pages from another origin get refused.
 * - Other machines must not reach it: loopback only unless the user passes --allow-remote (then
 *   a client that is not on loopback is judged by the token alone).
 * - Data (branch names, commit messages, file names, log lines) is hostile text: the client
 *   writes it with textContent only, and the CSP forbids inline scripts as a second wall.
 */

export const TOKEN_HEADER = 'x-warren-token';

export function newToken(): string {
  return randomBytes(32).toString('hex');
}

/** Constant-time comparison, so the token cannot be guessed byte by byte from response times. */
export function tokenMatches(expected: string, given: string | null | undefined): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Pure: the address to listen on for a `--host` value. An IPv6 address may be written as in a
 * URL, `[::1]`; the socket wants it bare. Anything else is passed on as given.
 */
export function listenAddress(host: string): string {
  const bracketed = /^\[(.*)\]$/.exec(host);
  return bracketed?.[1] !== undefined && net.isIPv6(bracketed[1]) ? bracketed[1] : host;
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  if (net.isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** How a host appears in a Host header: IPv6 addresses in brackets, names lower-case. */
function hostForm(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return net.isIPv6(bare) ? `[${bare}]` : bare;
}

/**
 * Every `host:port` value the Host header may carry: the bound address, plus the loopback
 * names when bound to loopback, plus every interface address when bound to a wildcard.
 */
export function allowedHosts(boundHost: string, port: number, interfaces = os.networkInterfaces()): Set<string> {
  const names = new Set<string>([hostForm(boundHost)]);
  if (isLoopbackHost(boundHost) || isWildcard(boundHost)) {
    for (const n of ['127.0.0.1', 'localhost', '[::1]']) names.add(n);
  }
  if (isWildcard(boundHost)) {
    for (const list of Object.values(interfaces)) for (const addr of list ?? []) names.add(hostForm(addr.address));
  }
  return new Set([...names].map((n) => `${n}:${port}`));
}

/** Pure: is this Host header one of the allowed values? A missing header is refused. */
export function hostAllowed(header: string | undefined | null, allowed: ReadonlySet<string>): boolean {
  if (!header) return false;
  return allowed.has(header.trim().toLowerCase());
}

/**
 * Pure: may this Origin header make requests? Browsers send Origin on cross-origin requests and
 * on every POST; when present it must be this server's own origin.
 */
export function originAllowed(origin: string | undefined | null, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined || origin === null) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.protocol === 'http:' && allowed.has(url.host.toLowerCase());
}

/**
 * Pure: is this Content-Type header JSON? Exactly `application/json`, in any case, with optional
 * parameters (`; charset=utf-8`); `application/jsonx` or `text/plain` are not. A cross-site form
 * can send only form and text types, so requiring JSON also keeps forms out.
 */
export function isJsonMediaType(header: string | undefined | null): boolean {
  if (!header) return false;
  return /^application\/json[ \t]*(;|$)/i.test(header.trim());
}

/** Response headers for every reply: no framing, no sniffing, no inline script, no referrer leak. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};
