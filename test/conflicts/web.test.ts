import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { request, startServe } from '../helpers/serve.js';

/** The dashboard's API: the fleet marks conflicting tasks, the task view carries its conflicting hunks, /api/conflicts the map. */

async function taskEditing(repo: TestRepo, id: string, content: string): Promise<void> {
  expect((await repo.warren('new', 'feat', id)).code).toBe(0);
  const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
  fs.writeFileSync(path.join(ws, 'f.txt'), content);
}

describe('conflicts in the dashboard API', () => {
  it('GET /api/conflicts computes the map; the fleet and the task view show the pair and its hunks', async () => {
    const repo = makeRepo({ files: { 'f.txt': 'one\ntwo\nthree\n' } });
    await taskEditing(repo, 'a', 'one\nA\nthree\n');
    await taskEditing(repo, 'b', 'one\nB\nthree\n');
    const server = await startServe({ cwd: repo.root, home: repo.home });
    const get = async <T>(url: string): Promise<T> => {
      const r = await request(`${server.url}${url}`, { headers: { 'x-warren-token': server.token } });
      expect(r.status, r.body).toBe(200);
      return JSON.parse(r.body) as T;
    };
    const map = await get<{ conflicts: { a: string; b: string }[] }>('api/conflicts');
    expect(map.conflicts.map((p) => [p.a, p.b])).toEqual([['a', 'b']]);
    const fleet = await get<{
      projects: { tasks: { id: string; conflicts: { other: string; paths: string[] }[] }[] }[];
    }>('api/fleet');
    expect(fleet.projects[0]?.tasks.map((t) => [t.id, t.conflicts])).toEqual([
      ['a', [{ other: 'b', paths: ['f.txt'] }]],
      ['b', [{ other: 'a', paths: ['f.txt'] }]],
    ]);
    const view = await get<{
      conflicts: { ok: boolean; value: { files: { hunks: { ours: string[]; theirs: string[] }[] }[] }[] };
    }>('api/task?id=b');
    expect(view.conflicts.ok).toBe(true);
    expect(view.conflicts.value[0]?.files[0]?.hunks[0]).toMatchObject({ ours: ['A'], theirs: ['B'] });
    const unknown = await request(`${server.url}api/conflicts?id=nope`, {
      headers: { 'x-warren-token': server.token },
    });
    expect(unknown.status).toBe(404);
  });
});
