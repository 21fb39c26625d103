// A second local user behind sshd on 127.0.0.1, as the "other machine" of an SSH task
// (`hosts: {box: …}` written into WARREN_HOME's config.yaml). As test/run/ssh-runner.test.ts does.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const USER = 'warrenssh';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const answers = (port) =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** `{ok: true, stop}` once host `box` answers; `{ok: false, why}` where it cannot be made here. */
export async function startHost(dir, home, bin) {
  if (process.getuid?.() !== 0) return { ok: false, why: 'not root: a local user is made for the host' };
  if (!fs.existsSync('/usr/sbin/sshd'))
    return { ok: false, why: 'sshd is not installed (apt-get install openssh-server)' };
  if (spawnSync('id', ['-u', USER]).status !== 0) run('useradd', ['-m', '-s', '/bin/sh', USER]);
  run('usermod', ['-p', '*', USER]);
  const userHome = run('sh', ['-c', `getent passwd ${USER} | cut -d: -f6`]);
  const keys = path.join(dir, 'ssh');
  fs.mkdirSync(keys, { recursive: true });
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'key')]);
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'hostkey')]);
  fs.mkdirSync(path.join(userHome, '.ssh'), { recursive: true, mode: 0o700 });
  fs.copyFileSync(path.join(keys, 'key.pub'), path.join(userHome, '.ssh', 'authorized_keys'));
  fs.writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n\tname = host\n\temail = host@example.com\n');
  run('chown', ['-R', USER, path.join(userHome, '.ssh'), path.join(userHome, '.gitconfig')]);
  const port = await freePort();
  const config = path.join(keys, 'sshd_config');
  fs.writeFileSync(
    config,
    `ListenAddress 127.0.0.1\nPort ${port}\nHostKey ${path.join(keys, 'hostkey')}\nPidFile ${path.join(keys, 'sshd.pid')}\nAuthorizedKeysFile .ssh/authorized_keys\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n`,
  );
  fs.mkdirSync('/run/sshd', { recursive: true });
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-f', config], { stdio: 'ignore' });
  for (let i = 0; i < 300 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 100));
  const remoteHome = path.join(userHome, `wh-bench-${path.basename(dir)}`);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    path.join(home, 'config.yaml'),
    `hosts:\n  box:\n    ssh: ${USER}@127.0.0.1\n    port: ${port}\n    identity: ${path.join(keys, 'key')}\n    warren: [${JSON.stringify(process.execPath)}, ${JSON.stringify(bin)}]\n    home: ${remoteHome}\n`,
    { mode: 0o600 },
  );
  return {
    ok: true,
    stop() {
      sshd.kill('SIGTERM');
      spawnSync('pkill', ['-u', USER]);
      fs.rmSync(remoteHome, { recursive: true, force: true });
    },
  };
}
