import fs from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { startServer } from '../../src/web/server.js';
import { gitIn, makeRepo, type TestRepo } from '../helpers/repo.js';
import { request } from '../helpers/serve.js';

/**
 * Start agent and Run agent over the dashboard's HTTP API, with an agent of warren.yaml (a plain
 * command, no model): the same guards as `warren run`, read before a task is made.
 */

async function serve(repo: TestRepo) {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  const ctx = await openProject(repo.root, { store });
  const server = await startServer({ project: ctx, store, host: '127.0.0.1', port: 0 });
  onTestFinished(() => server.close());
  const post = async (name: string, body: Record<string, unknown>) => {
    const res = await request(`${server.url}api/actions/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-warren-token': server.token },
      body: JSON.stringify({ project: ctx.key, ...body }),
    });
    return {
      status: res.status,
      body: JSON.parse(res.body) as { result?: Record<string, unknown>; error?: { code: string; message: string } },
    };
  };
  return { server, ctx, post };
}

const YAML = 'agents:\n  echo-agent: { command: [sh, -c, "cat > said.txt; echo heard"], prompt: stdin }\n';

describe('agents from the dashboard API', () => {
  it('Start agent makes the task and runs the agent in it; Run agent runs it again; neither blocks on the run', async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': YAML } });
    const { server, ctx, post } = await serve(repo);
    const started = await post('agent', {
      options: { agent: 'echo-agent', prompt: 'line one\n-line two $HOME', id: 'a1', type: 'fix' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.result).toMatchObject({
      id: 'a1',
      branch: 'fix/a1',
      run: { agent: 'echo-agent', started: true },
    });
    const shown = await repo.warrenJson<{ path: string }>('show', 'a1');
    // The prompt reached the agent byte for byte (once its run, going on in the server, is done).
    await expect
      .poll(() => fs.readFileSync(`${shown.json.path}/said.txt`, 'utf8'), { timeout: 15_000 })
      .toBe('line one\n-line two $HOME');
    const again = await post('run', { id: 'a1', options: { agent: 'echo-agent', prompt: 'twice' } });
    expect(again.status).toBe(200);
    await expect.poll(() => fs.readFileSync(`${shown.json.path}/said.txt`, 'utf8'), { timeout: 15_000 }).toBe('twice');
    // An agent that keeps no transcript: the page is told so, not served a stream.
    const t = await request(`${server.url}api/transcript?project=${ctx.key}&id=a1&token=${server.token}`);
    expect(t.status).toBe(404);
    expect(JSON.parse(t.body).error.code).toBe('NO_TRANSCRIPT');
  });

  it('refuses an unknown agent, or an untrusted one of warren.yaml, before any task is made', async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': YAML }, trusted: false });
    const { post } = await serve(repo);
    const unknown = await post('agent', { options: { agent: 'nope', prompt: 'x', id: 'u1' } });
    expect(unknown.status).toBe(400); // bad input, as the CLI's exit 2
    expect(unknown.body.error?.code).toBe('AGENT_UNKNOWN');
    const untrusted = await post('agent', { options: { agent: 'echo-agent', prompt: 'x', id: 'u2' } });
    expect(untrusted.body.error?.code).toBe('UNTRUSTED_COMMANDS');
    expect(untrusted.body.error?.message).toContain('Nothing was created or run.');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(gitIn(repo.root, 'branch', '--list').trim()).toBe('* main');
  });
});
