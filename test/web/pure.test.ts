import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { WarrenEvent } from '../../src/state/types.js';
import { ACTIONS, findAction, parseActionRequest } from '../../src/web/actions.js';
import { provisionOf } from '../../src/web/fleet.js';
import { parseNumstatZ } from '../../src/web/git-facts.js';
import { logPathAllowed } from '../../src/web/log-tail.js';
import { lastRun, logSource } from '../../src/web/run-events.js';
import { allowedHosts, hostAllowed, isLoopbackHost, originAllowed, tokenMatches } from '../../src/web/security.js';

/** The dashboard's deciding functions on plain data. */

describe('security rules', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.5.6.7', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.evil.example', false],
  ])('isLoopbackHost(%s) is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  const loopback = allowedHosts('127.0.0.1', 7317, {});
  it.each([
    ['127.0.0.1:7317', true],
    ['LOCALHOST:7317', true],
    ['[::1]:7317', true],
    ['127.0.0.1:7318', false],
    ['127.0.0.1', false],
    ['evil.example:7317', false],
    ['evil.example', false],
    ['', false],
    [undefined, false],
  ])('Host %s allowed on 127.0.0.1:7317: %s', (header, expected) => {
    expect(hostAllowed(header, loopback)).toBe(expected);
  });

  it('a wildcard bind accepts the machine\'s interface addresses and loopback, nothing else', () => {
    const interfaces = {
      eth0: [{ address: '192.168.1.10', netmask: '', family: 'IPv4', mac: '', internal: false, cidr: null }],
      eth1: [{ address: 'fe80::1', netmask: '', family: 'IPv6', mac: '', internal: false, cidr: null, scopeid: 2 }],
    } as const satisfies NodeJS.Dict<NetworkInterfaceInfo[]>;
    const allowed = allowedHosts('0.0.0.0', 80, interfaces);
    expect(hostAllowed('192.168.1.10:80', allowed)).toBe(true);
    expect(hostAllowed('[fe80::1]:80', allowed)).toBe(true);
    expect(hostAllowed('localhost:80', allowed)).toBe(true);
    expect(hostAllowed('evil.example:80', allowed)).toBe(false);
    // A specific non-loopback address: only itself.
    const one = allowedHosts('192.168.1.10', 80, interfaces);
    expect([...one]).toEqual(['192.168.1.10:80']);
  });

  it.each([
    [undefined, true],
    ['http://127.0.0.1:7317', true],
    ['http://localhost:7317', true],
    ['http://evil.example', false],
    ['http://127.0.0.1:7318', false],
    ['https://127.0.0.1:7317', false],
    ['null', false],
  ])('Origin %s allowed: %s', (origin, expected) => {
    expect(originAllowed(origin, loopback)).toBe(expected);
  });

  it.each([
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['abc', 'ab', false],
    ['abc', '', false],
    ['abc', undefined, false],
    ['abc', null, false],
  ])('tokenMatches(%s, %s) is %s', (expected, given, result) => {
    expect(tokenMatches(expected, given)).toBe(result);
  });
});

describe('git output parsing', () => {
  it('reads numstat -z entries, renames and binary files', () => {
    const out = '3\t1\tsrc/a.ts\0-\t-\timg.png\0' + '2\t0\t\0old name.txt\0new <name>.txt\0' + '0\t4\ttab\there.txt\0';
    expect(parseNumstatZ(out)).toEqual([
      { path: 'src/a.ts', added: 3, deleted: 1 },
      { path: 'img.png', added: null, deleted: null },
      { path: 'old name.txt → new <name>.txt', added: 2, deleted: 0 },
      { path: 'tab\there.txt', added: 0, deleted: 4 },
    ]);
    expect(parseNumstatZ('')).toEqual([]);
  });
});

function ev(seq: number, kind: string, data: Record<string, unknown> = {}): WarrenEvent {
  return { seq, at: `2026-01-01T00:00:0${seq % 10}Z`, project: 'p', taskId: 't', kind, level: 'info', message: kind, data };
}

describe('reading other features\' records defensively', () => {
  it.each([
    [{}, []],
    [{ provision: 'node_modules' }, []],
    [{ provision: [null, 3, { mode: 'cow' }] }, []],
    [
      { provision: [{ path: 'node_modules', mode: 'cow', isolated: true, changed: ['a', 'b'] }] },
      [{ path: 'node_modules', mode: 'cow', isolated: true, changed: 2 }],
    ],
    [{ provision: [{ path: '.env', mode: 7, isolated: 'yes', changed: 5 }] }, [{ path: '.env', mode: null, isolated: null, changed: 5 }]],
  ])('provisionOf(%j)', (data, expected) => {
    expect(provisionOf(data)).toEqual(expected);
  });

  it('takes the newest run event and only well-typed fields', () => {
    expect(lastRun([ev(1, 'task.created')])).toBeNull();
    const run = lastRun([ev(1, 'run.finished', { exitCode: 0 }), ev(2, 'run.finished', { exitCode: 3, durationMs: 12, timedOut: true, command: ['npm', 'test'] }), ev(3, 'note')]);
    expect(run).toMatchObject({ kind: 'run.finished', exitCode: 3, durationMs: 12, timedOut: true, command: 'npm test' });
    const odd = lastRun([ev(1, 'run.finished', { exitCode: '0', durationMs: Number.NaN, timedOut: 'no' })]);
    expect(odd).toEqual({ kind: 'run.finished', at: odd?.at, message: 'run.finished', running: false });
    expect(lastRun([ev(1, 'run.started', { log: '/x' })])?.running).toBe(true);
  });

  it('follows the newest started command until a finishing event after it', () => {
    expect(logSource([ev(1, 'task.created')])).toBeNull();
    expect(logSource([ev(1, 'run.started', {})])).toBeNull();
    const running = logSource([ev(1, 'run.started', { log: '/a.log' }), ev(2, 'run.finished'), ev(3, 'run.started', { log: '/b.log' })]);
    expect(running).toEqual({ startedSeq: 3, path: '/b.log', finished: null });
    const done = logSource([ev(3, 'run.started', { log: '/b.log' }), ev(4, 'note'), ev(5, 'run.finished', { exitCode: 1 })]);
    expect(done?.finished?.seq).toBe(5);
    // Another command's end (a different runId) does not finish this one; its own does, by either name.
    const other = logSource([ev(1, 'run.started', { log: '/c.log', runId: 'A' }), ev(2, 'run.ended', { runId: 'B' })]);
    expect(other?.finished).toBeNull();
    const own = logSource([ev(1, 'run.started', { log: '/c.log', runId: 'A' }), ev(2, 'run.ended', { runId: 'B' }), ev(3, 'run.ended', { runId: 'A' })]);
    expect(own?.finished?.seq).toBe(3);
  });

  it.each([
    ['/home/u/.warren/logs/t.log', true],
    ['/home/u/.warren', true],
    ['/home/u/.warren-other/t.log', false],
    ['/etc/passwd', false],
    ['relative/t.log', false],
  ])('log path %s allowed: %s', (p, expected) => {
    expect(logPathAllowed(p, ['/home/u/.warren', '/srv/repo/.git'])).toBe(expected);
  });
});

describe('action requests', () => {
  const rm = findAction('rm');
  const gc = findAction('gc');
  it('every action has a unique name', () => {
    expect(new Set(ACTIONS.map((a) => a.name)).size).toBe(ACTIONS.length);
    expect(rm?.destructive).toBe(true);
  });

  it.each([
    [null, 'must be a JSON object'],
    [[], 'must be a JSON object'],
    [{}, '"project" is required'],
    [{ project: 'p' }, 'needs a task "id"'],
    [{ project: 'p', id: 'x', options: [] }, '"options" must be an object'],
    [{ project: 'p', id: 'x', options: { force: true } }, 'has no option "force"'],
    [{ project: 'p', id: 'x', options: { deleteBranch: 'yes' } }, 'must be true or false'],
  ])('refuses %j', (body, message) => {
    if (!rm) throw new Error('rm action missing');
    expect(() => parseActionRequest(rm, body)).toThrow(message);
  });

  it.each([
    [{ project: 'p', options: { type: 'feat' } }, '"new" needs option "id"'],
    [{ project: 'p', options: { type: 'feat', id: '   ' } }, '"new" needs option "id"'],
    [{ project: 'p', options: { type: 'bug', id: 'x' } }, 'option "type" must be one of "feat"'],
    [{ project: 'p', options: { id: 7 } }, 'option "id" must be a string'],
    [{ project: 'p', options: { id: 'x', sandbox: 'docker' } }, 'option "sandbox" must be one of'],
    [{ project: 'p', options: { id: 'x', skipSetup: 'true' } }, 'must be true or false'],
  ])('new refuses %j', (body, message) => {
    const action = findAction('new');
    if (!action) throw new Error('new action missing');
    expect(() => parseActionRequest(action, body)).toThrow(message);
  });

  it('accepts well-formed requests', () => {
    if (!rm || !gc) throw new Error('actions missing');
    expect(parseActionRequest(rm, { project: 'p', id: 'x', options: { deleteBranch: true } })).toEqual({ project: 'p', id: 'x', options: { deleteBranch: true } });
    expect(parseActionRequest(gc, { project: 'p' })).toEqual({ project: 'p', options: {} });
    const create = findAction('new');
    if (!create) throw new Error('new action missing');
    expect(parseActionRequest(create, { project: 'p', options: { type: 'fix', id: 'T-1', base: '', sandbox: '', skipSync: true } })).toEqual({
      project: 'p',
      options: { type: 'fix', id: 'T-1', base: '', sandbox: '', skipSync: true },
    });
  });
});
