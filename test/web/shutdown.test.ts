import fs from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/composition.js';
import { LIFECYCLE, openProject } from '../../src/composition.js';
import type { RemoveStep } from '../../src/workspace/types.js';
import { startServer } from '../../src/web/server.js';
import { makeRepo } from '../helpers/repo.js';
import { request } from '../helpers/serve.js';

/** Stopping the server (ctrl-c) while an action runs lets the action finish. */

describe('dashboard shutdown', () => {
  it('waits for a running removal instead of cutting it in half', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'held');
    expect(made.code, made.stderr).toBe(0);

    // Hold the removal in the middle (after its guards, before git removes the worktree).
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const hold: RemoveStep = {
      name: 'hold',
      release: async (_ctx, task) => {
        if (task.id !== 'held') return [];
        entered();
        await gate;
        return [];
      },
    };

    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    const ctx = await openProject(repo.root, { store });
    ctx.lifecycle = { ...LIFECYCLE, remove: [hold, ...LIFECYCLE.remove] };
    const server = await startServer({ project: ctx, store, host: '127.0.0.1', port: 0 });
    const token = server.token;
    const response = request(`${server.url}api/actions/rm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-warren-token': token },
      body: JSON.stringify({ project: ctx.key, id: 'held', options: {} }),
    });
    await inside;

    let closed = false;
    const closing = server.close().then(() => (closed = true));
    // While the removal is held, closing must not finish (nor may the removal be abandoned).
    await new Promise((r) => setTimeout(r, 300));
    expect(closed).toBe(false);
    expect(fs.existsSync(made.json.path)).toBe(true);

    release();
    const res = await response;
    await closing;
    expect(res.status, res.body).toBe(200);
    expect(fs.existsSync(made.json.path)).toBe(false);
    expect(store.getTask(ctx.key, 'held')).toBeNull();
  });
});
