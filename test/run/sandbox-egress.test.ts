import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import {
  addressRefusal,
  isAllowed,
  isPublicAddress,
  loopbackForwards,
  parseAllowEntry,
  parseTarget,
  egressPrefix,
  startEgressProxy,
} from '../../src/run/egress.js';
import { collectEgressLeftovers } from '../../src/run/egress-gc.js';
import { AGENT_CLI_BIN, unavailable } from '../helpers/capabilities.js';
import { FINAL, NOTE, startModelServer } from '../helpers/model-server.js';
import { NOBODY, requestAsNobody } from '../helpers/nobody.js';
import { makeRepo, runCli, tmpDir } from '../helpers/repo.js';
import { alive, pidsWithEnv, startCli, waitForFile } from '../helpers/procs.js';

/**
 * `sandbox: { kind: bwrap, allow: [...] }`: a sandboxed run reaches the listed hosts through
 * warren's proxy, and nothing else; each refusal is an event. The real claude CLI works inside
 * it against the scripted model server. .ci/run installs bubblewrap and the CLIs.
 */

describe('egress allowlist: matching (pure)', () => {
  const rules = ['api.anthropic.com', '127.0.0.1:8080', '*.npmjs.org:443', '[::1]:9000', 'LOCALHOST:11434'].map(
    parseAllowEntry,
  );
  it.each([
    ['api.anthropic.com', 443, true],
    ['API.Anthropic.com.', 8443, true],
    ['anthropic.com', 443, false],
    ['127.0.0.1', 8080, true],
    ['127.0.0.1', 8081, false],
    ['registry.npmjs.org', 443, true],
    ['npmjs.org', 443, false],
    ['registry.npmjs.org', 80, false],
    ['evil-npmjs.org', 443, false],
    ['::1', 9000, true],
    ['[::1]', 9000, true],
    ['localhost', 11434, true],
    ['10.0.0.1', 443, false],
  ] as const)('%s:%d → %s', (host, port, allowed) => {
    expect(isAllowed(rules, host, port)).toBe(allowed);
  });
  it('loopback entries with a port are forwarded as they are; CONNECT targets parse strictly', () => {
    expect(loopbackForwards(rules)).toEqual([
      { host: '127.0.0.1', port: 8080 },
      { host: '::1', port: 9000 },
      { host: '127.0.0.1', port: 11434 },
    ]);
    expect(parseTarget('example.com:443')).toEqual({ host: 'example.com', port: 443 });
    expect(parseTarget('[::1]:22')).toEqual({ host: '::1', port: 22 });
    for (const bad of ['example.com', 'a:0', 'a:70000', '::1:22', 'a b:1']) expect(parseTarget(bad)).toBeNull();
  });
  it('warren.yaml: sandbox is none, bwrap, or { kind: bwrap, allow }; entries are checked; network: true contradicts an allowlist', () => {
    expect(configSchema.parse({ sandbox: 'bwrap' }).sandbox).toBe('bwrap');
    expect(configSchema.parse({ sandbox: { kind: 'bwrap' } }).sandbox).toEqual({ kind: 'bwrap', allow: [] });
    expect(
      configSchema.parse({ sandbox: { kind: 'bwrap', allow: ['api.openai.com', '127.0.0.1:1234', '*.pypi.org'] } })
        .sandbox,
    ).toMatchObject({ allow: ['api.openai.com', '127.0.0.1:1234', '*.pypi.org'] });
    for (const bad of [
      { kind: 'none', allow: [] },
      { kind: 'bwrap', allow: ['http://x.com'] },
      { kind: 'bwrap', allow: ['x.com:99999'] },
      { kind: 'bwrap', allow: ['-x'] },
      { kind: 'bwrap', allow: [], extra: 1 },
      { kind: 'bwrap', allow: ['127.0.0.1'] },
      { kind: 'bwrap', allow: ['localhost'] },
      { kind: 'bwrap', allow: ['[::1]'] },
      { kind: 'bwrap', allow: ['127.0.0.53'] },
    ]) {
      expect(configSchema.safeParse({ sandbox: bad }).success, JSON.stringify(bad)).toBe(false);
    }
    expect(configSchema.safeParse({ sandbox: { kind: 'bwrap', allow: ['a.com'] }, network: true }).success).toBe(false);
  });
});

describe('egress allowlist: where a listed name really goes (pure)', () => {
  it.each([
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['127.1.2.3', false],
    ['0.0.0.0', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['fd00::1', false],
    ['fe80::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    ['not-an-address', false],
  ] as const)('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('a listed name is resolved once and refused when any of its addresses is inside; only a loopback entry with its port reaches loopback', async () => {
    const rules = ['api.example.com', 'rebound.example.com', '127.0.0.1:11434', '0.0.0.0:8080'].map(parseAllowEntry);
    const dns: Record<string, string[]> = {
      'api.example.com': ['93.184.215.14'],
      'rebound.example.com': ['93.184.215.14', '127.0.0.1'],
    };
    const lookup = async (host: string) => {
      const found = dns[host];
      if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
      return found;
    };
    expect(await addressRefusal(rules, 'api.example.com', 443, lookup)).toEqual({ address: '93.184.215.14' });
    expect(await addressRefusal(rules, 'rebound.example.com', 443, lookup)).toMatchObject({
      reason: expect.stringMatching(
        /rebound\.example\.com resolves to 127\.0\.0\.1, a loopback, private or link-local address/,
      ),
    });
    expect(await addressRefusal(rules, '127.0.0.1', 11434, lookup)).toEqual({ address: '127.0.0.1' });
    expect(await addressRefusal(rules, '0.0.0.0', 8080, lookup)).toMatchObject({
      reason: expect.stringMatching(/0\.0\.0\.0/),
    });
    expect(await addressRefusal(rules, 'gone.example.com', 443, lookup)).toMatchObject({
      reason: expect.stringMatching(/does not resolve/),
    });
  });
});

const noNobody = unavailable(import.meta.filename, 'nobody');

describe.skipIf(noNobody !== null)("egress proxy: its socket is this user's alone", () => {
  it(`is a 0600 socket in a 0700 folder: uid ${NOBODY} cannot connect, this user can`, async () => {
    const refused: string[] = [];
    const proxy = await startEgressProxy(['api.example.com'], (host, port) => refused.push(`${host}:${port}`));
    onTestFinished(() => proxy.close());
    const dir = path.dirname(proxy.socket);
    expect(fs.lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.lstatSync(proxy.socket).isSocket()).toBe(true);
    expect(fs.lstatSync(proxy.socket).mode & 0o777).toBe(0o600);
    expect(fs.lstatSync(proxy.socket).uid).toBe(process.geteuid?.());

    const unlisted = 'http://unlisted.example/';
    const other = await requestAsNobody(unlisted, { socketPath: proxy.socket });
    expect(other).toMatchObject({ status: 0, error: 'EACCES' });
    expect(refused).toEqual([]);
    // This user's request reaches the proxy (and is refused by its allow list, as it should be).
    const own = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ socketPath: proxy.socket, path: unlisted }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(own.status).toBe(403);
    expect(own.body).toContain("unlisted.example:80 is not on this task's allow list");
    expect(refused).toEqual(['unlisted.example:80']);
  });
});

describe('egress proxy: a folder too deep for a unix socket', () => {
  // 108 to 118 bytes: libuv cut the path inside `proxy.sock`, bound the cut name, and chmod failed
  // with ENOENT, the server left listening: the command that asked (`warren land`) never exited.
  it.each([112, 150])(
    'a %i-byte socket path is refused before anything is made, nothing left listening',
    async (len) => {
      const base = tmpDir('warren-deep-');
      const parent = path.join(base, 'p'.repeat(len - base.length - '/warren-egress-XXXXXX/proxy.sock'.length - 1));
      fs.mkdirSync(parent);
      const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'PipeServerWrap').length;
      const before = servers();
      const err = await startEgressProxy(['api.example.com'], () => undefined, parent).then(
        (proxy) => (onTestFinished(() => proxy.close()), null),
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
      expect((err as Error).message).toMatch(new RegExp(`${len} bytes, over the 107 bytes .*; nothing was run`));
      expect(fs.readdirSync(parent)).toEqual([]);
      expect(servers()).toBe(before);
    },
  );
});

describe('egress proxy: what a killed warren left, collected by gc', () => {
  it("removes this user's proxy folders no proxy answers any more; keeps a live proxy's and anything else", async () => {
    const parent = tmpDir('warren-egress-gc-');
    const home = tmpDir('warren-egress-home-');
    const mine = egressPrefix(home);
    // A live proxy of this home: its socket answers.
    const live = await startEgressProxy(['api.example.com'], () => undefined, parent, home);
    onTestFinished(() => live.close());
    // A proxy whose process was killed (SIGKILL: nothing of its own ran): its socket is left, refusing.
    const deadDir = path.join(parent, `${mine}dead01`);
    fs.mkdirSync(deadDir, { mode: 0o700 });
    const listener = spawn(
      process.execPath,
      [
        '-e',
        `require('node:net').createServer().listen(${JSON.stringify(path.join(deadDir, 'proxy.sock'))}, () => console.log('up'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => listener.stdout?.once('data', resolve));
    listener.kill('SIGKILL');
    await new Promise((resolve) => listener.once('exit', resolve));
    // Made and never bound, long ago; made just now (a proxy about to bind); not a proxy's alone.
    const empty = path.join(parent, `${mine}empty1`);
    fs.mkdirSync(empty, { mode: 0o700 });
    fs.utimesSync(empty, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const fresh = path.join(parent, `${mine}fresh1`);
    fs.mkdirSync(fresh, { mode: 0o700 });
    const other = path.join(parent, `${mine}other1`);
    fs.mkdirSync(other, { mode: 0o700 });
    fs.writeFileSync(path.join(other, 'notes.txt'), 'mine\n');

    // Another home's, dead as well: its own gc's.
    const theirs = path.join(parent, `${egressPrefix(tmpDir('warren-egress-home-'))}gone01`);
    fs.mkdirSync(theirs, { mode: 0o700 });
    fs.utimesSync(theirs, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));

    const collected = await collectEgressLeftovers(home, parent);
    expect(collected.removed.map((r) => r.path).sort()).toEqual([deadDir, empty].sort());
    expect(fs.existsSync(deadDir) || fs.existsSync(empty)).toBe(false);
    expect(path.basename(path.dirname(live.socket)).startsWith(mine)).toBe(true);
    for (const kept of [path.dirname(live.socket), fresh, other, theirs]) expect(fs.existsSync(kept)).toBe(true);
  });
});

const noBwrap = unavailable(import.meta.filename, 'bwrap');
const noClaude = unavailable(import.meta.filename, 'claude-cli');

type Run = { exitCode: number; reason: string | null; runId: string; log: string };
type Shown = {
  events: { kind: string; message: string; host?: string; port?: number; runId?: string; reason?: string }[];
};

async function plainServer(): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.end('unlisted server\n');
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port, hits: () => hits };
}

/** A node one-liner that GETs url (through HTTP_PROXY when `proxied`), prints the status, exits 0; exit 3 on a connection error. */
function fetchScript(url: string, proxied: boolean): string {
  const target = new URL(url);
  const options = proxied
    ? `{ host: '127.0.0.1', port: Number(new URL(process.env.HTTP_PROXY).port), path: ${JSON.stringify(url)} }`
    : `{ host: ${JSON.stringify(target.hostname)}, port: ${target.port}, path: '/' }`;
  return `require('node:http').get(${options}, (r) => { console.log('status', r.statusCode); r.resume(); r.on('end', () => process.exit(0)); }).on('error', (e) => { console.error(e.message); process.exit(3); })`;
}

describe.skipIf(noBwrap !== null || noClaude !== null)('egress allowlist: a real agent in the sandbox', () => {
  it(
    'claude reaches the listed model server; an unlisted loopback server is refused through the proxy and directly; each refusal is an event',
    { timeout: 240_000 },
    async () => {
      const model = await startModelServer();
      const other = await plainServer();
      const repo = makeRepo({
        files: {
          'README.md': '# main\n',
          'warren.yaml': `sandbox: { kind: bwrap, allow: ["127.0.0.1:${model.port}"] }\n`,
        },
      });
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'box');
      expect(made.code, made.stderr).toBe(0);

      const userHome = tmpDir('warren-egress-user-');
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: userHome,
        CLAUDE_CONFIG_DIR: '',
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'scripted',
      };
      const agent = await runCli(
        [
          '--json',
          'run',
          'box',
          '--agent',
          'claude',
          '--prompt',
          'Write the note, then record where you are.',
          '--timeout',
          '3m',
        ],
        { cwd: repo.root, home: repo.home, env },
      );
      const ran = JSON.parse(agent.stdout) as Run;
      expect(agent.code, `${agent.stderr}\n${fs.readFileSync(ran.log, 'utf8')}`).toBe(0);
      expect(fs.readFileSync(path.join(made.json.path, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      expect(fs.readFileSync(path.join(made.json.path, 'ran-in.txt'), 'utf8')).toBe(`${made.json.path}\n`);
      expect(fs.readFileSync(ran.log, 'utf8')).toContain(FINAL);
      expect(model.received.map((r) => r.answer)).toEqual(expect.arrayContaining(['tools', 'final']));

      // The unlisted server, through the proxy: 403, and an event naming it.
      const viaProxy = await repo.warrenJson<Run>(
        'exec',
        'box',
        '--',
        process.execPath,
        '-e',
        fetchScript(`http://127.0.0.1:${other.port}/`, true),
      );
      expect(viaProxy.code).toBe(0);
      expect(fs.readFileSync(viaProxy.json.log, 'utf8')).toContain('status 403');
      // …and directly: the sandbox's loopback is its own, nothing listens there.
      const direct = await repo.warrenJson<Run>(
        'exec',
        'box',
        '--',
        process.execPath,
        '-e',
        fetchScript(`http://127.0.0.1:${other.port}/`, false),
      );
      expect(direct.code).toBe(3);
      expect(fs.readFileSync(direct.json.log, 'utf8')).toMatch(/ECONNREFUSED/);
      expect(other.hits()).toBe(0);
      // The listed one is reachable by a plain command too (a forward on the sandbox's loopback).
      const listed = await repo.warrenJson<Run>(
        'exec',
        'box',
        '--',
        process.execPath,
        '-e',
        fetchScript(`${model.url}/`, false),
      );
      expect(fs.readFileSync(listed.json.log, 'utf8')).toContain('status 200');
      // …and through the proxy, as a plain-HTTP request with an absolute URL.
      const proxied = await repo.warrenJson<Run>(
        'exec',
        'box',
        '--',
        process.execPath,
        '-e',
        fetchScript(`${model.url}/`, true),
      );
      expect(fs.readFileSync(proxied.json.log, 'utf8')).toContain('status 200');

      const shown = await repo.warrenJson<Shown>('show', 'box', '--events', '100');
      const refused = shown.json.events.filter((e) => e.kind === 'sandbox.egress_refused');
      expect(refused.map((e) => [e.host, e.port, e.runId])).toContainEqual([
        '127.0.0.1',
        other.port,
        viaProxy.json.runId,
      ]);
      expect(refused.every((e) => e.host !== '127.0.0.1' || e.port !== model.port)).toBe(true);
    },
  );
});

describe.skipIf(noBwrap !== null)('egress allowlist: the sandbox still holds', () => {
  it(
    'writes outside the workspace are refused, and a run that times out leaves no process (the bridge included)',
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# main\n',
          'warren.yaml': 'sandbox: { kind: bwrap, allow: ["127.0.0.1:9"] }\nkill_grace: 300ms\n',
        },
      });
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'held');
      expect(made.code, made.stderr).toBe(0);

      const write = await repo.warrenJson<Run>(
        'exec',
        'held',
        '--',
        'sh',
        '-c',
        `echo pwned > ${JSON.stringify(path.join(repo.root, 'README.md'))}`,
      );
      expect(write.code).not.toBe(0);
      expect(write.json.reason).toMatch(/write outside the workspace/);
      expect(fs.readFileSync(path.join(repo.root, 'README.md'), 'utf8')).toBe('# main\n');

      const ready = path.join(made.json.path, 'ready');
      const script =
        'trap "" TERM; setsid sh -c "sleep 300" & sh -c "sleep 300 & wait" & sleep 0.1; touch ready; sleep 300';
      const run = startCli(['--json', 'exec', 'held', '--timeout', '1s', '--', 'sh', '-c', script], {
        cwd: repo.root,
        home: repo.home,
      });
      await waitForFile(ready, undefined, run);
      const pids = pidsWithEnv('WARREN_WORKSPACE', made.json.path);
      expect(pids.length).toBeGreaterThanOrEqual(5); // the bridge, sh and its sleeps
      const result = await run.done;
      expect(result.code).toBe(124);
      expect(pids.filter(alive)).toEqual([]);
    },
  );

  it(
    'a listed entry that leads inside (0.0.0.0, loopback written as IPv4 in IPv6) is refused with its reason; an unportted loopback entry is a configuration error',
    { timeout: 120_000 },
    async () => {
      const inside = await plainServer();
      const repo = makeRepo({
        files: {
          'README.md': '# main\n',
          'warren.yaml': `sandbox: { kind: bwrap, allow: ["0.0.0.0:${inside.port}", "[::ffff:7f00:1]:${inside.port}"] }\n`,
        },
      });
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'inside');
      expect(made.code, made.stderr).toBe(0);
      for (const url of [`http://0.0.0.0:${inside.port}/`, `http://[::ffff:7f00:1]:${inside.port}/`]) {
        const run = await repo.warrenJson<Run>('exec', 'inside', '--', process.execPath, '-e', fetchScript(url, true));
        expect(run.code, run.stderr).toBe(0);
        expect(fs.readFileSync(run.json.log, 'utf8')).toContain('status 403');
      }
      expect(inside.hits()).toBe(0);
      const shown = await repo.warrenJson<Shown>('show', 'inside', '--events', '100');
      const refused = shown.json.events.filter((e) => e.kind === 'sandbox.egress_refused');
      expect(refused.map((e) => e.host).sort()).toEqual(['0.0.0.0', '::ffff:7f00:1']);
      for (const e of refused) expect(e.reason).toMatch(/loopback, private or link-local/);

      fs.writeFileSync(path.join(repo.root, 'warren.yaml'), 'sandbox: { kind: bwrap, allow: ["127.0.0.1"] }\n');
      const bad = await repo.warren('new', 'feat', 'open');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/a loopback entry needs its port/);
    },
  );
});
