import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * `--runner ssh:NAME` (src/run/ssh/): the "other machine" is a second local user behind sshd on
 * 127.0.0.1, with its own WARREN_HOME, running this checkout's warren. The coordinator (this
 * test's WARREN_HOME) keeps state and lands; the host makes, runs, commits and removes.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

const USER = 'warrenssh';
let dir = '';
let port = 0;
let sshd: ChildProcess | null = null;
let userHome = '';

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** As the host's user. */
function asHost(command: string): { code: number; out: string } {
  const r = spawnSync('su', ['-s', '/bin/sh', USER, '-c', command], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`.trim() };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as net.AddressInfo;
      server.close(() => resolve(p));
    });
  });
}

function answers(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(p, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((res) => setTimeout(res, 100));
}

/** A repository whose user declares host `box` (this user's sshd); its own WARREN_HOME there. */
function hostRepo(files: Record<string, string> = {}, hostPort = port): TestRepo {
  const repo = makeRepo({ files: { 'README.md': '# main\n', ...files } });
  const remoteHome = path.join(userHome, `wh-${path.basename(path.dirname(repo.root))}`);
  fs.mkdirSync(repo.home, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    [
      'hosts:',
      '  box:',
      `    ssh: ${USER}@127.0.0.1`,
      `    port: ${hostPort}`,
      `    identity: ${path.join(dir, 'key')}`,
      `    warren: [${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}]`,
      `    home: ${remoteHome}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return repo;
}

function hostTip(repo: TestRepo, branch: string): string {
  const home = path.join(userHome, `wh-${path.basename(path.dirname(repo.root))}`);
  return asHost(`cd ${home}/remote/*/repo && git rev-parse --verify -q refs/heads/${branch}`).out;
}

describe.skipIf(noSshd !== null)('a task on another machine over SSH', () => {
  beforeAll(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-sshd-')));
    if (spawnSync('id', ['-u', USER]).status !== 0) sh('useradd', ['-m', '-s', '/bin/sh', USER]);
    sh('usermod', ['-p', '*', USER]); // sshd refuses a locked account
    userHome = sh('sh', ['-c', `getent passwd ${USER} | cut -d: -f6`]);
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'key')]);
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'hostkey')]);
    fs.mkdirSync(path.join(userHome, '.ssh'), { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(dir, 'key.pub'), path.join(userHome, '.ssh', 'authorized_keys'));
    fs.writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n\tname = host\n\temail = host@example.com\n');
    sh('chown', ['-R', USER, path.join(userHome, '.ssh'), path.join(userHome, '.gitconfig')]);
    port = await freePort();
    fs.writeFileSync(
      path.join(dir, 'sshd_config'),
      [
        'ListenAddress 127.0.0.1',
        `Port ${port}`,
        `HostKey ${path.join(dir, 'hostkey')}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        'AuthorizedKeysFile .ssh/authorized_keys',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        '',
      ].join('\n'),
    );
    fs.mkdirSync('/run/sshd', { recursive: true });
    sshd = spawn('/usr/sbin/sshd', ['-D', '-f', path.join(dir, 'sshd_config'), '-E', path.join(dir, 'sshd.log')], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 600 && !(await answers(port)); i++) await new Promise((res) => setTimeout(res, 100));
    // The host's user runs this checkout's warren.
    const can = asHost(`${process.execPath} ${BIN} --version`);
    if (can.code !== 0) throw new Error(`${USER} cannot run ${BIN} (make the checkout readable to it): ${can.out}`);
  }, 120_000);

  afterAll(() => {
    sshd?.kill('SIGTERM');
    // The connection masters of every test's WARREN_HOME end with their sshd; their home folders there go.
    spawnSync('pkill', ['-u', USER]);
    for (const e of fs.existsSync(userHome) ? fs.readdirSync(userHome) : [])
      if (e.startsWith('wh-')) fs.rmSync(path.join(userHome, e), { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'new → exec → checkpoint → land → rm: runs there, commits come back checked, lands here, removed there',
    { timeout: 300_000 },
    async () => {
      const repo = hostRepo();
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
      expect(ran.stdout).toContain(USER);
      expect(ran.stdout).toContain(userHome); // the host's workspace, not this one
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
      expect(hostTip(repo, 'feat/a')).toBe(''); // the branch there is gone
      const scan = await repo.warrenJson<{ strays: unknown[] }>('scan');
      expect(scan.json.strays).toEqual([]);
    },
  );

  it(
    'refuses fetched commits that touch a protected path or do not descend from what the branch had: the branch stays',
    { timeout: 300_000 },
    async () => {
      const repo = hostRepo({ 'warren.yaml': 'protected: [secret.txt]\n' });
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
      const repo = hostRepo();
      const unknown = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'u', '--runner', 'ssh:nope');
      expect(unknown.code).toBe(2);
      expect(unknown.json.error.code).toBe('HOST_UNKNOWN');

      const closed = hostRepo({}, await freePort());
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
      const repo = hostRepo();
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
      const socket = path.join(repo.home, 'run', 'ssh', 'box.sock');
      const check = spawnSync(
        'ssh',
        ['-o', `ControlPath=${socket}`, '-p', String(port), '-O', 'check', `${USER}@127.0.0.1`],
        { encoding: 'utf8' },
      );
      const pid = /pid=(\d+)/.exec(check.stderr)?.[1];
      expect(pid, check.stderr).toBeDefined();
      process.kill(Number(pid), 'SIGKILL');
      const code = await exited;
      expect(code).not.toBe(0);
      // The command there ended with the connection.
      await waitFor(() => asHost('pgrep -u warrenssh -f "[s]leep 300"').code !== 0);
      expect(asHost('pgrep -u warrenssh -f "[s]leep 300"').code).not.toBe(0);

      const scan = await repo.warrenJson<{ strays: { kind: string; id?: string }[] }>('scan');
      expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'remote-unfetched', id: 'c' })]);
      // The next command repairs: the commit made there is here.
      const status = await repo.warren('status', 'c');
      expect(status.code, status.stderr).toBe(0);
      expect(repo.git('log', '--format=%s', '-1', 'feat/c')).toBe('cut');
      expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);
    },
  );
});
