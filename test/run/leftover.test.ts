import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { runAgent } from '../../src/run/operations.js';
import { listPids } from '../../src/system/proc.js';
import { createTask } from '../../src/workspace/create.js';
import { removeTask } from '../../src/workspace/remove.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * Agents that leave processes behind (issue 30 §4): an agent that gave its final result while
 * a background process it started keeps it alive is said at once and ended after its grace,
 * with what it left; and every task has a TMPDIR of its own, removed with it. The agent is a
 * stand-in that behaves as `claude -p` did with a background shell: it answers, marks its
 * final result (as Claude Code's Stop hook does), and waits on the background process.
 */

const STAND_IN = `#!/bin/sh
echo "final answer"
sleep "$SLEEP_FOR" &
echo "tmp=$TMPDIR" > "$TMPDIR/seen.txt"
# The final result is marked once the background process is a sleep (not a shell still between fork and exec).
while [ "$(cat /proc/$!/comm 2>/dev/null)" != sleep ]; do sleep 0.01; done
touch "$WARREN_AGENT_DONE"
wait
`;

/** Processes on this machine whose command line holds `token`. */
function sleepers(token: string): number[] {
  return listPids().filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token);
    } catch {
      return false;
    }
  });
}

async function project(repo: TestRepo): Promise<{ ctx: ProjectContext; lines: string[] }> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  const lines: string[] = [];
  const ctx = await openProject(repo.root, {
    store,
    reporter: { line: (l: string) => lines.push(l), output: { stdout: null, stderr: null } },
  });
  return { ctx, lines };
}

describe('agents that leave processes behind', () => {
  it(
    'an agent whose final answer leaves a background process returns within the grace, says so, and leaves nothing behind',
    { timeout: 60_000 },
    async () => {
      const bin = tmpDir('warren-leftover-bin-');
      fs.writeFileSync(path.join(bin, 'lingering-agent'), STAND_IN, { mode: 0o755 });
      // A duration no other process on the machine sleeps for: the leftover is found by its command line.
      const sleepFor = `300.${process.pid}${Date.now() % 100000}`;
      const repo = makeRepo({
        files: {
          'warren.yaml': 'agents:\n  lingering: { command: [lingering-agent], prompt: stdin, leftover_grace: 1s }\n',
        },
      });
      const before = process.env.PATH;
      process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;
      process.env.SLEEP_FOR = sleepFor;
      onTestFinished(() => {
        process.env.PATH = before;
        delete process.env.SLEEP_FOR;
      });
      const { ctx, lines } = await project(repo);
      await createTask(ctx, { type: 'feat', id: 'a' });
      const started = Date.now();
      const outcome = await runAgent(ctx, 'a', { agent: 'lingering', prompt: 'do it', timeoutMs: 60_000 });
      const took = Date.now() - started;
      // Ended after the 1 s grace (and the SIGTERM grace), far before the background sleep's 300 s.
      expect(took).toBeLessThan(15_000);
      expect(outcome).toMatchObject({ exitCode: 0, endedAfterFinal: true, timedOut: false });
      expect(outcome.reason).toBe('lingering gave its final result; the processes it left were ended after 1s');
      expect(fs.readFileSync(outcome.log, 'utf8')).toContain('final answer');
      // Said at once: an event and a line, naming the leftover.
      const said = ctx.store.eventsSince(0).find((e) => e.kind === 'agent.leftover');
      expect(said?.level).toBe('warn');
      expect(said?.message).toMatch(
        /^lingering gave its final result, but processes it left keep it running \(.*sleep.*\); warren ends them in 1s/,
      );
      expect(lines.some((l) => l.startsWith('warren: warn: lingering gave its final result'))).toBe(true);
      // It was there while the agent lingered, and nothing is left behind.
      expect(said?.kind === 'agent.leftover' && said.data.processes.some((p) => p.endsWith(' sleep'))).toBe(true);
      expect(sleepers(sleepFor)).toEqual([]);
    },
  );

  it(
    'an agent still finishing after its final result (a hook shell, its own exit) is not warned about',
    { timeout: 60_000 },
    async () => {
      const bin = tmpDir('warren-finishing-bin-');
      // As Claude Code does: its Stop hook (a shell) touches the marker, then it takes a while to exit.
      const finishing = [
        `#!${process.execPath}`,
        "const { execFileSync } = require('node:child_process');",
        "console.log('final answer');",
        "execFileSync('sh', ['-c', 'touch \"$WARREN_AGENT_DONE\"; sleep 0.3']);",
        'setTimeout(() => process.exit(0), Number(process.env.EXIT_AFTER));',
        '',
      ].join('\n');
      fs.writeFileSync(path.join(bin, 'finishing-agent'), finishing, { mode: 0o755 });
      const repo = makeRepo({
        files: {
          'warren.yaml': [
            'agents:',
            '  finishing: { command: [finishing-agent, --quiet], prompt: stdin, leftover_grace: 10s }',
            '  stuck: { command: [finishing-agent, --stuck], prompt: stdin, leftover_grace: 1s }',
            '',
          ].join('\n'),
        },
      });
      const before = process.env.PATH;
      process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;
      onTestFinished(() => {
        process.env.PATH = before;
        delete process.env.EXIT_AFTER;
      });
      const { ctx, lines } = await project(repo);
      await createTask(ctx, { type: 'feat', id: 'a' });
      // It exits on its own 3 s after its final result: nothing of it is a leftover, however long the machine takes.
      process.env.EXIT_AFTER = '3000';
      const quiet = await runAgent(ctx, 'a', { agent: 'finishing', prompt: 'do it', timeoutMs: 60_000 });
      expect(quiet).toMatchObject({ exitCode: 0, endedAfterFinal: false, reason: null, leftovers: [] });
      expect(fs.readFileSync(quiet.log, 'utf8')).toContain('final answer');
      // It does not exit at all: ended after its grace, and said so as what it is, not as leftovers.
      process.env.EXIT_AFTER = '600000';
      const stuck = await runAgent(ctx, 'a', { agent: 'stuck', prompt: 'do it', timeoutMs: 60_000 });
      expect(stuck).toMatchObject({ exitCode: 0, endedAfterFinal: true, leftovers: [] });
      expect(stuck.reason).toBe('stuck gave its final result but had not exited 1s later; warren ended it');
      expect(ctx.store.eventsSince(0).filter((e) => e.kind === 'agent.leftover')).toEqual([]);
      expect(lines.filter((l) => l.startsWith('warren: warn:'))).toEqual([]);
    },
  );

  it('every command of a task gets a TMPDIR of its own, removed with the task', { timeout: 60_000 }, async () => {
    const repo = makeRepo({
      files: {
        'warren.yaml': 'setup:\n  - { id: tmp, run: \'echo "$TMPDIR" > tmpdir.txt && touch "$TMPDIR/made"\' }\n',
      },
    });
    fs.writeFileSync(path.join(repo.root, '.git', 'info', 'exclude'), 'tmpdir.txt\n');
    const { ctx } = await project(repo);
    const a = await createTask(ctx, { type: 'feat', id: 'a' });
    const b = await createTask(ctx, { type: 'feat', id: 'b' });
    const tmpA = fs.readFileSync(path.join(a.path, 'tmpdir.txt'), 'utf8').trim();
    const tmpB = fs.readFileSync(path.join(b.path, 'tmpdir.txt'), 'utf8').trim();
    expect(tmpA).toBe(path.join(repo.home, 'logs', ctx.key, 'a', 'tmp'));
    expect(tmpB).not.toBe(tmpA);
    expect(fs.existsSync(path.join(tmpA, 'made'))).toBe(true);
    await removeTask(ctx, 'a', {});
    expect(fs.existsSync(tmpA)).toBe(false);
    expect(fs.existsSync(path.join(tmpB, 'made'))).toBe(true);
  });
});
