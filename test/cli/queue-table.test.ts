import { describe, expect, it, onTestFinished } from 'vitest';
import { queueTable } from '../../src/cli/commands/queue.js';
import { firstLine } from '../../src/cli/format.js';
import { openProject, openStore } from '../../src/composition.js';
import { bounce } from '../../src/queue/chain.js';
import { enqueue } from '../../src/queue/store.js';
import { WarrenError } from '../../src/errors.js';
import { createTask } from '../../src/workspace/create.js';
import { makeRepo } from '../helpers/repo.js';

/**
 * `warren queue` stays a table, one row per entry, whatever a bounce's reason holds (issue 39:
 * a stack trace made it one flattened paragraph): the first line, a pointer to the rest, and the
 * gate's log below the table; `--json` keeps every reason whole.
 */

const STACK = [
  "TypeError: Cannot read properties of undefined (reading 'tree')",
  '    at integrate (file:///usr/lib/node_modules/warren/dist/queue/advance.js:88:31)',
  '    at async processBatch (file:///usr/lib/node_modules/warren/dist/queue/processor.js:120:9)',
  '    at async workQueue (file:///usr/lib/node_modules/warren/dist/queue/operations.js:201:5)',
].join('\n');

describe('warren queue with a bounce whose reason is a stack trace', () => {
  it('keeps one row per entry, cut to the first line with a pointer; the log below; --json whole', async () => {
    const repo = makeRepo();
    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    for (const id of ['crash', 'gate']) await createTask(ctx, { type: 'feat', id });
    const crash = enqueue(store, ctx.key, 'crash', {}).entry;
    const gate = enqueue(store, ctx.key, 'gate', {}).entry;
    // Through the queue's own bounce: a bug's error, as the issue saw it, and a gate that failed.
    bounce(ctx, crash, new Error(STACK), null);
    bounce(
      ctx,
      gate,
      new WarrenError('GATE_FAILED', 'the gate failed on gate integrated onto 1234567890ab: test (exit 1)'),
      '/home/u/.warren/logs/gate-verify.log',
    );

    const shown = await repo.warren('queue');
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^POS\s+ID\s+STATE\s+SINCE\s+DETAIL$/);
    expect(lines[1]).toMatch(
      /^-\s+crash\s+bounced\s+\d+s ago\s+INTERNAL: TypeError: Cannot read properties of undefined \(reading 'tree'\) \[more: warren show crash\]$/,
    );
    expect(lines[2]).toMatch(
      /^-\s+gate\s+bounced\s+\d+s ago\s+GATE_FAILED: the gate failed on gate integrated onto 1234567890ab: test \(exit 1\)$/,
    );
    expect(lines.slice(3)).toEqual(['', "gate: the gate's log is /home/u/.warren/logs/gate-verify.log"]);
    expect(shown.stdout).not.toContain('at integrate');
    expect(shown.stdout).not.toContain('\\n');

    const json = await repo.warrenJson<{ id: string; reason: string }[]>('queue');
    expect(json.json.find((e) => e.id === 'crash')?.reason).toBe(STACK);
    // The pointer leads to it: `show` has the whole reason in the bounce's event.
    const show = await repo.warrenJson<{ events: { kind: string; reason?: string }[] }>('show', 'crash');
    expect(show.json.events.find((e) => e.kind === 'land.bounced')?.reason).toBe(STACK);
  });
});

describe('queueTable and firstLine, on plain data', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  const entry = {
    entry: 1,
    position: null,
    since: '2026-12-06T11:59:00Z',
    commit: null,
    gateTask: null,
    log: null,
    onTopOf: null,
  };

  it('cuts a long first line and says more is left; leaves a short single line whole', () => {
    expect(firstLine('\n\n  boom\n  at x', 80)).toEqual({ line: '  boom', cut: true });
    expect(firstLine('one line\n\n', 80)).toEqual({ line: 'one line', cut: false });
    expect(firstLine('x'.repeat(10), 5)).toEqual({ line: 'xxxx…', cut: true });
    expect(firstLine('', 5)).toEqual({ line: '', cut: false });
  });

  it('has one row per entry and nothing below when there is no log', () => {
    const table = queueTable(
      [
        { ...entry, id: 'a', state: 'bounced', code: 'INTERNAL', reason: STACK },
        { ...entry, id: 'b', state: 'landed', code: null, reason: null, commit: 'abcdef0123456789' },
        { ...entry, id: 'c', state: 'queued', code: null, reason: null, position: 1 },
        { ...entry, id: 'd', state: 'testing', code: null, reason: null, position: 2, onTopOf: ['b', 'c'] },
      ],
      now,
    );
    expect(table.split('\n')).toEqual([
      'POS  ID  STATE    SINCE   DETAIL',
      "-    a   bounced  1m ago  INTERNAL: TypeError: Cannot read properties of undefined (reading 'tree') [more: warren show a]",
      '-    b   landed   1m ago  abcdef012345',
      '1    c   queued   1m ago',
      '2    d   testing  1m ago  ahead: on top of b + c',
    ]);
  });
});
