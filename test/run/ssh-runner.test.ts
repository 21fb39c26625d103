import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo } from '../helpers/repo.js';
import { freePort, startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * `--runner ssh:NAME` (src/run/ssh/): the "other machine" is a second local user behind sshd on
 * 127.0.0.1, with its own WARREN_HOME, running this checkout's warren. The coordinator (this
 * test's WARREN_HOME) keeps state and lands; the host makes, runs, commits and removes.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

let host: SshHost;

describe.skipIf(noSshd !== null)('a task on another machine over SSH', () => {
  beforeAll(async () => {
    host = await startSshHost('warrenssh');
  }, 120_000);

  afterAll(() => host?.stop());

  it(
    'new → exec → checkpoint → land → rm: runs there, commits come back checked, lands here, removed there',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warrenJson<{ path: string; state: string }>('new', 'feat', 'a', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      expect(made.json.state).toBe('ready');

      const ran = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        'id -un; pwd; echo one > one.txt; git add one.txt; git commit -qm one',
      );
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain(host.user);
      expect(ran.stdout).toContain(host.userHome); // the host's workspace, not this one
      // Its commit is here, on the task's branch, and in the workspace here.
      expect(repo.git('log', '--format=%s', '-1', 'feat/a')).toBe('one');
      expect(fs.readFileSync(path.join(made.json.path, 'one.txt'), 'utf8')).toBe('one\n');

      const failing = await repo.warren('exec', 'a', '--', 'sh', '-c', 'echo to-err >&2; exit 7');
      expect(failing.code).toBe(7);
      expect(failing.stderr).toContain('to-err');

      // Uncommitted work there: checkpoint commits it there and brings it here.
      expect((await repo.warren('exec', 'a', '--', 'sh', '-c', 'echo two > two.txt')).code).toBe(0);
      const cp = await repo.warrenJson<{ commit: string | null }>('checkpoint', 'a', '-m', 'two');
      expect(cp.code, cp.stderr).toBe(0);
      expect(cp.json.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(repo.git('rev-parse', 'feat/a')).toBe(cp.json.commit);

      const audit = await repo.warren('audit', 'a');
      expect(audit.stdout).toContain('runner: host box over SSH');

      const land = await repo.warren('land', 'a');
      expect(land.code, land.stderr).toBe(0);
      expect(repo.git('show', 'main:two.txt')).toBe('two');

      const rm = await repo.warren('rm', 'a');
      expect(rm.code, rm.stderr).toBe(0);
      expect(host.hostTip(repo, 'feat/a')).toBe(''); // the branch there is gone
      const scan = await repo.warrenJson<{ strays: unknown[] }>('scan');
      expect(scan.json.strays).toEqual([]);
    },
  );

  it(
    'refuses fetched commits that touch a protected path or do not descend from what the branch had: the branch stays',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ 'warren.yaml': 'protected: [secret.txt]\n' });
      expect((await repo.warren('new', 'feat', 'g', '--runner', 'ssh:box')).code).toBe(0);
      const before = repo.git('rev-parse', 'feat/g');
      const bad = await repo.warrenJson(
        'exec',
        'g',
        '--',
        'sh',
        '-c',
        'echo x > secret.txt; git add secret.txt; git commit -qm s',
      );
      expect(bad.code).toBe(1);
      expect(JSON.stringify(bad.json)).toContain('REMOTE_COMMITS_REFUSED');
      expect(repo.git('rev-parse', 'feat/g')).toBe(before);
      expect(repo.git('log', '--format=%s', '-1', 'refs/warren/quarantine/g')).toBe('s');

      // Put right there, then a history that does not descend from what the branch has here.
      expect(
        (
          await repo.warren(
            'exec',
            'g',
            '--',
            'sh',
            '-c',
            'git reset -q --hard HEAD~1; echo ok > ok.txt; git add ok.txt; git commit -qm ok',
          )
        ).code,
      ).toBe(0);
      const ok = repo.git('rev-parse', 'feat/g');
      expect(repo.git('log', '--format=%s', '-1', ok)).toBe('ok');
      const rewrite = await repo.warrenJson('exec', 'g', '--', 'sh', '-c', 'git commit -q --amend -m rewritten');
      expect(rewrite.code).toBe(1);
      expect(JSON.stringify(rewrite.json)).toContain('does not descend');
      expect(repo.git('rev-parse', 'feat/g')).toBe(ok);
    },
  );

  it(
    'refuses, exit 2 and nothing made: an undeclared host, a host in warren.yaml, a host that does not answer',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const unknown = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'u', '--runner', 'ssh:nope');
      expect(unknown.code).toBe(2);
      expect(unknown.json.error.code).toBe('HOST_UNKNOWN');

      const closed = host.hostRepo({}, await freePort());
      const down = await closed.warrenJson<{ error: { code: string } }>('new', 'feat', 'd', '--runner', 'ssh:box');
      expect(down.code).toBe(2);
      expect(down.json.error.code).toBe('RUNNER_UNAVAILABLE');
      expect((await closed.warrenJson<unknown[]>('list')).json).toEqual([]);

      const declared = makeRepo({ files: { 'warren.yaml': 'hosts:\n  box: {ssh: x@y}\n' } });
      const refused = await declared.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'w');
      expect(refused.code).toBe(2);
      expect(refused.json.error.code).toBe('CONFIG_INVALID');
      expect(refused.json.error.message).toContain('may not declare hosts');
    },
  );

  it(
    'a connection cut mid-run: the run ends there, scan names the task, the next command brings its commit back',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      expect((await repo.warren('new', 'feat', 'c', '--runner', 'ssh:box')).code).toBe(0);
      const child = spawn(
        process.execPath,
        [
          BIN,
          'exec',
          'c',
          '--',
          'sh',
          '-c',
          'echo cut > cut.txt; git add cut.txt; git commit -qm cut; echo committed; exec sleep 300',
        ],
        { cwd: repo.root, env: { ...process.env, WARREN_HOME: repo.home }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await waitFor(() => out.includes('committed'));
      expect(out).toContain('committed');
      // The connection goes: its master (this WARREN_HOME's) is killed.
      const pid = host.masterPid(repo);
      expect(pid).not.toBeNull();
      process.kill(pid!, 'SIGKILL');
      const code = await exited;
      expect(code).not.toBe(0);
      // The command there ended with the connection.
      await waitFor(() => host.asHost(`pgrep -u ${host.user} -f "[s]leep 300"`).code !== 0);
      expect(host.asHost(`pgrep -u ${host.user} -f "[s]leep 300"`).code).not.toBe(0);

      const scan = await repo.warrenJson<{ strays: { kind: string; id?: string }[] }>('scan');
      expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'remote-unfetched', id: 'c' })]);
      // The next command repairs: the commit made there is here.
      const status = await repo.warren('status', 'c');
      expect(status.code, status.stderr).toBe(0);
      expect(repo.git('log', '--format=%s', '-1', 'feat/c')).toBe('cut');
      expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);
    },
  );
  it(
    "its dev server runs on the host, next to the code: the task's commands there reach it, and rm stops it",
    { timeout: 300_000 },
    async () => {
      const server = `require('node:http').createServer((q, r) => r.end(process.cwd() + ' ' + process.getuid() + '\\n')).listen(Number(process.env.WARREN_PORT), '127.0.0.1');\n`;
      const repo = host.hostRepo({
        'server.js': server,
        'warren.yaml':
          'services:\n  web: { run: [node, server.js], ready: { http: /, timeout: 30s }, start: always }\n',
      });
      const made = await repo.warren('new', 'feat', 's', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const get =
        'require("node:http").get(process.env.WARREN_SERVICE_WEB_URL, (r) => r.pipe(process.stdout)).on("error", (e) => { console.error(e.message); process.exit(3); })';
      const r = await repo.warren('exec', 's', '--', 'node', '-e', get);
      expect(r.code, r.stderr).toBe(0);
      // Served from the host's workspace, by the host's user.
      const [cwd, uid] = r.stdout.trim().split(' ');
      expect(cwd?.startsWith(host.userHome)).toBe(true);
      expect(uid).toBe(host.asHost('id -u').out);
      expect((await repo.warren('rm', 's')).code).toBe(0);
      await waitFor(() => host.asHost('pgrep -u ' + host.user + ' -f "[s]erver.js"').code !== 0);
      expect(host.asHost('pgrep -u ' + host.user + ' -f "[s]erver.js"').code).not.toBe(0);
    },
  );
});
