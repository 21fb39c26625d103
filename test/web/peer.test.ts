import { describe, expect, it } from 'vitest';
import { canonicalAddress, decodeEndpoint, judgePeer, socketOwner, type PeerCheck } from '../../src/web/peer.js';

/** Who owns a connection's client end, read from literal /proc/net/tcp and tcp6 tables (x86: little-endian). */

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const row = (local: string, remote: string, st: string, uid: number, inode: number) =>
  `   0: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000 ${String(uid).padStart(5)}        0 ${inode} 1 0000000000000000 20 4 30 10 -1`;

// 127.0.0.1:50000 (0xC350) → 127.0.0.1:7317 (0x1C95).
const CLIENT = { address: '127.0.0.1', port: 50000 };
const SERVER = { address: '127.0.0.1', port: 7317 };
const TCP = [
  HEADER,
  row('0100007F:1C95', '00000000:0000', '0A', 0, 100), // the listening socket
  row('0100007F:1C95', '0100007F:C350', '01', 0, 101), // the server's end of the connection
  row('0100007F:C350', '0100007F:1C95', '01', 65534, 102), // the client's end
].join('\n');

const check = (tables: Partial<Record<'tcp' | 'tcp6', string | Error>>, uid = 0): PeerCheck => ({
  platform: 'linux',
  uid,
  littleEndian: true,
  readTable(name) {
    const t = tables[name];
    if (t instanceof Error) throw t;
    if (t === undefined) throw Object.assign(new Error(`ENOENT: /proc/net/${name}`), { code: 'ENOENT' });
    return t;
  },
});

describe('peer: the kernel tables (pure)', () => {
  it.each([
    ['0100007F:1C95', true, '127.0.0.1', 7317],
    ['7F000001:1C95', false, '127.0.0.1', 7317],
    ['00000000000000000000000001000000:C350', true, '0:0:0:0:0:0:0:1', 50000],
    ['0000000000000000FFFF00000100007F:C350', true, '0:0:0:0:0:ffff:7f00:1', 50000],
  ])('decodeEndpoint(%s, littleEndian %s) is %s port %s', (hex, le, address, port) => {
    expect(decodeEndpoint(hex, le)).toEqual({ address, port });
  });

  it('compares addresses in one form: IPv4, IPv4-mapped IPv6 and long IPv6 forms meet', () => {
    expect(canonicalAddress('127.0.0.1')).toBe(canonicalAddress('::ffff:127.0.0.1'));
    expect(canonicalAddress('0:0:0:0:0:ffff:7f00:1')).toBe(canonicalAddress('127.0.0.1'));
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe(canonicalAddress('[::1]'));
    expect(canonicalAddress('127.0.0.1')).not.toBe(canonicalAddress('127.0.0.2'));
    expect(canonicalAddress('not an address')).toBeNull();
  });

  it("finds the client's end, not the server's, and skips a socket no process holds (inode 0, uid shown as 0)", () => {
    expect(socketOwner(TCP, CLIENT, SERVER, true)).toBe(65534);
    expect(socketOwner(TCP, { ...CLIENT, port: 50001 }, SERVER, true)).toBeNull();
    const closed = [HEADER, row('0100007F:C350', '0100007F:1C95', '06', 0, 0)].join('\n');
    expect(socketOwner(closed, CLIENT, SERVER, true)).toBeNull();
    const v6 = [
      HEADER,
      row('00000000000000000000000001000000:C350', '00000000000000000000000001000000:1C95', '01', 1000, 7),
    ].join('\n');
    expect(socketOwner(v6, { address: '::1', port: 50000 }, { address: '::1', port: 7317 }, true)).toBe(1000);
  });
});

describe('peer: the verdict', () => {
  it("allows the server's own uid and refuses another, naming both", () => {
    expect(judgePeer(CLIENT, SERVER, check({ tcp: TCP }, 65534))).toEqual({ ok: true });
    const other = judgePeer(CLIENT, SERVER, check({ tcp: TCP }, 0));
    expect(other).toMatchObject({ ok: false, uid: 65534 });
    expect(other.ok === false && other.reason).toContain(
      "this dashboard is uid 0's and your connection comes from uid 65534",
    );
  });

  it('refuses a loopback client whose owner cannot be found or read (fail closed), and says which', () => {
    const none = judgePeer({ ...CLIENT, port: 50001 }, SERVER, check({ tcp: TCP }));
    expect(none).toMatchObject({ ok: false, uid: null });
    expect(none.ok === false && none.reason).toContain('could not tell which user opened this connection');
    expect(none.ok === false && none.reason).toContain('no open socket 127.0.0.1:50001 → 127.0.0.1:7317');
    const denied = Object.assign(new Error('EACCES'), { code: 'EACCES' });
    const unreadable = judgePeer(CLIENT, SERVER, check({ tcp: denied, tcp6: denied }));
    expect(unreadable).toMatchObject({ ok: false, uid: null });
    expect(unreadable.ok === false && unreadable.reason).toContain('could not read /proc/net/tcp: EACCES');
  });

  it('finds an IPv4 client of a dual-stack server (::ffff:127.0.0.1) in the IPv4 table', () => {
    const mapped = { address: '::ffff:127.0.0.1', port: 50000 };
    expect(judgePeer(mapped, { address: '::ffff:127.0.0.1', port: 7317 }, check({ tcp: TCP }, 65534))).toEqual({
      ok: true,
    });
  });

  it('leaves a client on another machine, and any client where the kernel does not say (not Linux), to the token', () => {
    const never = check({ tcp: new Error('must not be read') });
    expect(judgePeer({ address: '192.168.1.20', port: 50000 }, { address: '192.168.1.5', port: 7317 }, never)).toEqual({
      ok: true,
    });
    expect(judgePeer(CLIENT, SERVER, { ...never, platform: 'darwin' })).toEqual({ ok: true });
  });
});
