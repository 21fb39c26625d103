import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { addAuditSection } from '../../src/audit/sections.js';
import { Store } from '../../src/state/store.js';
import { openProject } from '../../src/workspace/context.js';
import { projectFleet } from '../../src/web/fleet.js';
import { taskView } from '../../src/web/task-view.js';
import { gitIn, makeRepo } from '../helpers/repo.js';

/** What the task view and the fleet read, against a real repository and database. */

describe('task view data', () => {
  it('reads drift, changes, commits, the diff, runs, setup/verify, the log source and audit sections', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'tv');
    expect(made.code, made.stderr).toBe(0);
    const wt = made.json.path;
    fs.writeFileSync(path.join(wt, 'feature.txt'), 'one\ntwo\n');
    gitIn(wt, 'add', '-A');
    gitIn(wt, 'commit', '-q', '-m', 'add feature');
    fs.writeFileSync(path.join(wt, 'draft.txt'), 'wip\n');
    repo.write('base.txt', 'moved on\n');
    repo.commit('base moves');
    repo.write('base.txt', 'moved on again\n');
    repo.commit('base moves again');

    const store = new Store(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, store);
    store.mergeData(ctx.key, 'tv', { provision: [{ path: 'node_modules', mode: 'cow', isolated: true, changed: ['x'] }], ports: { first: 20000, count: 10 } });
    store.addEvent({ project: ctx.key, taskId: 'tv', kind: 'verify.failed', level: 'warn', message: 'verify failed', data: { results: [{ id: 'unit', exitCode: 1 }] } });
    store.addEvent({ project: ctx.key, taskId: 'tv', kind: 'run.started', message: 'exec', data: { log: path.join(repo.home, 'logs', 'a.log'), runId: 'r1' } });
    store.addEvent({ project: ctx.key, taskId: 'tv', kind: 'run.ended', message: 'exec ended', data: { runId: 'r1', exitCode: 2, timedOut: false, durationMs: 40 } });

    const order: string[] = [];
    addAuditSection({ name: 'zz-broken', order: 1_000_001, collect: () => Promise.reject(new Error('section failed')) });
    addAuditSection({
      name: 'zz-test',
      order: 1_000_000,
      collect: (_ctx, task) => {
        order.push(task.id);
        return Promise.resolve({ data: null, lines: [`task ${task.id}`] });
      },
    });

    const view = await taskView(ctx, 'tv');
    expect(view.task).toMatchObject({ id: 'tv', behind: 2, ahead: 1, changes: 1, ports: { first: 20000, count: 10 } });
    expect(view.task.provision).toEqual([{ path: 'node_modules', mode: 'cow', isolated: true, changed: 1 }]);
    expect(view.task.lastRun).toMatchObject({ kind: 'run.ended', exitCode: 2, durationMs: 40, running: false });
    expect(view.commits.map((c) => c.subject)).toEqual(['add feature']);
    expect(view.diff?.files).toEqual([{ path: 'feature.txt', added: 2, deleted: 0 }]);
    // base...branch: what the branch changed, not what the base did since.
    expect(view.diff?.patch).toContain('+two');
    expect(view.diff?.patch).not.toContain('base.txt');
    expect(view.verify?.kind).toBe('verify.failed');
    expect(view.setup).toBeNull();
    expect(view.log).toEqual({ startedSeq: expect.any(Number), path: path.join(repo.home, 'logs', 'a.log'), running: false });
    expect(view.audit.slice(-2)).toEqual([
      { name: 'zz-test', lines: ['task tv'], error: null },
      { name: 'zz-broken', lines: [], error: 'section failed' },
    ]);
    expect(order).toEqual(['tv']);

    await expect(taskView(ctx, 'missing')).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    await expect(taskView(ctx, '../etc')).rejects.toMatchObject({ code: 'ID_INVALID' });

    // The fleet reads the same facts, plus the strays.
    const fleet = await projectFleet(ctx);
    expect(fleet.tasks.map((t) => [t.id, t.behind, t.changes])).toEqual([['tv', 2, 1]]);
    expect(fleet.strays).toEqual([]);
  });
});
