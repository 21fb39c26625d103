import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { nobodyRepo } from './helpers/nobody.js';
import { makeRepo, type TestRepo } from './helpers/repo.js';
import { livingDaemons, stopServicesAfter } from './helpers/services.js';

/**
 * The agent is the attacker, and its code reaches the host by every path that is not one of
 * its commands: a task's dev server, the gate's services, the seed a template is built from.
 * Every process of a task now starts through one runner, inside the task's boundary
 * (src/run/boundary.ts): each case here is agent-written code on one of those paths, and the
 * host checks afterwards that it ran sandboxed — nothing written outside, nothing of warren's
 * environment or the user's sockets seen. Counted like the rest of the adversarial suite
 * (artifacts/agent-boundary-runner.md).
 */

const noBwrap = unavailable(import.meta.filename, 'bwrap');
const noPostgres = unavailable(import.meta.filename, 'postgres');
const noNobody = unavailable(import.meta.filename, 'nobody');

const outcomes: { who: string; klass: string; name: string; held: boolean }[] = [];
afterAll(() => {
  if (outcomes.length === 0) return;
  const held = outcomes.filter((o) => o.held).length;
  const text = [
    '| as | class | attempt | result |',
    '|---|---|---|---|',
    ...outcomes.map((o) => `| ${o.who} | ${o.klass} | ${o.name} | ${o.held ? 'held' : 'GOT THROUGH'} |`),
    '',
    `agent boundary (the runner): ${outcomes.length} attempt(s) tried, ${held} held, ${outcomes.length - held} got through`,
    '',
  ].join('\n');
  const dir = path.resolve(import.meta.dirname, '../artifacts');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'agent-boundary-runner.md'), text);
  console.log(text);
});

function record(who: string, klass: string, name: string, held: boolean): void {
  outcomes.push({ who, klass, name, held });
}

/** A folder on the host, outside every workspace, where the agent's code would leave its mark if it ran there. */
function hostMarks(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-host-marks-'));
  fs.chmodSync(dir, 0o777);
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The agent's dev server: it tries to write on the host, and answers with what it sees. */
const hostileServer = (marks: string): string => `const http = require('node:http');
const fs = require('node:fs');
let wrote = 'no';
try { fs.writeFileSync(${JSON.stringify(path.join(marks, 'server-ran-on-the-host'))}, 'pwned'); wrote = 'yes'; } catch (e) { wrote = e.code; }
const seen = { wrote, canary: process.env.WARREN_TEST_CANARY ?? null, ssh: process.env.SSH_AUTH_SOCK ?? null, uid: process.getuid() };
http.createServer((req, res) => res.end(JSON.stringify(seen))).listen(Number(process.env.WARREN_PORT), '127.0.0.1');
`;

const BENIGN_SERVER = `require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.WARREN_PORT), '127.0.0.1');
`;

function serviceRepo(yaml: string, files: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({
    files: { 'README.md': '# main\n', 'server.js': BENIGN_SERVER, 'warren.yaml': yaml, ...files },
  });
  stopServicesAfter(repo.home);
  return repo;
}

/** A GET on a connection of its own: a pooled one may be a server of an earlier test, on the same port. */
function getJson<T>(port: number | string): Promise<T> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: Number(port), path: '/', agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(JSON.parse(body) as T));
      })
      .on('error', reject);
  });
}

/** The real uid (outside) of each `node server.js` of a service under `home` (found by the daemon's mark in its environment). */
function serverUids(home: string): number[] {
  const uids: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0] !== 'node' || cmd[1] !== 'server.js') continue;
      if (!fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`WARREN_DAEMON=${home}`)) continue;
      const uid = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (uid !== undefined) uids.push(Number(uid));
    } catch {
      // gone meanwhile
    }
  }
  return uids;
}

async function webPort(repo: TestRepo, id: string): Promise<number> {
  const env = (await repo.warrenJson<{ env: Record<string, string> }>('env', id)).json.env;
  return Number(env.WARREN_SERVICE_WEB_PORT);
}

describe.skipIf(noBwrap !== null)("a task's dev server runs inside the task's sandbox", () => {
  const YAML = `sandbox: bwrap
services:
  web: { run: [node, server.js], ready: { http: /, timeout: 30s } }
`;

  it('as root: the agent’s edited server.js writes nothing on the host and sees none of warren’s environment, and the host still reaches it', async () => {
    const marks = hostMarks();
    const repo = serviceRepo(YAML);
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    // The agent saves server.js; the server is started again (as a watcher would reload it).
    fs.writeFileSync(path.join(made.json.path, 'server.js'), hostileServer(marks));
    expect((await repo.warren('service', 'stop', 'agent', 'web')).code).toBe(0);
    const started = await repo.warren('service', 'start', 'agent', 'web');
    expect(started.code, started.stderr).toBe(0);
    const seen = await getJson<{ wrote: string }>(await webPort(repo, 'agent'));
    const held = !fs.existsSync(path.join(marks, 'server-ran-on-the-host')) && seen.wrote !== 'yes';
    record('root', 'services', "a task's dev server runs the agent's server.js on the host", held);
    expect(held, JSON.stringify(seen)).toBe(true);
    // As root, the server's uid 0 is another uid outside (src/system/sandbox-uid.ts), as a command's is.
    const uids = serverUids(repo.home);
    expect(uids.length).toBeGreaterThan(0);
    const notRoot = uids.every((u) => u !== 0);
    record('root', 'services', "a task's dev server is uid 0 outside", notRoot);
    expect(uids).not.toContain(0);
  }, 120_000);

  it('sees only its declared environment: no variable of warren’s own, no agent socket', async () => {
    const marks = hostMarks();
    const repo = serviceRepo(YAML, { 'server.js': hostileServer(marks) });
    const prior = { canary: process.env.WARREN_TEST_CANARY, ssh: process.env.SSH_AUTH_SOCK };
    process.env.WARREN_TEST_CANARY = 'warren-env-leaked';
    process.env.SSH_AUTH_SOCK = '/tmp/ssh-agent.sock';
    onTestFinished(() => {
      for (const [k, v] of [
        ['WARREN_TEST_CANARY', prior.canary],
        ['SSH_AUTH_SOCK', prior.ssh],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
    const made = await repo.warren('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    const seen = await getJson<{ canary: string | null; ssh: string | null }>(await webPort(repo, 'agent'));
    const held = seen.canary === null && seen.ssh === null;
    record('root', 'environment', "a dev server reads warren's environment (a canary, SSH_AUTH_SOCK)", held);
    expect(seen).toMatchObject({ canary: null, ssh: null });
    const exec = await repo.warren('exec', 'agent', '--', 'sh', '-c', 'env');
    const execHeld = !/WARREN_TEST_CANARY|SSH_AUTH_SOCK/.test(exec.stdout);
    record('root', 'environment', "a sandboxed command reads warren's environment (a canary, SSH_AUTH_SOCK)", execHeld);
    expect(exec.stdout).not.toMatch(/WARREN_TEST_CANARY|SSH_AUTH_SOCK/);
    // The task's own variables are there.
    expect(exec.stdout).toMatch(/^WARREN_TASK_ID=agent$/m);
  }, 120_000);

  it.skipIf(noNobody !== null)(
    'as uid 65534: the same server writes nothing outside and is reached from the host',
    async () => {
      const marks = hostMarks();
      const repo = nobodyRepo((root) => {
        fs.writeFileSync(path.join(root, 'warren.yaml'), YAML);
        fs.writeFileSync(path.join(root, 'server.js'), hostileServer(marks));
      });
      stopServicesAfter(repo.home);
      const made = repo.warren(['new', 'feat', 'agent']);
      expect(made.code, made.stderr).toBe(0);
      const env = repo.json<{ env: Record<string, string> }>(['env', 'agent']).env;
      const seen = await getJson<{ wrote: string }>(env.WARREN_SERVICE_WEB_PORT ?? 0);
      const held = !fs.existsSync(path.join(marks, 'server-ran-on-the-host')) && seen.wrote !== 'yes';
      record('uid 65534', 'services', "a task's dev server runs the agent's server.js on the host", held);
      expect(held, JSON.stringify(seen)).toBe(true);
      expect(repo.warren(['rm', 'agent']).code).toBe(0);
      expect(livingDaemons(repo.home)).toEqual([]);
    },
    120_000,
  );
});

describe.skipIf(noBwrap !== null)(
  "the merge queue's gate starts the integrated commit's services in its sandbox",
  () => {
    it("the agent's server.js, started by the gate before verify, writes nothing on the host", async () => {
      const marks = hostMarks();
      const repo = serviceRepo(`sandbox: bwrap
services:
  web: { run: [node, server.js], ready: { http: /, timeout: 30s }, start: always }
verify:
  - { id: test, run: "true" }
`);
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
      expect(made.code, made.stderr).toBe(0);
      fs.writeFileSync(path.join(made.json.path, 'server.js'), hostileServer(marks));
      expect((await repo.warren('checkpoint', 'agent', '-m', 'server')).code).toBe(0);
      // The task's own server (the agent's edit) is stopped first: only the gate's could leave the mark now.
      expect((await repo.warren('service', 'stop', 'agent', 'web')).code).toBe(0);
      const landed = await repo.warren('land', 'agent');
      expect(landed.code, landed.stderr).toBe(0);
      const held = !fs.existsSync(path.join(marks, 'server-ran-on-the-host'));
      record('root', 'gate', "the gate's services run the agent's server.js on the host", held);
      expect(held, "the gate ran the agent's server.js unsandboxed").toBe(true);
    }, 180_000);
  },
);

describe.skipIf(noBwrap !== null || noPostgres !== null)('a template is seeded inside the sandbox', () => {
  const SCHEMA = 'CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL);\n';

  it("the gate builds the integrated seed.sql's template: psql's \\! in it runs nothing on the host", async () => {
    const marks = hostMarks();
    const repo = serviceRepo(
      `sandbox: bwrap
services:
  db: { kind: postgres, seed: { sql: db/schema.sql } }
verify:
  - { id: test, run: "true" }
`,
      { 'db/schema.sql': SCHEMA },
    );
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    const mark = path.join(marks, 'seed-ran-on-the-host');
    fs.writeFileSync(path.join(made.json.path, 'db/schema.sql'), `${SCHEMA}\\! touch ${mark}\nSELECT 1;\n`);
    expect((await repo.warren('checkpoint', 'agent', '-m', 'seed')).code).toBe(0);
    await repo.warren('land', 'agent');
    const held = !fs.existsSync(mark);
    record('root', 'seed', "psql's \\! in the integrated seed.sql runs on the host", held);
    expect(held, "the gate's seed ran \\! on the host").toBe(true);
  }, 180_000);

  it('`seed: { run: … }` reaches its template database in a sandboxed project', async () => {
    const repo = serviceRepo(
      `sandbox: bwrap
services:
  db: { kind: postgres, seed: { run: 'psql -X -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -f db/schema.sql', inputs: [db] } }
`,
      { 'db/schema.sql': `${SCHEMA}INSERT INTO items (name) VALUES ('seeded');\n` },
    );
    const made = await repo.warren('new', 'feat', 'a');
    expect(made.code, made.stderr + made.stdout).toBe(0);
    const count = await repo.warren(
      'exec',
      'a',
      '--',
      'sh',
      '-c',
      'psql -X -A -t "$DATABASE_URL" -c "SELECT name FROM items"',
    );
    expect(count.stdout.trim()).toBe('seeded');
  }, 180_000);
});

describe.skipIf(noBwrap !== null || process.getuid?.() !== 0)('the user’s sockets are not the sandbox’s', () => {
  /** A listening unix socket in a folder of /run, as an SSH agent's or a session bus's would be. */
  async function runSocket(): Promise<string> {
    const dir = fs.mkdtempSync('/run/warren-test-');
    const sock = path.join(dir, 'agent.sock');
    const server = net.createServer((c) => c.end('answered\n'));
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    onTestFinished(() => {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return sock;
  }

  const CONNECT = (sock: string) =>
    `node -e "require('net').connect('${sock}').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))"`;

  it('a socket under /run is not reachable, unless the user names it in sandbox_sockets', async () => {
    const sock = await runSocket();
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    expect((await repo.warren('new', 'feat', 'agent')).code).toBe(0);
    const tried = await repo.warren('exec', 'agent', '--', 'sh', '-c', CONNECT(sock));
    // It tried, and was refused: the socket is not there for it.
    expect(tried.stdout.trim()).toMatch(/^E[A-Z]+$/);
    const held = !tried.stdout.includes('answered');
    record('root', 'sockets', 'connect to a socket under /run (an SSH agent, a session bus)', held);
    expect(tried.stdout).not.toContain('answered');
    // Named by the user, in their own configuration: reachable.
    fs.mkdirSync(repo.home, { recursive: true });
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), `sandbox_sockets: [${sock}]\n`);
    const named = await repo.warren('exec', 'agent', '--', 'sh', '-c', CONNECT(sock));
    expect(named.stdout).toContain('answered');
  }, 60_000);
});
