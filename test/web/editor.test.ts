import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { startServer } from '../../src/web/server.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import { request } from '../helpers/serve.js';

/** "Open in editor": config.yaml's `editor:` command, run with the workspace's path; refusals when it cannot. */

async function serve(repo: TestRepo) {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  const ctx = await openProject(repo.root, { store });
  const server = await startServer({ project: ctx, store, host: '127.0.0.1', port: 0 });
  onTestFinished(() => server.close());
  const open = async (id: string) => {
    const res = await request(`${server.url}api/actions/open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-warren-token': server.token },
      body: JSON.stringify({ project: ctx.key, id, options: {} }),
    });
    return {
      status: res.status,
      body: JSON.parse(res.body) as {
        result?: { path: string };
        error?: { code: string; message: string; hint?: string };
      },
    };
  };
  const meta = async () =>
    JSON.parse((await request(`${server.url}api/meta?token=${server.token}`)).body) as { editor: string[] | null };
  return { open, meta };
}

describe('open in editor', () => {
  it('runs the configured command with the workspace path; refuses, saying how, when none is set or it cannot start', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'ed');
    const { open, meta } = await serve(repo);

    expect((await meta()).editor).toBeNull();
    const none = await open('ed');
    expect(none.status).toBe(400);
    expect(none.body.error?.message).toBe(
      `no editor is set for the dashboard to open ${made.json.path} with; nothing was opened.`,
    );
    expect(none.body.error?.hint).toContain('editor: [code]');

    const out = path.join(path.dirname(repo.root), 'opened');
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), `editor: [sh, -c, 'printf %s "$1" > ${out}', sh]\n`);
    expect((await meta()).editor).toEqual(['sh', '-c', `printf %s "$1" > ${out}`, 'sh']);
    const ok = await open('ed');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await expect.poll(() => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '')).toBe(made.json.path);

    fs.writeFileSync(path.join(repo.home, 'config.yaml'), 'editor: [no-such-editor-here]\n');
    const missing = await open('ed');
    expect(missing.status).toBe(400);
    expect(missing.body.error?.message).toBe(
      'could not start the editor "no-such-editor-here" (ENOENT); nothing was opened.',
    );
    expect((await open('nope')).status).toBe(404);
  });
});
