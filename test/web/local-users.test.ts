import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { unavailable } from '../helpers/capabilities.js';
import { NOBODY, requestAsNobody, shellAsNobody } from '../helpers/nobody.js';
import { makeRepo, refsAndWorktrees, type TestRepo } from '../helpers/repo.js';
import { request, startServe, type ServeProcess } from '../helpers/serve.js';

/**
 * One user's dashboard is that user's: root runs a real `warren serve`, and another user of the
 * same machine (uid 65534, through setpriv) tries it from their own processes, holding the token
 * or not. Loopback is open to every user, so only the server's check of who owns the client's
 * socket keeps them out.
 */

const noNobody = unavailable(import.meta.filename, 'nobody');

const SECRET = "root's secret, mode 0600\n";

async function rootRepoWithSecret(): Promise<{ repo: TestRepo; wt: string }> {
  const repo = makeRepo({ files: { 'README.md': '# app\n' } });
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'keep');
  expect(made.code, made.stderr).toBe(0);
  // Untracked work in root's workspace, readable by root alone: the task view's diff shows it.
  fs.writeFileSync(path.join(made.json.path, 'secret.txt'), SECRET, { mode: 0o600 });
  return { repo, wt: made.json.path };
}

function projectOf(repo: TestRepo): string {
  const store = openStore(repo.home);
  try {
    const [p] = store.listProjects();
    if (!p) throw new Error('no project recorded');
    return p.key;
  } finally {
    store.close();
  }
}

/** Every way in: the page, reads, the live stream, and each action a page can take. */
function attempts(
  serve: ServeProcess,
  project: string,
): { name: string; url: string; init: Parameters<typeof request>[1] }[] {
  const base = serve.url;
  const auth = { 'x-warren-token': serve.token };
  const post = (action: string, body: Record<string, unknown>) => ({
    name: `POST ${action}`,
    url: `${base}api/actions/${action}`,
    init: {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', origin: base.replace(/\/$/, '') },
      body: JSON.stringify({ project, ...body }),
    },
  });
  return [
    { name: 'GET /', url: base, init: {} },
    { name: 'GET / with the token', url: serve.openUrl, init: {} },
    { name: 'GET /api/meta', url: `${base}api/meta`, init: { headers: auth } },
    { name: 'GET /api/task', url: `${base}api/task?project=${project}&id=keep`, init: { headers: auth } },
    { name: 'GET /api/events', url: `${base}api/events?token=${serve.token}`, init: {} },
    post('new', { options: { type: 'feat', id: 'intruder' } }),
    post('rm', { id: 'keep', options: { discard: true } }),
    post('land', { id: 'keep', options: {} }),
    post('review', { id: 'keep', options: { agent: 'claude' } }),
    post('gc', { options: {} }),
  ];
}

describe.skipIf(noNobody !== null)("another user of this machine and root's dashboard", () => {
  it('gets a 403 saying why on every request, even with the token, and nothing is read or changed; root is served', async () => {
    const { repo, wt } = await rootRepoWithSecret();
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const project = projectOf(repo);
    const before = refsAndWorktrees(repo.root);

    for (const { name, url, init } of attempts(serve, project)) {
      const res = await requestAsNobody(url, init);
      expect(res.status, `${name}: ${res.body}`).toBe(403);
      expect(res.body, name).toContain(`your connection comes from uid ${NOBODY}`);
      expect(res.body, name).toContain('Nothing was read or changed.');
      expect(res.body, name).not.toContain(serve.token);
      expect(res.body, name).not.toContain(SECRET.trim());
    }
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.readFileSync(path.join(wt, 'secret.txt'), 'utf8')).toBe(SECRET);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['keep']);

    // Refused once per user a run: one event and one line on the server's stderr, not one per request.
    const store = openStore(repo.home);
    try {
      const refused = store.eventsSince(0).filter((e) => e.kind === 'serve.refused');
      expect(refused.map((e) => [e.level, e.data.uid])).toEqual([['warn', NOBODY]]);
    } finally {
      store.close();
    }
    expect(serve.stderr()).toContain(`refused a connection from uid ${NOBODY}`);

    // The same reads from root, with the token, are answered: the refusals were the peer check's.
    const task = await request(`${serve.url}api/task?project=${project}&id=keep`, {
      headers: { 'x-warren-token': serve.token },
    });
    expect(task.status, task.body).toBe(200);
    expect(task.body).toContain(SECRET.trim());
    const rm = attempts(serve, project).find((a) => a.name === 'POST rm');
    const removed = await request(rm?.url ?? '', rm?.init);
    expect(removed.status, removed.body).toBe(200);
    expect(fs.existsSync(wt)).toBe(false);
  });

  it('keeps the token in a 0600 file in a 0700 folder, which the other user cannot read; the page served to root carries no token', async () => {
    const { repo } = await rootRepoWithSecret();
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const file = path.join(repo.home, 'dashboard', 'token');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${serve.token}\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).uid).toBe(0);
    // Even with WARREN_HOME open to everyone, the folder keeps uid 65534 out.
    for (const dir of [path.dirname(repo.home), repo.home]) fs.chmodSync(dir, 0o755);
    expect(shellAsNobody('/', `ls '${repo.home}'`).code).toBe(0);
    const cat = shellAsNobody('/', `cat '${file}'`);
    expect(cat.code).not.toBe(0);
    expect(cat.stderr).toMatch(/Permission denied/);

    const page = await request(serve.url);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(serve.token);
    expect(page.body).not.toMatch(/[0-9a-f]{64}/);
    // The token is this WARREN_HOME's: the next `warren serve` prints the same one.
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => serve.child.once('exit', resolve));
    const again = await startServe({ cwd: repo.root, home: repo.home });
    expect(again.token).toBe(serve.token);
  });

  it('with --allow-remote, a loopback connection is still judged by its user', async () => {
    const { repo } = await rootRepoWithSecret();
    const serve = await startServe({ cwd: repo.root, home: repo.home, args: ['--host', '0.0.0.0', '--allow-remote'] });
    const local = `http://127.0.0.1:${serve.port}/`;
    const nobody = await requestAsNobody(`${local}api/meta`, { headers: { 'x-warren-token': serve.token } });
    expect(nobody.status).toBe(403);
    expect(nobody.body).toContain(`your connection comes from uid ${NOBODY}`);
    const root = await request(`${local}api/meta`, { headers: { 'x-warren-token': serve.token } });
    expect(root.status).toBe(200);
  });
});
