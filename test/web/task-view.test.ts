import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LIFECYCLE, openProject } from '../../src/composition.js';
import { openStore } from '../../src/composition.js';
import { projectDetails, projectFleet } from '../../src/web/fleet.js';
import { taskView } from '../../src/web/task-view.js';
import type { AuditSection } from '../../src/workspace/types.js';
import { gitIn, makeRepo } from '../helpers/repo.js';

/** What the task view and the fleet read, against a real repository and database. */

describe('task view data', () => {
  it('reads drift, changes, commits, the diff, runs, setup/verify, the log source and audit sections', async () => {
    const repo = makeRepo({
      files: { '.gitignore': 'cache/\n', 'warren.yaml': 'provision:\n  - { path: cache, mode: copy }\n' },
    });
    repo.write('cache/a.txt', 'cached\n');
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'tv');
    expect(made.code, made.stderr).toBe(0);
    const wt = made.json.path;
    fs.writeFileSync(path.join(wt, 'feature.txt'), 'one\ntwo\n');
    gitIn(wt, 'add', '-A');
    gitIn(wt, 'commit', '-q', '-m', 'add feature');
    fs.writeFileSync(path.join(wt, 'draft.txt'), 'wip\n');
    // A change inside the provisioned copy: the fleet counts it as `warren status` does.
    fs.writeFileSync(path.join(wt, 'cache', 'a.txt'), 'changed in the task\n');
    repo.write('base.txt', 'moved on\n');
    repo.commit('base moves');
    repo.write('base.txt', 'moved on again\n');
    repo.commit('base moves again');

    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    const log = path.join(repo.home, 'logs', 'a.log');
    store.addEvent({
      project: ctx.key,
      taskId: 'tv',
      kind: 'verify.failed',
      level: 'warn',
      message: 'verify failed',
      data: {
        log,
        results: [{ id: 'unit', exitCode: 1, timedOut: false, required: true, durationMs: 5, reason: null }],
      },
    });
    store.addEvent({
      project: ctx.key,
      taskId: 'tv',
      kind: 'run.started',
      message: 'exec',
      data: { runId: 'r1', kind: 'exec', log, command: ['make'] },
    });
    store.addEvent({
      project: ctx.key,
      taskId: 'tv',
      kind: 'run.ended',
      message: 'exec ended',
      data: {
        runId: 'r1',
        kind: 'exec',
        exitCode: 2,
        signal: null,
        timedOut: false,
        durationMs: 40,
        log,
        survivors: [],
      },
    });

    const order: string[] = [];
    const tested: AuditSection = {
      name: 'zz-test',
      collect: (_ctx, task) => {
        order.push(task.id);
        return Promise.resolve({ data: null, lines: [`task ${task.id}`] });
      },
    };
    const broken: AuditSection = { name: 'zz-broken', collect: () => Promise.reject(new Error('section failed')) };
    ctx.lifecycle = { ...LIFECYCLE, audit: [...LIFECYCLE.audit, tested, broken] };

    const view = await taskView(ctx, 'tv');
    expect(view.task).toMatchObject({ id: 'tv', behind: 2, ahead: 1, changes: 1 });
    expect(view.task.ports).toMatchObject({ count: 10 });
    expect(view.task.provision).toEqual([{ path: 'cache', mode: 'copy', isolated: true, changed: 1 }]);
    expect(view.task.lastRun).toMatchObject({
      kind: 'exec',
      exitCode: 2,
      durationMs: 40,
      running: false,
      command: 'make',
    });
    expect(view.commits).toEqual({ ok: true, value: [expect.objectContaining({ subject: 'add feature' })] });
    if (!view.diff.ok) throw new Error(`no diff: ${JSON.stringify(view.diff)}`);
    // What the task changed since it left the base, uncommitted and untracked work included;
    // not what the base did since, nor the provisioned copy.
    expect(view.diff.value.files.map((f) => [f.status, f.path, f.added, f.deleted])).toEqual([
      ['added', 'draft.txt', 1, 0],
      ['added', 'feature.txt', 2, 0],
    ]);
    expect(view.diff.value.files[1]?.patch).toContain('+two');
    expect(view.diff.value.files.some((f) => f.patch?.includes('base.txt') || f.path.startsWith('cache'))).toBe(false);
    expect(view.verify?.kind).toBe('verify.failed');
    expect(view.setup).toBeNull();
    expect(view.log).toEqual({ startedSeq: expect.any(Number), path: log, running: false });
    expect(view.audit.slice(-2)).toEqual([
      { name: 'zz-test', lines: ['task tv'], error: null },
      { name: 'zz-broken', lines: [], error: 'section failed' },
    ]);
    expect(order).toEqual(['tv']);

    await expect(taskView(ctx, 'missing')).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    await expect(taskView(ctx, '../etc')).rejects.toMatchObject({ code: 'ID_INVALID' });

    // The fleet reads the record at once, and the same facts in its details, plus the strays.
    const fleet = projectFleet(ctx);
    expect(fleet.tasks.map((t) => [t.id, t.shownState, t.lastRun?.exitCode])).toEqual([['tv', 'ready', 2]]);
    const details = await projectDetails(ctx);
    expect(details.tasks.map((t) => [t.id, t.behind, t.ahead, t.changes, t.provision[0]?.changed])).toEqual([
      ['tv', 2, 1, 1, 1],
    ]);
    expect(details.strays).toEqual([]);
    // Drift is counted once per pair of commits: asked again, the same answer.
    expect((await projectDetails(ctx)).tasks[0]).toMatchObject({ behind: 2, ahead: 1 });
  });

  it('says when the commits cannot be read, instead of showing none', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'gone');
    expect(made.code, made.stderr).toBe(0);
    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    // The branch ref points at an object that does not exist: git cannot walk it.
    fs.writeFileSync(path.join(repo.root, '.git', 'refs', 'heads', 'feat', 'gone'), `${'1'.repeat(40)}\n`);
    const view = await taskView(ctx, 'gone');
    expect(view.commits.ok).toBe(false);
  });
});
