import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLI_BIN, unavailable, type CapabilityName } from './helpers/capabilities.js';
import { pointAt, REAL_AGENTS, warrenHomeFor } from './helpers/agent-cli.js';
import { COMMAND, FINAL, NOTE, startModelServer } from './helpers/model-server.js';
import { makeRepo, runCli, tmpDir, type CliResult } from './helpers/repo.js';

/**
 * The real agent CLIs (test/agent-clis, pinned; .ci/run installs them) run by `warren run`
 * against a scripted model server on 127.0.0.1 (helpers/model-server.ts). The server plays one
 * turn through each CLI's own tools: write `agent-note.txt`, run `pwd > ran-in.txt`, finish.
 * Then `warren run --resume` continues the same conversation.
 */

/** Every path under `dir` with its content (files) — `.git` left out where named. */
function listFiles(dir: string, skip: readonly string[] = []): string[] {
  const out: string[] = [];
  const visit = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (skip.includes(name)) continue;
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) visit(r);
      else out.push(st.isFile() ? `${r}: ${fs.readFileSync(path.join(dir, r), 'utf8')}` : r);
    }
  };
  visit('');
  return out;
}

interface RunJson {
  exitCode: number;
  log: string;
  runId: string;
  agent: string;
  session: string | null;
  reason: string | null;
}

for (const agent of REAL_AGENTS) {
  const missing = unavailable(import.meta.filename, `${agent}-cli` as CapabilityName);
  describe.skipIf(missing !== null)(`warren run --agent ${agent}: the real CLI against a scripted model server`, () => {
    it(
      'edits and runs its command in the task workspace only; warren records log, exit code and session; --resume continues it',
      { timeout: 300_000 },
      async () => {
        const server = await startModelServer();
        const repo = makeRepo({ files: { 'README.md': '# main\n' } });
        const userHome = tmpDir(`warren-${agent}-user-`);
        const env = {
          PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
          HOME: userHome,
          CLAUDE_CONFIG_DIR: '',
          CODEX_HOME: '',
          GEMINI_CLI_HOME: '',
          ...pointAt(agent, server, userHome),
        };
        const home = warrenHomeFor(agent, repo.home);
        const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home, env });
        const json = async <T>(...args: string[]): Promise<{ code: number; json: T; stderr: string }> => {
          const r = await w('--json', ...args);
          return { code: r.code, json: JSON.parse(r.stdout) as T, stderr: r.stderr };
        };

        const a = await json<{ path: string }>('new', 'feat', 'a1');
        const b = await json<{ path: string }>('new', 'feat', 'b1');
        expect(a.code, a.stderr).toBe(0);
        const before = {
          user: listFiles(userHome),
          main: listFiles(repo.root, ['.git']),
          other: listFiles(b.json.path, ['.git']),
        };

        const prompt = 'Write the note, then record where you are.';
        const run = await json<RunJson>('run', 'a1', '--agent', agent, '--prompt', prompt, '--timeout', '4m');
        expect(run.code, `${run.stderr}\n${fs.readFileSync(run.json.log, 'utf8')}`).toBe(0);

        // The edit and the command happened in a1's workspace, and nowhere else.
        expect(fs.readFileSync(path.join(a.json.path, 'agent-note.txt'), 'utf8')).toBe(NOTE);
        expect(fs.readFileSync(path.join(a.json.path, 'ran-in.txt'), 'utf8')).toBe(`${a.json.path}\n`);
        expect(listFiles(repo.root, ['.git'])).toEqual(before.main);
        expect(listFiles(b.json.path, ['.git'])).toEqual(before.other);
        // Nothing in the user's HOME: the CLI's state went to the task's own folder.
        expect(listFiles(userHome)).toEqual(before.user);
        expect(server.received.map((r) => r.answer)).toEqual(expect.arrayContaining(['tools', 'final']));

        // warren's record: the log (with the agent's final words), the exit code, the session.
        expect(fs.readFileSync(run.json.log, 'utf8')).toContain(FINAL);
        const db = new Database(path.join(home, 'state.db'), { readonly: true });
        const row = db
          .prepare('SELECT kind, label, exit_code, log_path FROM runs WHERE id = ?')
          .get(run.json.runId) as Record<string, unknown>;
        expect(row).toEqual({ kind: 'agent', label: agent, exit_code: 0, log_path: run.json.log });
        const sessionEvents = db
          .prepare("SELECT data FROM events WHERE kind = 'agent.session' AND task_id = 'a1'")
          .all() as { data: string }[];
        db.close();
        expect(run.json.session).toMatch(/^[0-9a-f-]{36}$/);
        expect(sessionEvents.map((e) => (JSON.parse(e.data) as { session: string }).session)).toEqual([
          run.json.session,
        ]);

        // --resume: the same conversation, so the model sees the first prompt again.
        const seen = server.received.length;
        const resumed = await json<RunJson>('run', 'a1', '--resume', '--prompt', 'And now?', '--timeout', '4m');
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.json.agent).toBe(agent);
        const later = server.received.slice(seen).filter((r) => r.body.includes('And now?'));
        expect(later.length).toBeGreaterThan(0);
        expect(later.every((r) => r.body.includes(prompt) && r.body.includes(COMMAND))).toBe(true);
        // claude and gemini keep the id warren gave; codex writes the continuation under a new one.
        if (agent !== 'codex') expect(resumed.json.session).toBe(run.json.session);
        else expect(resumed.json.session).toMatch(/^[0-9a-f-]{36}$/);

        // --resume with no prompt, as the README shows it: the same conversation, one more turn.
        const again = server.received.length;
        const bare = await w('run', 'a1', '--resume', '--timeout', '4m');
        expect(bare.code, bare.stderr).toBe(0);
        expect(bare.stderr).toContain('continuing the conversation with "continue"');
        const continued = server.received.slice(again).filter((r) => r.body.includes('And now?'));
        expect(continued.length).toBeGreaterThan(0);
      },
    );
  });
}

describe('warren run --resume refuses what it cannot continue', () => {
  it('no conversation yet, an agent that keeps none, and no --agent without --resume', async () => {
    const repo = makeRepo({
      files: { 'README.md': '# t\n', 'warren.yaml': 'agents:\n  echo-agent: { command: [cat], prompt: stdin }\n' },
    });
    expect((await repo.warren('new', 'feat', 'r1')).code).toBe(0);
    const none = await repo.warrenJson<{ error: { code: string; hint: string } }>(
      'run',
      'r1',
      '--resume',
      '--prompt',
      'x',
    );
    expect(none.code).toBe(1);
    expect(none.json.error.code).toBe('AGENT_NO_SESSION');
    // No prompt with --resume is a "continue" turn, so the refusal is the missing conversation.
    const bare = await repo.warrenJson<{ error: { code: string } }>('run', 'r1', '--resume');
    expect(bare.code).toBe(1);
    expect(bare.json.error.code).toBe('AGENT_NO_SESSION');
    const plain = await repo.warrenJson<{ error: { code: string } }>(
      'run',
      'r1',
      '--resume',
      '--agent',
      'echo-agent',
      '--prompt',
      'x',
    );
    expect(plain.json.error.code).toBe('AGENT_NO_SESSION');
    expect((await repo.warrenJson('run', 'r1', '--prompt', 'x')).code).toBe(2);
    const echoed = await repo.warrenJson<{ session: string | null; agent: string }>(
      'run',
      'r1',
      '--agent',
      'echo-agent',
      '--prompt',
      'x',
    );
    expect(echoed.json).toMatchObject({ session: null, agent: 'echo-agent' });
    // --mcp in a sandboxed task: warren's state is not visible there, so it is refused before anything runs.
    expect((await repo.warren('new', 'feat', 'boxed', '--sandbox', 'bwrap')).code).toBe(0);
    const boxed = await repo.warrenJson<{ error: { code: string; message: string } }>(
      'run',
      'boxed',
      '--agent',
      'claude',
      '--mcp',
      '--prompt',
      'x',
    );
    expect(boxed.code).toBe(2);
    expect(boxed.json.error.message).toMatch(/runs in a sandbox, where warren's state .* is not visible/);
  });
});

describe.skipIf(unavailable(import.meta.filename, 'claude-cli') !== null)(
  "warren run --mcp: the real claude gets warren's MCP server for its task",
  () => {
    it("offers the model warren's tools with --mcp, and none without", { timeout: 300_000 }, async () => {
      const server = await startModelServer();
      const repo = makeRepo({ files: { 'README.md': '# main\n' } });
      const userHome = tmpDir('warren-claude-mcp-user-');
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: userHome,
        CLAUDE_CONFIG_DIR: '',
        ...pointAt('claude', server, userHome),
      };
      const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });
      expect((await w('new', 'feat', 'm1')).code).toBe(0);
      const plain = await w('run', 'm1', '--agent', 'claude', '--prompt', 'hi', '--timeout', '4m');
      expect(plain.code, plain.stderr).toBe(0);
      const offered = (from: number) =>
        // Claude Code lists MCP tools to the model as deferred tools, by name.
        server.received.slice(from).filter((r) => r.body.includes('mcp__warren__diff')).length;
      expect(offered(0)).toBe(0);
      const seen = server.received.length;
      const run = await w('run', 'm1', '--agent', 'claude', '--mcp', '--prompt', 'hi', '--timeout', '4m');
      expect(run.code, run.stderr).toBe(0);
      expect(offered(seen)).toBeGreaterThan(0);
    });
  },
);
