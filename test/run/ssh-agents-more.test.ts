import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { unavailable, type CapabilityName } from '../helpers/capabilities.js';
import { pointAt } from '../helpers/agent-cli.js';
import { FINAL, NOTE, startModelServer } from '../helpers/model-server.js';
import { runCli, tmpDir, type CliResult } from '../helpers/repo.js';
import { hostHasAgentClis, startSshHost, type SshHost } from '../helpers/ssh-host.js';

/**
 * The other two real agent CLIs (codex, gemini: test/agent-clis) in a task on another machine
 * (`--runner ssh:box`: a second local user behind sshd on loopback, its own WARREN_HOME), as
 * ssh-agents.test.ts drives claude: the agent runs there, with its state folder there, against
 * the scripted model server on this machine's loopback; its run, transcript and commits come
 * back here: new → run → --resume → checkpoint → land → rm. The model's endpoint is what the
 * host's user has: codex's in its ~/.codex/config.toml there (which the host's warren seeds into
 * the task's state folder), gemini's in the variables warren passes to an agent. And claude in
 * the host's bwrap sandbox, the repository's `sandbox:` enforced there by the host's warren.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');
const AGENTS = ['codex', 'gemini'] as const;

let host: SshHost;

beforeAll(async () => {
  if (noSshd === null) host = await startSshHost('warrenssh-m');
}, 120_000);

afterAll(() => host?.stop());

for (const agent of AGENTS) {
  const missing = noSshd ?? unavailable(import.meta.filename, `${agent}-cli` as CapabilityName);
  describe.skipIf(missing !== null)(`${agent} in a task on another machine over SSH`, () => {
    it(
      `${agent}: new → run → --resume → checkpoint → land → rm, the agent run on the host and its note landed here`,
      { timeout: 600_000 },
      async () => {
        const server = await startModelServer();
        onTestFinished(() => server.close());
        const repo = host.hostRepo();
        // The host's user has the CLI on its PATH (the host's warren is started with it).
        hostHasAgentClis(repo);
        // The endpoint as the host's user configured it (codex: a file in its HOME there).
        const hostSide = pointAt(agent, server, host.userHome);
        if (agent === 'codex') {
          onTestFinished(() => fs.rmSync(path.join(host.userHome, '.codex'), { recursive: true, force: true }));
          fs.chmodSync(path.join(host.userHome, '.codex'), 0o755); // root made it: readable to the host's user
        }
        // Here, the CLI is not on PATH and no endpoint is configured: the agent can only have run there.
        const userHome = tmpDir(`warren-${agent}-user-`);
        const env = { HOME: userHome, CODEX_HOME: '', GEMINI_CLI_HOME: '', ...hostSide };
        const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });

        const made = await w('--json', 'new', 'feat', 'a', '--runner', 'ssh:box');
        expect(made.code, made.stderr).toBe(0);
        const ws = (JSON.parse(made.stdout) as { path: string }).path;

        const prompt = 'Write the note.';
        const run = await w('--json', 'run', 'a', '--agent', agent, '--prompt', prompt, '--timeout', '5m');
        const ran = JSON.parse(run.stdout || '{}') as {
          exitCode: number;
          log: string;
          sandbox: string;
          session: string;
        };
        expect(
          run.code,
          `${run.stderr}\n${ran.log && fs.existsSync(ran.log) ? fs.readFileSync(ran.log, 'utf8') : ''}`,
        ).toBe(0);
        expect(ran).toMatchObject({ exitCode: 0, sandbox: 'ssh:box' });
        expect(ran.session).toMatch(/^[0-9a-f-]{36}$/);
        expect(fs.readFileSync(ran.log, 'utf8')).toContain(FINAL);
        expect(server.received.map((r) => r.answer)).toEqual(expect.arrayContaining(['tools', 'final']));
        // Nothing of the agent's in the user's HOME here.
        expect(fs.readdirSync(userHome)).toEqual([]);

        // The transcript came back here: `warren transcript` reads the session.
        const transcript = await w('--json', 'transcript', 'a');
        expect(transcript.code, transcript.stderr).toBe(0);
        const conv = JSON.parse(transcript.stdout) as { file: string; items: { kind: string; text?: string }[] };
        expect(conv.file.startsWith(repo.home)).toBe(true);
        expect(conv.items.some((i) => i.kind === 'text' && (i.text ?? '').includes(FINAL))).toBe(true);

        // --resume continues the conversation the host keeps: the model sees the first prompt again.
        const seen = server.received.length;
        const resumed = await w('--json', 'run', 'a', '--resume', '--prompt', 'And now?', '--timeout', '5m');
        expect(resumed.code, resumed.stderr).toBe(0);
        const later = server.received.slice(seen).filter((r) => r.body.includes('And now?'));
        expect(later.length).toBeGreaterThan(0);
        expect(later.every((r) => r.body.includes(prompt))).toBe(true);

        // Checkpoint commits the note there and brings it here; land puts it on main; rm removes it there.
        const cp = await w('checkpoint', 'a', '-m', 'the note');
        expect(cp.code, cp.stderr).toBe(0);
        expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
        const hostWorkspace = fs.readFileSync(path.join(ws, 'ran-in.txt'), 'utf8').trim();
        expect(hostWorkspace.startsWith(host.userHome)).toBe(true);
        const landed = await w('land', 'a');
        expect(landed.code, landed.stderr).toBe(0);
        expect(repo.git('show', 'main:agent-note.txt')).toBe(NOTE.trimEnd());
        const removed = await w('rm', 'a');
        expect(removed.code, removed.stderr).toBe(0);
        expect(host.asHost(`test -e ${hostWorkspace}`).code).not.toBe(0);
      },
    );
  });
}

const noBwrap = noSshd ?? unavailable(import.meta.filename, 'bwrap') ?? unavailable(import.meta.filename, 'claude-cli');
describe.skipIf(noBwrap !== null)('an agent in a sandbox on the host over SSH', () => {
  it(
    "claude in the host's bwrap sandbox: it reaches only its model through the host's egress proxy, and its note lands here",
    { timeout: 600_000 },
    async () => {
      const server = await startModelServer();
      onTestFinished(() => server.close());
      // The task's sandbox is the repository's, made and enforced by the host's warren.
      const repo = host.hostRepo({ 'warren.yaml': `sandbox: { kind: bwrap, allow: ["127.0.0.1:${server.port}"] }\n` });
      hostHasAgentClis(repo);
      const userHome = tmpDir('warren-claude-user-');
      const env = { HOME: userHome, CLAUDE_CONFIG_DIR: '', ...pointAt('claude', server, userHome) };
      const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });
      expect((await w('trust', '--yes')).code).toBe(0);
      const made = await w('--json', 'new', 'feat', 'b', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      const run = await w('--json', 'run', 'b', '--agent', 'claude', '--prompt', 'Write the note.', '--timeout', '5m');
      const ran = JSON.parse(run.stdout || '{}') as { exitCode: number; log: string; sandbox: string };
      expect(
        run.code,
        `${run.stderr}\n${ran.log && fs.existsSync(ran.log) ? fs.readFileSync(ran.log, 'utf8') : ''}`,
      ).toBe(0);
      expect(fs.readFileSync(ran.log, 'utf8')).toContain(FINAL);
      // In the sandbox there, the machine's loopback is not the command's: a server listening on it
      // (not on the allow list) is not reached, where the same command on the host would reach it.
      let hits = 0;
      const other = net.createServer((c) => {
        hits++;
        c.end();
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => void other.close());
      const port = (other.address() as net.AddressInfo).port;
      const probe = `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('open'); process.exit(0); }).on('error', (e) => { console.log('closed ' + e.code); process.exit(0); })`;
      const boxed = await w('exec', 'b', '--', process.execPath, '-e', probe);
      expect(boxed.stdout.trim()).toBe('closed ECONNREFUSED');
      expect(hits).toBe(0);
      expect((await w('checkpoint', 'b', '-m', 'the note')).code).toBe(0);
      expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      const landed = await w('land', 'b');
      expect(landed.code, landed.stderr).toBe(0);
      expect(repo.git('show', 'main:agent-note.txt')).toBe(NOTE.trimEnd());
      expect((await w('rm', 'b')).code).toBe(0);
    },
  );
});
