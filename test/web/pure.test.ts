import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { WarrenEvent } from '../../src/state/types.js';
import { parseActionRequest } from '../../src/web/action-request.js';
import { ACTIONS, findAction } from '../../src/web/actions.js';
import { provisionOf, servicePorts, shownState } from '../../src/web/fleet.js';
import { listeningIn, portEndpoints } from '../../src/web/endpoints.js';
import { taskPaths } from '../../src/web/disk.js';
import type { Task } from '../../src/state/types.js';
import { parseNumstatZ } from '../../src/git/parse.js';
import { EVENT_KINDS, FACT_READERS } from '../../src/composition.js';
import { readFacts } from '../../src/state/facts.js';
import { logPathAllowed } from '../../src/web/log-tail.js';
import { RUN_ENDINGS, RUN_START, SETUP_KINDS, VERIFY_KINDS, lastRun, logSource } from '../../src/web/run-events.js';
import {
  allowedHosts,
  hostAllowed,
  isJsonMediaType,
  isLoopbackHost,
  listenAddress,
  originAllowed,
  tokenMatches,
} from '../../src/web/security.js';

/** The dashboard's deciding functions on plain data. */

/** The kinds the dashboard's readers match by name. */
const dashboardKinds = [RUN_START, ...RUN_ENDINGS];

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

  it.each([
    ['[::1]', '::1'],
    ['[::]', '::'],
    ['[fe80::1]', 'fe80::1'],
    ['::1', '::1'],
    ['127.0.0.1', '127.0.0.1'],
    ['localhost', 'localhost'],
    ['[::1', '[::1'],
    ['[localhost]', '[localhost]'],
    ['[127.0.0.1]', '[127.0.0.1]'],
  ])('listenAddress(%s) is %s', (host, expected) => {
    expect(listenAddress(host)).toBe(expected);
  });

  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8', true],
    ['Application/JSON', true],
    ['  application/json  ', true],
    ['application/jsonx', false],
    ['application/json-patch+json', false],
    ['application/json5', false],
    ['application/json x', false],
    ['text/plain', false],
    ['text/plain; application/json', false],
    ['multipart/form-data', false],
    ['application/x-www-form-urlencoded', false],
    ['', false],
    [undefined, false],
  ])('isJsonMediaType(%s) is %s', (header, expected) => {
    expect(isJsonMediaType(header)).toBe(expected);
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

  it("a wildcard bind accepts the machine's interface addresses and loopback, nothing else", () => {
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

let seqs = 0;
const at = (): string => `2026-01-01T00:00:0${++seqs % 10}Z`;
const started = (runId: string, log = `/${runId}.log`): WarrenEvent => ({
  seq: ++seqs,
  at: at(),
  project: 'p',
  taskId: 't',
  kind: 'run.started',
  level: 'info',
  message: `start ${runId}`,
  data: { runId, kind: 'exec', log, command: ['npm', 'test'] },
});
const ended = (runId: string, exitCode: number | null = 0): WarrenEvent => ({
  seq: ++seqs,
  at: at(),
  project: 'p',
  taskId: 't',
  kind: 'run.ended',
  level: 'info',
  message: `end ${runId}`,
  data: {
    runId,
    kind: 'exec',
    exitCode,
    signal: null,
    timedOut: false,
    durationMs: 12,
    log: `/${runId}.log`,
    survivors: [],
  },
});
const fallback = (runId: string): WarrenEvent => ({
  seq: ++seqs,
  at: at(),
  project: 'p',
  taskId: 't',
  kind: 'run.containment_fallback',
  level: 'warn',
  message: 'process group only',
  data: { runId, reason: 'no namespaces' },
});
const created = (): WarrenEvent => ({
  seq: ++seqs,
  at: at(),
  project: 'p',
  taskId: 't',
  kind: 'task.created',
  level: 'info',
  message: 'created',
  data: { branch: 'b', path: '/w', base: 'main', baseCommit: 'c', sync: { kind: 'no-upstream' } },
});

describe("the dashboard's reading of runs", () => {
  it('pairs a run with its own end: a warning recorded after run.started does not end it', () => {
    // The old reader took the newest `run.*` event as the state of the run: a containment
    // fallback recorded right after run.started made a running command show as not running.
    expect(lastRun([started('A'), fallback('A')])).toMatchObject({ running: true, command: 'npm test' });
    expect(lastRun([started('A'), fallback('A'), ended('A', 3)])).toMatchObject({
      running: false,
      exitCode: 3,
      durationMs: 12,
      kind: 'exec',
    });
    // Another run's end does not end this one.
    expect(lastRun([started('A'), ended('B')])?.running).toBe(true);
    expect(lastRun([created()])).toBeNull();
  });

  it('follows the newest started command until its own end', () => {
    expect(logSource([created()])).toBeNull();
    const running = logSource([started('A', '/a.log'), ended('A'), started('B', '/b.log')]);
    expect(running).toMatchObject({ path: '/b.log', finished: null });
    const other = logSource([started('C', '/c.log'), ended('D')]);
    expect(other?.finished).toBeNull();
    const own = logSource([started('E', '/e.log'), ended('D'), ended('E', 1)]);
    expect(own?.finished?.kind).toBe('run.ended');
  });

  it('reads only event kinds that warren records (a kind nobody emits can never match)', () => {
    // The dashboard once waited for `run.finished`, which nothing records (`run.ended` is).
    for (const kind of [...dashboardKinds, ...SETUP_KINDS, ...VERIFY_KINDS]) expect(EVENT_KINDS).toContain(kind);
  });
});

describe('task facts read from a row', () => {
  it('keeps well-formed known keys and drops the rest, per entry in a list', () => {
    const record = {
      path: 'node_modules',
      mode: 'cow',
      requested: 'cow',
      isolated: true,
      entries: 1,
      bytes: 1,
      ms: 1,
      method: 'overlay',
      source: '/r/node_modules',
    };
    expect(readFacts('{}', FACT_READERS)).toEqual({});
    expect(readFacts('not json', FACT_READERS)).toEqual({});
    expect(readFacts(JSON.stringify({ provision: 'node_modules' }), FACT_READERS)).toEqual({});
    expect(readFacts(JSON.stringify({ provision: [null, 3, { mode: 'cow' }, record] }), FACT_READERS)).toEqual({
      provision: [record],
    });
    expect(
      readFacts(JSON.stringify({ ports: { first: 1, count: 2 }, sandbox: 'docker', future: 1 }), FACT_READERS),
    ).toEqual({
      ports: { first: 1, count: 2 },
    });
  });

  it('the fleet shows the change counts `status` computes', () => {
    const status = { path: 'node_modules', mode: 'cow' as const, isolated: true, changed: [], changedCount: 7 };
    expect(
      provisionOf([status, { ...status, path: '.env', mode: 'copy', changedCount: 0, unknown: 'manifest missing' }]),
    ).toEqual([
      { path: 'node_modules', mode: 'cow', isolated: true, changed: 7 },
      { path: '.env', mode: 'copy', isolated: true, changed: null },
    ]);
  });
});

describe('log paths', () => {
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
    expect(parseActionRequest(rm, { project: 'p', id: 'x', options: { deleteBranch: true } })).toEqual({
      project: 'p',
      id: 'x',
      options: { deleteBranch: true },
    });
    expect(parseActionRequest(gc, { project: 'p' })).toEqual({ project: 'p', options: {} });
    const create = findAction('new');
    if (!create) throw new Error('new action missing');
    expect(
      parseActionRequest(create, {
        project: 'p',
        options: { type: 'fix', id: 'T-1', base: '', sandbox: '', skipSync: true },
      }),
    ).toEqual({
      project: 'p',
      options: { type: 'fix', id: 'T-1', base: '', sandbox: '', skipSync: true },
    });
  });
});

describe('what a task serves, and the disk view', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 280 1',
    '   1: 0100007F:4E21 0100007F:CFFC 01 00000000:00000000 03:0000155E 00000000     0        0 0 3',
    '   2: 00000000000000000000000000000000:4E25 00000000000000000000000000000000:0000 0A 0 0 0 0 0 0 1',
  ].join('\n');

  it('reads the listening ports of a /proc/net/tcp table (LISTEN only, v4 and v6)', () => {
    expect(listeningIn(table)).toEqual([20000, 20005]);
  });

  it('links only what listens in the block; with no table, offers the first port as unknown', () => {
    const block = { first: 20000, count: 10 };
    expect(portEndpoints(block, new Set([20000, 20005, 30000]))).toEqual([
      { kind: 'port', name: 'WARREN_PORT', port: 20000, url: 'http://127.0.0.1:20000/', listening: true },
      { kind: 'port', name: 'port 20005', port: 20005, url: 'http://127.0.0.1:20005/', listening: true },
    ]);
    expect(portEndpoints(block, null)).toEqual([
      { kind: 'port', name: 'WARREN_PORT', port: 20000, url: 'http://127.0.0.1:20000/', listening: null },
    ]);
    expect(portEndpoints(null, new Set([20000]))).toEqual([]);
  });

  it('names the services on their ports, a link only for what a browser opens, listening or not', () => {
    const block = { first: 20000, count: 10 };
    const services = servicePorts({
      data: {
        services: {
          web: { kind: 'run', port: 20001 },
          cache: { kind: 'redis', port: 20002, password: 'secret' },
          db: { kind: 'postgres', database: 'd', password: 'p', server: 'warren', from: { kind: 'empty' } },
        },
      },
    } as unknown as Task);
    expect(services).toEqual([
      { name: 'web', port: 20001, http: true },
      { name: 'cache', port: 20002, http: false },
    ]);
    expect(portEndpoints(block, new Set([20001, 20005]), services)).toEqual([
      { kind: 'service', name: 'web', port: 20001, url: 'http://127.0.0.1:20001/', listening: true },
      { kind: 'service', name: 'cache', port: 20002, url: null, listening: false },
      { kind: 'port', name: 'port 20005', port: 20005, url: 'http://127.0.0.1:20005/', listening: true },
    ]);
    expect(portEndpoints(block, null, services).map((e) => [e.name, e.listening])).toEqual([
      ['web', null],
      ['cache', null],
      ['WARREN_PORT', null],
    ]);
  });

  it('shows what runs in a task as its state, its recorded state otherwise', () => {
    expect(shownState('ready', { kind: 'agent', running: true })).toBe('agent running');
    expect(shownState('setup_failed', { kind: 'setup', running: true })).toBe('setting up');
    expect(shownState('ready', { kind: 'verify', running: true })).toBe('verifying');
    expect(shownState('ready', { kind: 'exec', running: true })).toBe('command running');
    expect(shownState('ready', { kind: 'agent', running: false })).toBe('ready');
    expect(shownState('removing', { kind: 'teardown', running: true })).toBe('removing');
    expect(shownState('landed', null)).toBe('landed');
  });

  it("counts a cow checkout's upper layer instead of its mounted folder", () => {
    const base = {
      project: 'p',
      id: 't',
      path: '/w/t',
      data: { provision: [{ mode: 'cow', upper: '/h/overlays/p/t/nm/upper' }, { mode: 'copy' }] },
    } as unknown as Task;
    expect(taskPaths(base, '/h')).toEqual({
      workspace: ['/w/t'],
      layers: ['/h/overlays/p/t/nm/upper'],
      logs: ['/h/logs/p/t'],
    });
    const cowCheckout = { ...base, data: { checkout: { mode: 'cow', lower: '/s', upper: '/h/co/upper', work: '/w' } } };
    expect(taskPaths(cowCheckout as unknown as Task, '/h')).toEqual({
      workspace: [],
      layers: ['/h/co/upper'],
      logs: ['/h/logs/p/t'],
    });
  });

  it('takes an agent and a multi-line prompt for Start agent; the agent itself is checked by the library call', () => {
    const agent = findAction('agent')!;
    const req = parseActionRequest(agent, {
      project: 'p',
      options: { agent: 'codex', prompt: 'line one\n-line two', id: 't', type: 'feat' },
    });
    expect(req.options.prompt).toBe('line one\n-line two');
    expect(() => parseActionRequest(agent, { project: 'p', options: { id: 't', agent: 'claude' } })).toThrow(
      /"agent" needs option "prompt"/,
    );
    expect(() => parseActionRequest(findAction('trust')!, { project: 'p', options: {} })).toThrow(
      /needs option "hash"/,
    );
  });
});
