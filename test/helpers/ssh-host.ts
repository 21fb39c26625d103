import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AGENT_CLI_BIN } from './capabilities.js';
import { BIN, makeRepo, type TestRepo } from './repo.js';

/**
 * "Another machine" for the SSH runner's tests: a second local user behind an sshd of its own on
 * 127.0.0.1, running this checkout's warren with a WARREN_HOME per test repository. Each test
 * file takes a user of its own (`warrenssh`, `warrenssh-…`), so files running at once never
 * share a home or kill each other's processes.
 */
export interface SshHost {
  user: string;
  port: number;
  /** The user's home folder there. */
  userHome: string;
  /** A shell command as the host's user: its exit status and output. */
  asHost(command: string): { code: number; out: string };
  /** A repository whose user declares host `box` (this sshd, or `hostPort`); its own WARREN_HOME there. */
  hostRepo(files?: Record<string, string>, hostPort?: number): TestRepo;
  /** The WARREN_HOME a repository's tasks use there. */
  remoteHome(repo: TestRepo): string;
  /** A branch's tip in the host's repository of `repo`, or ''. */
  hostTip(repo: TestRepo, branch: string): string;
  /** The pid of this repository's ssh connection master, or null. */
  masterPid(repo: TestRepo): number | null;
  /** The host stops answering new connections (its sshd's listener ends; connections made stay). */
  down(): Promise<void>;
  /** The host answers again, on the same port. */
  up(): Promise<void>;
  stop(): void;
}

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export async function freePort(): Promise<number> {
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

/**
 * The ports the host's warren gives its tasks' blocks: a range of this worker's own, outside
 * every worker's (test/helpers/worker-ports.ts: 20000–31999). Without it the host's warren took
 * blocks from its default range, where another test file's services run at the same time (a pod's
 * web server of the k8s tests on 127.0.0.1:20009 made a host's dev server fail with EADDRINUSE).
 */
function hostPortRange(): string {
  const worker = Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1) || 1);
  const first = 32000 + ((worker - 1) % 4) * 1000;
  return `${first}-${first + 999}`;
}

/** Polls `ok` every 100 ms for up to a minute. */
export async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((res) => setTimeout(res, 100));
}

/**
 * The host's warren (as `repo`'s config.yaml starts it there) started with the real agent CLIs
 * (test/agent-clis) on its PATH: the host's user has them, and the coordinator's tests do not.
 */
export function hostHasAgentClis(repo: TestRepo): void {
  const config = path.join(repo.home, 'config.yaml');
  fs.writeFileSync(
    config,
    fs
      .readFileSync(config, 'utf8')
      .replace(
        /^ {4}warren: \[/m,
        `    warren: ["env", ${JSON.stringify(`PATH=${AGENT_CLI_BIN}:/usr/local/bin:/usr/bin:/bin`)}, `,
      ),
  );
}

/** Makes the user (once), its key and an sshd on a free loopback port; `stop()` ends all of it. */
export async function startSshHost(user = 'warrenssh'): Promise<SshHost> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-sshd-')));
  if (spawnSync('id', ['-u', user]).status !== 0) sh('useradd', ['-m', '-s', '/bin/sh', user]);
  sh('usermod', ['-p', '*', user]); // sshd refuses a locked account
  const userHome = sh('sh', ['-c', `getent passwd ${user} | cut -d: -f6`]);
  sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'key')]);
  sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'hostkey')]);
  fs.mkdirSync(path.join(userHome, '.ssh'), { recursive: true, mode: 0o700 });
  fs.copyFileSync(path.join(dir, 'key.pub'), path.join(userHome, '.ssh', 'authorized_keys'));
  fs.writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n\tname = host\n\temail = host@example.com\n');
  sh('chown', ['-R', user, path.join(userHome, '.ssh'), path.join(userHome, '.gitconfig')]);
  const port = await freePort();
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
  const startSshd = async (): Promise<ChildProcess> => {
    const started = spawn(
      '/usr/sbin/sshd',
      ['-D', '-f', path.join(dir, 'sshd_config'), '-E', path.join(dir, 'sshd.log')],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 600 && !(await answers(port)); i++) await new Promise((res) => setTimeout(res, 100));
    return started;
  };
  let sshd = await startSshd();

  const asHost = (command: string): { code: number; out: string } => {
    const r = spawnSync('su', ['-s', '/bin/sh', user, '-c', command], { encoding: 'utf8', timeout: 60_000 });
    return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`.trim() };
  };
  // The host's user runs this checkout's warren.
  const can = asHost(`${process.execPath} ${BIN} --version`);
  if (can.code !== 0) throw new Error(`${user} cannot run ${BIN} (make the checkout readable to it): ${can.out}`);

  const remoteHome = (repo: TestRepo): string => path.join(userHome, `wh-${path.basename(path.dirname(repo.root))}`);
  return {
    user,
    port,
    userHome,
    asHost,
    remoteHome,
    hostRepo(files = {}, hostPort = port) {
      const repo = makeRepo({ files: { 'README.md': '# main\n', ...files } });
      fs.mkdirSync(repo.home, { recursive: true, mode: 0o700 });
      fs.writeFileSync(
        path.join(repo.home, 'config.yaml'),
        [
          'hosts:',
          '  box:',
          `    ssh: ${user}@127.0.0.1`,
          `    port: ${hostPort}`,
          `    identity: ${path.join(dir, 'key')}`,
          `    warren: ["env", ${JSON.stringify(`WARREN_PORT_RANGE=${hostPortRange()}`)}, ${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}]`,
          `    home: ${remoteHome(repo)}`,
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      return repo;
    },
    hostTip(repo, branch) {
      return asHost(`cd ${remoteHome(repo)}/remote/*/repo && git rev-parse --verify -q refs/heads/${branch}`).out;
    },
    masterPid(repo) {
      const socket = path.join(repo.home, 'run', 'ssh', 'box.sock');
      const check = spawnSync(
        'ssh',
        ['-o', `ControlPath=${socket}`, '-p', String(port), '-O', 'check', `${user}@127.0.0.1`],
        {
          encoding: 'utf8',
        },
      );
      const pid = /pid=(\d+)/.exec(check.stderr)?.[1];
      return pid === undefined ? null : Number(pid);
    },
    async down() {
      const exited = new Promise((resolve) => sshd.once('exit', resolve));
      sshd.kill('SIGTERM');
      await exited;
    },
    async up() {
      sshd = await startSshd();
    },
    stop() {
      sshd.kill('SIGTERM');
      // The connection masters of every test's WARREN_HOME end with their sshd; their home folders there go.
      spawnSync('pkill', ['-u', user]);
      for (const e of fs.existsSync(userHome) ? fs.readdirSync(userHome) : [])
        if (e.startsWith('wh-')) fs.rmSync(path.join(userHome, e), { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
