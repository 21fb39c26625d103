import http from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeRepo } from '../helpers/repo.js';
import { readSse, request, startServe, type SseEvent } from '../helpers/serve.js';

/** Serving never blocks the CLI: both run at once on the same repository and database. */

function subscribe(url: string): SseEvent[] {
  const seen: SseEvent[] = [];
  const req = http.get(url, (res) => readSse(res, (e) => seen.push(e)));
  req.on('error', () => undefined);
  onTestFinished(() => void req.destroy());
  return seen;
}

describe('warren serve beside the CLI', () => {
  it('lets `warren new` and `warren rm` succeed while the server polls and serves, and streams their events', async () => {
    const repo = makeRepo();
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const token = serve.token;
    const events = subscribe(`${serve.url}api/events?token=${token}`);
    await expect.poll(() => events.some((e) => e.event === 'hello')).toBe(true);

    // Keep the server busy reading (database and git) for as long as the CLI works.
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const res = await request(`${serve.url}api/fleet`, { headers: { 'x-warren-token': token } });
        expect(res.status).toBe(200);
        reads++;
      }
    })();

    const ids = ['c1', 'c2', 'c3'];
    const results = await Promise.all(ids.map((id) => repo.warren('new', 'feat', id)));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const removed = await repo.warren('rm', 'c2');
    expect(removed.code, removed.stderr).toBe(0);
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(0);

    const kinds = () =>
      events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as { kind: string; taskId: string });
    await expect
      .poll(() =>
        kinds()
          .filter((k) => k.kind === 'task.created')
          .map((k) => k.taskId)
          .sort(),
      )
      .toEqual(ids);
    await expect.poll(() => kinds().some((k) => k.kind === 'task.removed' && k.taskId === 'c2')).toBe(true);

    const fleet = await request(`${serve.url}api/fleet`, { headers: { 'x-warren-token': token } });
    const ids2 = (JSON.parse(fleet.body) as { projects: { tasks: { id: string }[] }[] }).projects[0]?.tasks
      .map((t) => t.id)
      .sort();
    expect(ids2).toEqual(['c1', 'c3']);
    expect(serve.child.exitCode).toBeNull();
  });
});
