import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { BIN } from '../helpers/repo.js';
import { startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * A task on another machine (`--runner ssh:box`: a second local user behind sshd on 127.0.0.1,
 * its own WARREN_HOME) behaves as a task here does where the docs once listed it did not: the
 * caller's own standard input reaches its command.
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
});
