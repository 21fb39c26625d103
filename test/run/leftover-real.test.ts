import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pointAt, REAL_AGENTS, warrenHomeFor } from '../helpers/agent-cli.js';
import { AGENT_CLI_BIN, unavailable, type CapabilityName } from '../helpers/capabilities.js';
import { FINAL, startModelServer } from '../helpers/model-server.js';
import { makeRepo, runCli, tmpDir } from '../helpers/repo.js';

/**
 * The real agent CLIs and what they leave behind. A run that leaves nothing is not warned about
 * (issue 39: every Claude run used to be, naming claude itself, which was still finishing when
 * its Stop hook ran). And the real Claude Code CLI, as in issue 30: the model starts a "dev server" in a background
 * shell and gives its final answer; `claude -p` would then wait on the shell. warren hears the
 * final result (Claude Code's Stop hook, given with --settings), says so, and ends what was
 * left after the agent's grace.
 */

const missing = unavailable(import.meta.filename, 'claude-cli');

function sleepers(token: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token);
      } catch {
        return false;
      }
    });
}

describe.skipIf(missing !== null)('warren run --agent claude with a background process', () => {
  it(
    'returns within the grace after the final answer, says so, and leaves nothing running',
    { timeout: 300_000 },
    async () => {
      const token = `301.${process.pid}${Date.now() % 100000}`;
      const server = await startModelServer({ background: `sleep ${token}` });
      const repo = makeRepo({
        files: { 'README.md': '# main\n', 'warren.yaml': 'agents:\n  claude: { leftover_grace: 2s }\n' },
      });
      const userHome = tmpDir('warren-claude-user-');
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: userHome,
        CLAUDE_CONFIG_DIR: '',
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'scripted',
      };
      const w = (...args: string[]) => runCli(args, { cwd: repo.root, home: repo.home, env });
      expect((await w('new', 'feat', 'dev')).code).toBe(0);
      const started = Date.now();
      const run = await w(
        '--json',
        'run',
        'dev',
        '--agent',
        'claude',
        '--prompt',
        'start the dev server',
        '--timeout',
        '4m',
      );
      const took = Date.now() - started;
      const json = JSON.parse(run.stdout) as { exitCode: number; log: string; reason: string | null };
      expect(json.exitCode, `${run.stderr}\n${fs.readFileSync(json.log, 'utf8')}`).toBe(0);
      expect(fs.readFileSync(json.log, 'utf8')).toContain(FINAL);
      expect(run.stderr).toMatch(/warren: warn: claude gave its final result, but processes it left keep it running/);
      // It names what claude left (the background shell and its sleep), never claude or the run's init.
      const named = /keep it running \(([^)]*)\)/.exec(run.stderr)?.[1] ?? '';
      expect(named).toMatch(/\d+ sleep/);
      expect(named).not.toMatch(/\d+ (claude|sh)\b/);
      expect(json.reason).toBe('claude gave its final result; the processes it left were ended after 2s');
      expect(took).toBeLessThan(120_000);
      expect(sleepers(token)).toEqual([]);
    },
  );
});

for (const agent of REAL_AGENTS) {
  const missing = unavailable(import.meta.filename, `${agent}-cli` as CapabilityName);
  describe.skipIf(missing !== null)(`warren run --agent ${agent} that leaves nothing`, () => {
    it(
      'says nothing about leftovers: no agent.leftover event, no warren line on stderr',
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
        const w = (...args: string[]) => runCli(args, { cwd: repo.root, home, env });
        expect((await w('new', 'feat', 'quiet')).code).toBe(0);
        // Three runs: the false alarm came with every Claude run, but a race is best given more than one chance.
        for (let i = 0; i < 3; i++) {
          const run = await w('--json', 'run', 'quiet', '--agent', agent, '--prompt', `run ${i}`, '--timeout', '4m');
          const json = JSON.parse(run.stdout) as { exitCode: number; log: string; reason: string | null };
          expect(json.exitCode, `${run.stderr}\n${fs.readFileSync(json.log, 'utf8')}`).toBe(0);
          expect(fs.readFileSync(json.log, 'utf8')).toContain(FINAL);
          expect(json.reason).toBeNull();
          // stderr carries the agent's own output (the run's, echoed); nothing of warren's.
          expect(run.stderr.split('\n').filter((l) => l.startsWith('warren:'))).toEqual([]);
        }
        const db = new Database(path.join(home, 'state.db'), { readonly: true });
        const kinds = db.prepare("SELECT kind, message FROM events WHERE task_id = 'quiet'").all() as {
          kind: string;
          message: string;
        }[];
        db.close();
        expect(kinds.filter((e) => e.kind === 'agent.leftover')).toEqual([]);
        expect(kinds.filter((e) => e.kind === 'run.ended')).toHaveLength(3);
      },
    );
  });
}
