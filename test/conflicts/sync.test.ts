import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * `warren sync`: the base's new commits brought into a task, through the command line, on real
 * repositories; a conflict rolled back, or kept and handed to an agent that resolves it.
 */

const LINES = (mid: string): string => ['a', 'b', mid, 'd', 'e', 'f', 'g', 'h', ''].join('\n');

async function ok(repo: TestRepo, ...args: string[]): Promise<string> {
  const r = await repo.warren(...args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
  return r.stdout;
}

async function taskEditing(repo: TestRepo, id: string, content: string): Promise<string> {
  await ok(repo, 'new', 'feat', id);
  const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
  fs.writeFileSync(path.join(ws, 'f.txt'), content);
  await ok(repo, 'checkpoint', id, '-m', `${id}'s work`);
  return ws;
}

const state = (repo: TestRepo, ws: string): string =>
  [
    repo.git('rev-parse', 'feat/t'),
    repo.git('-C', ws, 'status', '--porcelain'),
    fs.readFileSync(path.join(ws, 'f.txt'), 'utf8'),
  ].join('\n');

describe('warren sync', () => {
  it("a clean rebase: the base's commit under the task's own; again, nothing to do", async () => {
    const repo = makeRepo({ files: { 'f.txt': LINES('c') } });
    const ws = await taskEditing(repo, 't', LINES('C'));
    repo.write('other.txt', 'new on main\n');
    const main = repo.commit('main moves');
    const r = await repo.warrenJson<{ state: string; how: string; to: string }>('sync', 't');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ state: 'synced', how: 'rebase' });
    expect(repo.git('rev-parse', 'feat/t~1')).toBe(main);
    expect(fs.readFileSync(path.join(ws, 'other.txt'), 'utf8')).toBe('new on main\n');
    expect(repo.git('log', '-1', '--format=%s', 'feat/t')).toBe("t's work");
    expect((await repo.warrenJson<{ state: string }>('sync', 't')).json.state).toBe('up-to-date');
  });

  it('refuses uncommitted work, changing nothing, and --checkpoint commits it first', async () => {
    const repo = makeRepo({ files: { 'f.txt': LINES('c') } });
    const ws = await taskEditing(repo, 't', LINES('C'));
    repo.write('other.txt', 'x\n');
    repo.commit('main moves');
    fs.writeFileSync(path.join(ws, 'wip.txt'), 'not committed\n');
    const before = state(repo, ws);
    const refused = await repo.warrenJson<{ error: { code: string; message: string } }>('sync', 't');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('WORKSPACE_DIRTY');
    expect(state(repo, ws)).toBe(before);
    const r = await repo.warrenJson<{ state: string; checkpoint: string }>('sync', 't', '--checkpoint', '--merge');
    expect(r.json).toMatchObject({ state: 'synced', how: 'merge' });
    expect(fs.readFileSync(path.join(ws, 'wip.txt'), 'utf8')).toBe('not committed\n');
    expect(repo.git('-C', ws, 'status', '--porcelain')).toBe('');
  });

  it('a conflict is rolled back whole: branch, index and files as they were, the paths named', async () => {
    const repo = makeRepo({ files: { 'f.txt': LINES('c') } });
    const ws = await taskEditing(repo, 't', LINES('task'));
    repo.write('f.txt', LINES('main'));
    repo.commit('main edits the same line');
    const before = state(repo, ws);
    for (const how of ['--rebase', '--merge']) {
      const r = await repo.warrenJson<{ error: { code: string; details: { paths: string[] } } }>('sync', 't', how);
      expect(r.code).toBe(1);
      expect(r.json.error.code).toBe('SYNC_CONFLICT');
      expect(r.json.error.details.paths).toEqual(['f.txt']);
      expect(state(repo, ws)).toBe(before);
    }
    expect((await repo.warren('sync', 't', '--abort')).code).toBe(1); // nothing left to abort
  });

  it('--keep hands the conflict to the agent, which resolves it; checkpoint concludes the merge', async () => {
    const repo = makeRepo({ files: { 'f.txt': LINES('c') } });
    const seen = path.join(repo.home, 'prompt-seen.txt');
    // The agent: keeps the prompt it was given and writes the resolution.
    const resolved = LINES('task and main');
    repo.write(
      'warren.yaml',
      `agents:\n  fixer: { command: [sh, -c, ${JSON.stringify(`cat > ${seen}; printf '${resolved.replaceAll('\n', '\\n')}' > f.txt`)}], prompt: stdin }\n`,
    );
    repo.commit('an agent');
    const ws = await taskEditing(repo, 't', LINES('task'));
    repo.write('f.txt', LINES('main'));
    repo.commit('main edits the same line');
    const kept = await repo.warrenJson<{ state: string; paths: string[] }>('sync', 't', '--keep');
    expect(kept.code).toBe(1);
    expect(kept.json).toMatchObject({ state: 'conflict', paths: ['f.txt'] });
    expect(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8')).toContain('<<<<<<<');
    // Abort, and keep it again: the abort puts the task back.
    const head = repo.git('rev-parse', 'feat/t');
    expect((await repo.warrenJson<{ state: string }>('sync', 't', '--abort')).json.state).toBe('aborted');
    expect(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8')).toBe(LINES('task'));
    expect(repo.git('-C', ws, 'status', '--porcelain')).toBe('');
    expect((await repo.warren('sync', 't', '--keep')).code).toBe(1);

    await ok(repo, 'run', 't', '--agent', 'fixer', '--resolve');
    const prompt = fs.readFileSync(seen, 'utf8');
    expect(prompt).toContain('conflicts with your work in f.txt');
    expect(prompt).toContain('main edits the same line'); // the base's commit there
    expect(prompt).toMatch(/Your side \(this task\):\n```\ntask\n```/);
    expect(prompt).toMatch(/The base's side \(main\):\n```\nmain\n```/);
    await ok(repo, 'checkpoint', 't', '-m', 'resolved');
    expect(repo.git('rev-parse', 'feat/t^1')).toBe(head);
    expect(repo.git('merge-base', '--is-ancestor', 'main', 'feat/t')).toBe('');
    expect(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8')).toBe(resolved);
    const conflicts = await repo.warrenJson<{ conflicts: unknown[] }>('conflicts', 't');
    expect(conflicts.json.conflicts).toEqual([]);
  });

  it('bad input changes nothing: an unknown task, both --rebase and --merge', async () => {
    const repo = makeRepo();
    const unknown = await repo.warrenJson<{ error: { code: string } }>('sync', 'nope');
    expect([unknown.code, unknown.json.error.code]).toEqual([2, 'TASK_NOT_FOUND']);
    await ok(repo, 'new', 'feat', 't');
    const both = await repo.warrenJson<{ error: { code: string } }>('sync', 't', '--rebase', '--merge');
    expect([both.code, both.json.error.code]).toEqual([2, 'USAGE']);
  });
});
