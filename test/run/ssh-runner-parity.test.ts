import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { taskView } from '../../src/web/task-view.js';
import { unavailable } from '../helpers/capabilities.js';
import { BIN } from '../helpers/repo.js';
import { startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * A task on another machine (`--runner ssh:box`: a second local user behind sshd on 127.0.0.1,
 * its own WARREN_HOME) behaves as a task here does where the docs once listed it did not: the
 * caller's own standard input reaches its command; its ports and provisioned paths are made only
 * on the host, next to the code, and status, audit, rm, gc and scan say so; the dashboard's diff
 * is `warren diff`'s, of its workspace there.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

let host: SshHost;

describe.skipIf(noSshd !== null)('an SSH task as a task here', () => {
  beforeAll(async () => {
    host = await startSshHost('warrenssh-p');
  }, 120_000);

  afterAll(() => host?.stop());

  it(
    "`exec` forwards the caller's own stdin as it comes; its end is the command's end of input, not the run's",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warren('new', 'feat', 'i', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      // The real command line: its stdin is this test's pipe, written while the command runs there.
      const child = spawn(
        process.execPath,
        [BIN, 'exec', 'i', '--', 'sh', '-c', 'read a; echo "got:$a"; sha256sum; echo after-eof'],
        { cwd: repo.root, env: { ...process.env, WARREN_HOME: repo.home }, stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.stdin.write('first\n');
      // Answered there while the input is still open: it is streamed, not read whole first.
      await waitFor(() => out.includes('got:first') || child.exitCode !== null);
      expect(out, err).toContain('got:first');
      // Then more than the host reads ahead of a command (1 MiB), binary, and the end of it.
      const rest = randomBytes(3 << 20);
      child.stdin.end(rest);
      expect(await exited, err).toBe(0);
      expect(out).toContain(`${createHash('sha256').update(rest).digest('hex')}  -`);
      // The end of the input did not end the run: the command went on after it.
      expect(out).toContain('after-eof');
    },
  );

  it(
    'its ports and provisioned paths are made on the host only; status, audit, rm, gc and scan say so',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({
        '.gitignore': 'cache/\n',
        'warren.yaml': 'provision:\n  - {path: cache, mode: copy}\n',
      });
      // The ignored path in the main checkout here, and (once the host has the repository) in the host's.
      fs.mkdirSync(path.join(repo.root, 'cache'));
      fs.writeFileSync(path.join(repo.root, 'cache', 'data.txt'), 'here\n');
      expect((await repo.warren('new', 'feat', 'first', '--runner', 'ssh:box')).code).toBe(0);
      const hostRepoDir = `${host.remoteHome(repo)}/remote/*/repo`;
      expect(host.asHost(`cd ${hostRepoDir} && mkdir cache && echo there > cache/data.txt`).code).toBe(0);

      const made = await repo.warrenJson<{ path: string; ports?: unknown }>('new', 'feat', 'p', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      // Nothing provisioned in the coordinator's copy of the branch, and no port block taken here.
      expect(fs.existsSync(path.join(made.json.path, 'cache'))).toBe(false);
      const shown = await repo.warrenJson<{ data: Record<string, unknown>; runner: { remotePath: string } }>(
        'show',
        'p',
      );
      expect(shown.json.data.ports).toBeUndefined();
      expect(shown.json.data.provision ?? []).toEqual([]);
      // Made there, from the host's main checkout, by the host's `new`.
      const there = shown.json.runner.remotePath;
      expect(host.asHost(`cat ${there}/cache/data.txt`).out).toBe('there');

      // status: the changes inside the path provisioned there.
      expect((await repo.warren('exec', 'p', '--', 'sh', '-c', 'echo more >> cache/data.txt')).code).toBe(0);
      const status = await repo.warrenJson<{ provisioned: { path: string; changed: { path: string }[] }[] }>(
        'status',
        'p',
      );
      expect(status.code, status.stderr).toBe(0);
      expect(status.json.provisioned.map((p) => p.path)).toEqual(['cache']);
      expect(JSON.stringify(status.json.provisioned[0]?.changed)).toContain('data.txt');

      // audit: the ports and the provisioned paths are the host's.
      const audit = await repo.warrenJson<{ sections: { name: string; data: { block?: { first: number } | null } }[] }>(
        'audit',
        'p',
      );
      expect(audit.code, audit.stderr).toBe(0);
      const ports = audit.json.sections.find((x) => x.name === 'ports');
      expect(ports?.data.block?.first).toEqual(expect.any(Number));
      const text = (await repo.warren('audit', 'p')).stdout;
      expect(text).toContain('on host box, taken there');
      expect(text).toContain('provisioned on its host (ssh:box)');
      // provision is the host's: done there (test/run/ssh-discard.test.ts), nothing made here.
      const refresh = await repo.warrenJson<{ host: string }>('provision', 'p', '--refresh');
      expect(refresh.code, refresh.stderr).toBe(0);
      expect(refresh.json.host).toBe('box');
      expect(fs.existsSync(path.join(made.json.path, 'cache'))).toBe(false);

      // rm (its work there discarded), gc and scan: nothing left here or there.
      expect((await repo.warren('exec', 'p', '--', 'git', 'checkout', '--', '.')).code).toBe(0);
      const rm = await repo.warren('rm', 'p');
      expect(rm.code, rm.stderr).toBe(0);
      expect(host.asHost(`test -e ${there}`).code).not.toBe(0);
      expect((await repo.warren('rm', 'first')).code).toBe(0);
      expect((await repo.warren('gc')).code).toBe(0);
      expect((await repo.warrenJson<{ strays: unknown[] }>('scan')).json.strays).toEqual([]);
    },
  );

  it(
    "the dashboard's diff is `warren diff`'s: its commits and its workspace there, uncommitted work included",
    {
      timeout: 300_000,
    },
    async () => {
      const repo = host.hostRepo();
      expect((await repo.warren('new', 'feat', 'd', '--runner', 'ssh:box')).code).toBe(0);
      const ran = await repo.warren(
        'exec',
        'd',
        '--',
        'sh',
        '-c',
        'echo one > one.txt; git add one.txt; git commit -qm one; echo draft > draft.txt; echo two >> README.md',
      );
      expect(ran.code, ran.stderr).toBe(0);
      const cli = await repo.warrenJson<{ files: { path: string }[] }>('diff', 'd');
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.json.files.map((f) => f.path).sort()).toEqual(['README.md', 'draft.txt', 'one.txt']);

      const store = openStore(repo.home);
      onTestFinished(() => store.close());
      const ctx = await openProject(repo.root, { store });
      const view = await taskView(ctx, 'd');
      if (!view.diff.ok) throw new Error(view.diff.error);
      expect(view.diff.value.files.map((f) => f.path).sort()).toEqual(['README.md', 'draft.txt', 'one.txt']);
      expect(view.diff.value.files.find((f) => f.path === 'draft.txt')?.patch).toContain('+draft');
      // Read there, nothing moved here: the workspace here has neither the draft nor the edit.
      const here = (await repo.warrenJson<{ path: string }>('show', 'd')).json.path;
      expect(fs.existsSync(path.join(here, 'one.txt'))).toBe(true);
      expect(fs.existsSync(path.join(here, 'draft.txt'))).toBe(false);
      expect(repo.git('for-each-ref', 'refs/warren/remote-worktree')).toBe('');
    },
  );
});
