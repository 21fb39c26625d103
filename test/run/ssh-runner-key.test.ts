import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { socketDir } from '../../src/system/socket-path.js';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, runWarren } from '../helpers/repo.js';
import { startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * warren.yaml's `runner: ssh:NAME` (the host named by the repository, declared only in the
 * user's config.yaml), `new --runner` over it, and what makes an SSH `new` cheap: the host's
 * warren started while the worktree is made here, the base pushed only when the host lacks it.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

let host: SshHost;

describe.skipIf(noSshd !== null)("warren.yaml's runner: ssh:NAME", () => {
  beforeAll(async () => {
    host = await startSshHost('warrenspeed');
  }, 120_000);

  afterAll(() => host?.stop());

  it(
    'a task made with no --runner runs on the host warren.yaml names; --runner local keeps one here; a base sent before is not pushed again',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ 'warren.yaml': 'runner: ssh:box\n' });
      const made = await repo.warrenJson<{ state: string }>('new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      expect(made.json.state).toBe('ready');
      const ran = await repo.warren('exec', 'a', '--', 'sh', '-c', 'id -un; pwd');
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain(host.user);
      expect(ran.stdout).toContain(host.userHome);
      expect((await repo.warren('audit', 'a')).stdout).toContain('runner: host box over SSH');
      // The first task to the host sent its base; the next from the same base asks for it there first.
      const sent = (id: string): string =>
        host.asHost(`cd ${host.remoteHome(repo)}/remote/*/repo && git rev-parse --verify -q refs/warren/sent/${id}`)
          .out;
      expect(sent('a')).toMatch(/^[0-9a-f]{40}$/);
      expect((await repo.warren('new', 'feat', 'b')).code).toBe(0);
      expect(sent('b')).toBe('');
      expect(host.hostTip(repo, 'feat/b')).toBe(repo.git('rev-parse', 'feat/b'));
      // A new base (a commit here the host never had) is pushed, then the task made.
      fs.writeFileSync(path.join(repo.root, 'more.txt'), 'more\n');
      repo.git('add', 'more.txt');
      repo.git('commit', '-qm', 'more');
      expect((await repo.warren('new', 'feat', 'c', '--no-sync')).code).toBe(0);
      expect(sent('c')).toBe(repo.git('rev-parse', 'main'));
      const moreThere = await repo.warren('exec', 'c', '--', 'cat', 'more.txt');
      expect(moreThere.stdout).toBe('more\n');

      const here = await repo.warren('new', 'feat', 'l', '--runner', 'local');
      expect(here.code, here.stderr).toBe(0);
      const local = await repo.warren('exec', 'l', '--', 'id', '-un');
      expect(local.stdout).not.toContain(host.user);
      expect((await repo.warren('audit', 'l')).stdout).toContain('runner: here');

      for (const id of ['a', 'b', 'c', 'l']) expect((await repo.warren('rm', id)).code).toBe(0);
      expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);
    },
  );

  it(
    "a WARREN_HOME too deep for a unix socket: the connection's control socket goes to a short folder of this user's",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ 'warren.yaml': 'runner: ssh:box\n' });
      // ssh binds the master's socket at its path plus 17 characters: over 107 bytes under this home.
      const deep = path.join(repo.home, 'a'.repeat(40), 'b'.repeat(40));
      fs.mkdirSync(deep, { recursive: true, mode: 0o700 });
      fs.copyFileSync(path.join(repo.home, 'config.yaml'), path.join(deep, 'config.yaml'));
      // The short folder outlives the command (the master keeps its socket there for 300 s): the test's to remove.
      onTestFinished(() => fs.rmSync(socketDir(path.join(deep, 'run', 'ssh'), 1), { recursive: true, force: true }));
      const w = (...args: string[]) => runWarren(args, { cwd: repo.root, home: deep });
      expect((await w('trust', '--yes')).code).toBe(0);
      const made = await w('new', 'feat', 'd');
      expect(made.code, made.stderr).toBe(0);
      const ran = await w('exec', 'd', '--', 'id', '-un');
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout.trim()).toBe(host.user);
      expect((await w('rm', 'd')).code).toBe(0);
    },
  );

  it('an undeclared host in warren.yaml: HOST_UNKNOWN, exit 2, nothing made; a bad --runner: USAGE', async () => {
    const repo = host.hostRepo({ 'warren.yaml': 'runner: ssh:nope\n' });
    const unknown = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'u');
    expect(unknown.code).toBe(2);
    expect(unknown.json.error.code).toBe('HOST_UNKNOWN');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
    const bad = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'v', '--runner', 'ssh:-x');
    expect(bad.code).toBe(2);
    expect(bad.json.error.code).toBe('USAGE');
    const invalid = host.hostRepo({ 'warren.yaml': 'runner: ssh:a/b\n' });
    const refused = await invalid.warrenJson<{ error: { code: string } }>('new', 'feat', 'w');
    expect(refused.code).toBe(2);
    expect(refused.json.error.code).toBe('CONFIG_INVALID');
  });

  it(
    "a new killed after the host's warren was started early leaves no process there and is undone",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ 'warren.yaml': 'runner: ssh:box\n' });
      expect((await repo.warren('new', 'feat', 'warm')).code).toBe(0); // the host's repository made
      const child = spawn(process.execPath, [BIN, 'new', 'feat', 'k'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home, WARREN_FAULT: 'new:worktree-added' },
        stdio: 'ignore',
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).not.toBe(0);
      const runners = () => host.asHost(`pgrep -u ${host.user} -f "[r]unner --stdio"`).code === 0;
      await waitFor(() => !runners());
      expect(runners()).toBe(false);
      // The next command undoes the half-made task; it was never made there.
      expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['warm']);
      expect(host.hostTip(repo, 'feat/k')).toBe('');
    },
  );
});
