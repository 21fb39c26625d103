import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_CLI_BIN, unavailable } from './helpers/capabilities.js';
import { FINAL, startModelServer } from './helpers/model-server.js';
import { makeRepo, runCli, tmpDir } from './helpers/repo.js';

/**
 * The real Claude Code CLI, as in issue 30: the model starts a "dev server" in a background
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
      expect(json.reason).toBe('claude gave its final result; the processes it left were ended after 2s');
      expect(took).toBeLessThan(120_000);
      expect(sleepers(token)).toEqual([]);
    },
  );
});
