import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AGENT_CLI_BIN, unavailable } from '../helpers/capabilities.js';
import { pointAt } from '../helpers/agent-cli.js';
import { NOTE, startModelServer } from '../helpers/model-server.js';
import { makeRepo, runCli, tmpDir, type CliResult } from '../helpers/repo.js';

/**
 * A real agent CLI (claude, test/agent-clis) in a `sandbox: container` task, against the scripted
 * model server on the host's loopback, reached through the task's allow list (`127.0.0.1:PORT`,
 * carried by warren's egress bridge into the container's own loopback): the whole life of a task,
 * new → run → checkpoint → land → rm, with its container made at the first command and gone at
 * the end.
 */
const skip = unavailable(import.meta.filename, 'podman') ?? unavailable(import.meta.filename, 'claude-cli');

describe.skipIf(skip !== null)('a real agent CLI in a container task', () => {
  it(
    'claude: new → run → checkpoint → land → rm, the edit made in the container and landed',
    { timeout: 600_000 },
    async () => {
      const server = await startModelServer();
      onTestFinished(() => server.close());
      const repo = makeRepo({
        files: {
          'README.md': '# main\n',
          'warren.yaml': `sandbox: { kind: container, allow: ["127.0.0.1:${server.port}"] }\n`,
        },
      });
      const userHome = tmpDir('warren-claude-user-');
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: userHome,
        CLAUDE_CONFIG_DIR: '',
        ...pointAt('claude', server, userHome),
      };
      const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });
      const made = await w('--json', 'new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      onTestFinished(() => {
        spawnSync('podman', ['rm', '-f', '-t', '0', '--filter', `label=warren.home=${repo.home}`]);
      });

      const run = await w('--json', 'run', 'a', '--agent', 'claude', '--prompt', 'Write the note.', '--timeout', '5m');
      const ran = JSON.parse(run.stdout) as { exitCode: number; log: string };
      expect(run.code, `${run.stderr}\n${fs.existsSync(ran.log) ? fs.readFileSync(ran.log, 'utf8') : ''}`).toBe(0);
      // The model's edit and command, made inside the container, in the workspace at its own path.
      expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      expect(fs.readFileSync(path.join(ws, 'ran-in.txt'), 'utf8')).toBe(`${ws}\n`);
      const containers = spawnSync(
        'podman',
        ['ps', '--filter', `label=warren.home=${repo.home}`, '--format', '{{.Names}}'],
        {
          encoding: 'utf8',
        },
      ).stdout.trim();
      expect(containers.split('\n').filter(Boolean)).toHaveLength(1);

      expect((await w('checkpoint', 'a', '-m', 'the note')).code).toBe(0);
      const landed = await w('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(repo.git('show', 'main:agent-note.txt')).toBe(NOTE.trimEnd());
      const removed = await w('rm', 'a');
      expect(removed.code, removed.stderr).toBe(0);
      const left = spawnSync(
        'podman',
        ['ps', '-a', '--filter', `label=warren.home=${repo.home}`, '--format', '{{.Names}}'],
        {
          encoding: 'utf8',
        },
      ).stdout.trim();
      expect(left).toBe('');
    },
  );
});
