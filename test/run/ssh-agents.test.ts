import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { pointAt } from '../helpers/agent-cli.js';
import { FINAL, NOTE, startModelServer } from '../helpers/model-server.js';
import { BIN, runCli, tmpDir, type CliResult } from '../helpers/repo.js';
import { hostHasAgentClis, startSshHost, type SshHost } from '../helpers/ssh-host.js';

/**
 * A real agent CLI (claude, test/agent-clis) in a task on another machine (`--runner ssh:box`:
 * a second local user behind sshd on loopback, its own WARREN_HOME), against the scripted model
 * server on this machine's loopback, which the host's user reaches too. The agent runs there,
 * through the host's runner, with its state folder there; its run, its transcript and its
 * commits come back here: new → run → checkpoint → land → rm.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');
const noClaude = noSshd ?? unavailable(import.meta.filename, 'claude-cli');

let host: SshHost;

beforeAll(async () => {
  if (noSshd === null) host = await startSshHost('warrenssh-a');
}, 120_000);

afterAll(() => host?.stop());

describe.skipIf(noSshd !== null)('a task on another machine: its workspace there in status and diff', () => {
  it(
    "status and diff show the host's uncommitted work, untracked files included, and move nothing here",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'w', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const ran = await repo.warren(
        'exec',
        'w',
        '--',
        'sh',
        '-c',
        'echo one > one.txt && git add one.txt && git commit -qm one && echo two > two.txt && echo more >> README.md',
      );
      expect(ran.code, ran.stderr).toBe(0);

      const status = await repo.warrenJson<{ tracked: { code: string; path: string }[] }>('status', 'w');
      expect(status.code, status.stderr).toBe(0);
      expect(status.json.tracked).toEqual(
        expect.arrayContaining([
          { code: ' M', path: 'README.md' },
          { code: '??', path: 'two.txt' },
        ]),
      );
      expect(status.json.tracked).toHaveLength(2);

      type Diff = { files: { path: string }[]; patch?: string };
      const paths = (d: Diff) => d.files.map((f) => f.path).sort();
      const all = await repo.warrenJson<Diff>('diff', 'w');
      expect(all.code, all.stderr).toBe(0);
      expect(paths(all.json)).toEqual(['README.md', 'one.txt', 'two.txt']);
      expect(all.json.patch).toContain('+more');
      const uncommitted = await repo.warrenJson<Diff>('diff', 'w', '--uncommitted', '--stat');
      expect(paths(uncommitted.json)).toEqual(['README.md', 'two.txt']);
      const committed = await repo.warrenJson<Diff>('diff', 'w', '--committed', '--stat');
      expect(paths(committed.json)).toEqual(['one.txt']);

      // Nothing moved here: the workspace here has the commit only, and no ref is left behind.
      expect(fs.existsSync(path.join(made.json.path, 'one.txt'))).toBe(true);
      expect(fs.existsSync(path.join(made.json.path, 'two.txt'))).toBe(false);
      expect(repo.git('for-each-ref', 'refs/warren/remote-worktree')).toBe('');

      // Committed there, it is what the branch has here; nothing is left uncommitted.
      expect((await repo.warren('checkpoint', 'w', '-m', 'two')).code).toBe(0);
      const after = await repo.warrenJson<Diff>('diff', 'w', '--uncommitted', '--stat');
      expect(after.json.files).toEqual([]);
      expect((await repo.warrenJson<{ tracked: unknown[] }>('status', 'w')).json.tracked).toEqual([]);
      expect((await repo.warren('rm', 'w', '--discard')).code).toBe(0);
    },
  );
});

describe.skipIf(noClaude !== null)('a real agent CLI in a task on another machine over SSH', () => {
  it(
    'claude: new → run → checkpoint → land → rm, the agent run on the host and its note landed here',
    { timeout: 600_000 },
    async () => {
      const server = await startModelServer();
      onTestFinished(() => server.close());
      const repo = host.hostRepo();
      // The host's user has the CLI on its PATH (the host's warren is started with it).
      hostHasAgentClis(repo);
      expect(fs.readFileSync(path.join(repo.home, 'config.yaml'), 'utf8')).toContain(JSON.stringify(BIN));
      // Here, the CLI is not on PATH: the agent can only have run there.
      const userHome = tmpDir('warren-claude-user-');
      const env = { HOME: userHome, CLAUDE_CONFIG_DIR: '', ...pointAt('claude', server, userHome) };
      const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });

      const made = await w('--json', 'new', 'feat', 'a', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;

      const run = await w('--json', 'run', 'a', '--agent', 'claude', '--prompt', 'Write the note.', '--timeout', '5m');
      const ran = JSON.parse(run.stdout || '{}') as {
        exitCode: number;
        log: string;
        sandbox: string;
        agent: string;
        session: string;
      };
      expect(
        run.code,
        `${run.stderr}\n${ran.log && fs.existsSync(ran.log) ? fs.readFileSync(ran.log, 'utf8') : ''}`,
      ).toBe(0);
      expect(ran).toMatchObject({ exitCode: 0, sandbox: 'ssh:box', agent: 'claude' });
      expect(ran.session).toMatch(/^[0-9a-f-]{36}$/);
      // Its result is in the run's log here, as a local run's.
      expect(fs.readFileSync(ran.log, 'utf8')).toContain(FINAL);
      // It ran in the host's workspace, with its state folder in the host's WARREN_HOME.
      const hostStates = host.asHost(`ls -d ${host.remoteHome(repo)}/logs/*/a/agents/claude/projects`);
      expect(hostStates.code, hostStates.out).toBe(0);

      // Uncommitted there, shown here.
      const diff = await w('--json', 'diff', 'a', '--stat');
      expect((JSON.parse(diff.stdout) as { files: { path: string }[] }).files.map((f) => f.path)).toContain(
        'agent-note.txt',
      );
      // Checkpoint commits it there and brings it here.
      const cp = await w('checkpoint', 'a', '-m', 'the note');
      expect(cp.code, cp.stderr).toBe(0);
      expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      const hostWorkspace = fs.readFileSync(path.join(ws, 'ran-in.txt'), 'utf8').trim();
      expect(hostWorkspace.startsWith(host.userHome)).toBe(true);

      // The transcript came back into the task's state folder here: `warren transcript` reads it.
      const transcript = await w('--json', 'transcript', 'a');
      expect(transcript.code, transcript.stderr).toBe(0);
      const conv = JSON.parse(transcript.stdout) as { file: string; items: { kind: string; text?: string }[] };
      expect(conv.file.startsWith(repo.home)).toBe(true);
      expect(conv.items.some((i) => i.kind === 'text' && i.text === FINAL)).toBe(true);

      // --resume continues the conversation the host keeps: the model sees the first prompt again.
      const seen = server.received.length;
      const resumed = await w('--json', 'run', 'a', '--resume', '--prompt', 'And now?', '--timeout', '5m');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((JSON.parse(resumed.stdout) as { session: string }).session).toBe(ran.session);
      const later = server.received.slice(seen).filter((r) => r.body.includes('And now?'));
      expect(later.length).toBeGreaterThan(0);
      expect(later.every((r) => r.body.includes('Write the note.'))).toBe(true);
      expect((await w('checkpoint', 'a', '-m', 'again')).code).toBe(0);

      const landed = await w('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(repo.git('show', 'main:agent-note.txt')).toBe(NOTE.trimEnd());

      expect(host.asHost(`test -d ${hostWorkspace}`).code).toBe(0);
      const removed = await w('rm', 'a');
      expect(removed.code, removed.stderr).toBe(0);
      expect(host.asHost(`test -e ${hostWorkspace}`).code).not.toBe(0);
      expect(host.hostTip(repo, 'feat/a')).toBe('');
    },
  );
});
