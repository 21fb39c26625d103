import fs from 'node:fs';
import os from 'node:os';
import { isLoopbackHost } from './security.js';

/**
 * Which local user opened a connection. The token keeps other web pages out; it does not keep
 * out another user of this machine who learns it, and loopback is open to every user. So on
 * Linux the server asks the kernel who owns the client's end of each loopback connection:
 * `/proc/net/tcp` and `/proc/net/tcp6` list every TCP socket of this network namespace with the
 * uid that made it, and the client's socket is the one whose local address is the connection's
 * remote one. Once per connection, when it is accepted.
 */

export interface Endpoint {
  address: string;
  port: number;
}

/** Allowed, or refused with the text the client gets and the uid when one was found. */
export type PeerVerdict = { ok: true } | { ok: false; uid: number | null; reason: string };

/** Pure: an address as one comparable string, IPv4 written as IPv4-mapped IPv6 (`::ffff:7f00:1`). */
export function canonicalAddress(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const v6 = /^\d+\.\d+\.\d+\.\d+$/.test(bare) ? `::ffff:${bare}` : bare;
  try {
    return new URL(`http://[${v6}]/`).hostname;
  } catch {
    return null;
  }
}

/** Pure: `0100007F:1CB5` (the kernel's hex, each 32-bit word in host byte order) → address and port. */
export function decodeEndpoint(hex: string, littleEndian: boolean): Endpoint | null {
  const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(hex);
  if (!m?.[1] || !m[2]) return null;
  const bytes = Buffer.from(m[1], 'hex');
  if (littleEndian) for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  const groups = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  const address = bytes.length === 4 ? [...bytes].join('.') : groups.join(':');
  return { address, port: parseInt(m[2], 16) };
}

/**
 * Pure: the uid that owns the socket whose local end is `client` and whose remote end is
 * `server`, in a `/proc/net/tcp` or `/proc/net/tcp6` table; null when no such socket is there.
 * An entry with inode 0 does not count: a socket no process holds any more (closed, or in
 * TIME_WAIT), whose uid the kernel reports as 0 whoever made it.
 */
export function socketOwner(table: string, client: Endpoint, server: Endpoint, littleEndian: boolean): number | null {
  const want = [canonicalAddress(client.address), client.port, canonicalAddress(server.address), server.port];
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    const [local, remote, uid, inode] = [cols[1], cols[2], cols[7], cols[9]];
    if (!local || !remote || !uid || !inode || inode === '0' || !/^\d+$/.test(uid)) continue;
    const l = decodeEndpoint(local, littleEndian);
    const r = decodeEndpoint(remote, littleEndian);
    if (!l || !r) continue;
    const got = [canonicalAddress(l.address), l.port, canonicalAddress(r.address), r.port];
    if (got.every((v, i) => v === want[i])) return Number(uid);
  }
  return null;
}

export interface PeerCheck {
  platform: NodeJS.Platform;
  /** This server's own uid. */
  uid: number | undefined;
  /** Reads one of the kernel's tables (`/proc/net/tcp`, `/proc/net/tcp6`); throws when it cannot. */
  readTable(name: 'tcp' | 'tcp6'): string;
  littleEndian: boolean;
}

export const LINUX_PEERS: PeerCheck = {
  platform: process.platform,
  uid: process.geteuid?.(),
  readTable: (name) => fs.readFileSync(`/proc/net/${name}`, 'utf8'),
  littleEndian: os.endianness() === 'LE',
};

/**
 * May the client at `client`, connected to this server at `server`, talk to it? A loopback
 * client on Linux only when its socket is this server's uid's; one whose owner cannot be found
 * is refused too. A client on another machine (`--allow-remote`), and any client where the
 * kernel does not say (not Linux), is left to the token.
 */
export function judgePeer(client: Endpoint, server: Endpoint, check: PeerCheck = LINUX_PEERS): PeerVerdict {
  if (!isLoopbackHost(client.address) || check.platform !== 'linux' || check.uid === undefined) return { ok: true };
  const v4 = /^(::ffff:)?\d+\.\d+\.\d+\.\d+$/i.test(client.address);
  const tables = v4 ? (['tcp', 'tcp6'] as const) : (['tcp6'] as const);
  const unread: string[] = [];
  for (const name of tables) {
    let table: string;
    try {
      table = check.readTable(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No tcp6 table: IPv6 is off, so no socket can be listed there.
      if (!(name === 'tcp6' && code === 'ENOENT' && v4)) unread.push(`/proc/net/${name}: ${code ?? String(err)}`);
      continue;
    }
    const uid = socketOwner(table, client, server, check.littleEndian);
    if (uid === check.uid) return { ok: true };
    if (uid !== null) {
      return {
        ok: false,
        uid,
        reason: `this dashboard is uid ${check.uid}'s and your connection comes from uid ${uid}; it serves the user who started it alone`,
      };
    }
  }
  const where = `${client.address}:${client.port} → ${server.address}:${server.port}`;
  const why = unread.length > 0 ? `could not read ${unread.join(', ')}` : `no open socket ${where} in /proc/net/tcp*`;
  return {
    ok: false,
    uid: null,
    reason: `could not tell which user opened this connection (${why}), and a connection whose user is unknown is refused`,
  };
}

/** The 403 a refused connection gets, in plain text. */
export function peerRefusal(reason: string): string {
  return `warren: refused: ${reason}. Nothing was read or changed.\nEach user runs their own \`warren serve\`; open the URL yours printed.\n`;
}
