import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/composition.js';
import { openProject } from '../../src/composition.js';
import { startServer, type RunningServer } from '../../src/web/server.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, refsAndWorktrees, runCli, type TestRepo } from '../helpers/repo.js';
import { request, startServe } from '../helpers/serve.js';

/** Each rule of the dashboard's security model, against the real server over real HTTP. */

async function serveRepo(repo: TestRepo): Promise<{ server: RunningServer; project: string }> {
  const store = openStore(repo.home);
  const ctx = await openProject(repo.root, { store });
  const server = await startServer({ project: ctx, store, host: '127.0.0.1', port: 0 });
  onTestFinished(async () => {
    await server.close();
    store.close();
  });
  return { server, project: ctx.key };
}

async function repoWithTask(id = 'keep'): Promise<{ repo: TestRepo; path: string }> {
  const repo = makeRepo();
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(made.code, made.stderr).toBe(0);
  return { repo, path: made.json.path };
}

/** A hand-written request: node:http always adds a Host header. */
function rawStatus(port: number, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
    let reply = '';
    socket.setEncoding('utf8').on('data', (d: string) => (reply += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1] ?? 0)));
  });
}

function rmRequest(
  project: string,
  id: string,
  headers: Record<string, string>,
): { method: string; headers: Record<string, string>; body: string } {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ project, id, options: {} }),
  };
}

describe('dashboard security', () => {
  it('--json prints the URL with the token, the token and its file, for a program that starts warren serve; the API takes it', async () => {
    const { repo } = await repoWithTask();
    const server = await startServe({ cwd: repo.root, home: repo.home, json: true });
    expect(Object.keys(server.printed ?? {}).sort()).toEqual(['host', 'pid', 'port', 'token', 'tokenFile', 'url']);
    const token = String(server.printed?.token);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(server.printed?.url).toBe(`http://127.0.0.1:${server.port}/?token=${token}`);
    expect(token).toBe(server.token);
    expect(server.printed?.tokenFile).toBe(path.join(repo.home, 'dashboard', 'token'));
    expect(fs.readFileSync(path.join(repo.home, 'dashboard', 'token'), 'utf8')).toBe(`${token}\n`);
    const meta = await request(`${server.url}api/meta`, { headers: { 'x-warren-token': token } });
    expect(meta.status).toBe(200);
    expect(JSON.parse(meta.body).project).toMatch(/^repo-/);
  });

  it('refuses a Host header that is not the served address (DNS rebinding), on pages and on actions', async () => {
    const { repo, path: wt } = await repoWithTask();
    const { server, project } = await serveRepo(repo);
    const token = server.token;
    const before = refsAndWorktrees(repo.root);
    for (const host of [
      'evil.example',
      `evil.example:${server.port}`,
      `127.0.0.1:${server.port + 1}`,
      `127.0.0.2:${server.port}`,
      `localhost.evil.example:${server.port}`,
    ]) {
      const headers = { host };
      expect((await request(server.url, { headers })).status, host).toBe(421);
      expect(
        (await request(`${server.url}api/fleet`, { headers: { ...headers, 'x-warren-token': token } })).status,
        host,
      ).toBe(421);
      const rm = await request(
        `${server.url}api/actions/rm`,
        rmRequest(project, 'keep', { ...headers, 'x-warren-token': token }),
      );
      expect(rm.status, host).toBe(421);
    }
    // No Host header at all: refused too (by node:http's own requireHostHeader, or by ours).
    for (const text of ['GET / HTTP/1.0\r\n\r\n', 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n']) {
      expect([400, 421]).toContain(await rawStatus(server.port, text));
    }
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(wt)).toBe(true);
    // The names of the served address itself are accepted.
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`]) {
      expect((await request(server.url, { headers: { host } })).status, host).toBe(200);
    }
  });

  it("refuses state-changing requests without the dashboard's token, and changes nothing", async () => {
    const { repo, path: wt } = await repoWithTask();
    const { server, project } = await serveRepo(repo);
    const token = server.token;
    const before = refsAndWorktrees(repo.root);
    const cases: { name: string; init: ReturnType<typeof rmRequest> }[] = [
      { name: 'no token', init: rmRequest(project, 'keep', {}) },
      { name: 'wrong token', init: rmRequest(project, 'keep', { 'x-warren-token': 'f'.repeat(64) }) },
      { name: 'token of another length', init: rmRequest(project, 'keep', { 'x-warren-token': token.slice(1) }) },
      {
        name: 'right token from another origin',
        init: rmRequest(project, 'keep', { 'x-warren-token': token, origin: 'http://evil.example' }),
      },
      {
        name: 'a form post (no token)',
        init: { ...rmRequest(project, 'keep', {}), headers: { 'content-type': 'text/plain' } },
      },
    ];
    for (const { name, init } of cases) {
      const res = await request(`${server.url}api/actions/rm`, init);
      expect(res.status, name).toBe(403);
      expect(JSON.parse(res.body).error.code, name).toBe('FORBIDDEN');
    }
    // In the query string (where EventSource puts it for reads) it does not count for a change.
    const viaQuery = await request(`${server.url}api/actions/rm?token=${token}`, rmRequest(project, 'keep', {}));
    expect(viaQuery.status).toBe(403);
    // Reads need it too.
    expect((await request(`${server.url}api/fleet`)).status).toBe(403);
    expect((await request(`${server.url}api/events`)).status).toBe(403);
    // The disk view and the agent's transcript, like every read.
    expect((await request(`${server.url}api/disk?project=${project}`)).status).toBe(403);
    expect((await request(`${server.url}api/transcript?project=${project}&id=keep`)).status).toBe(403);
    expect(
      (
        await request(`${server.url}api/transcript?project=${project}&id=keep&token=${token}`, {
          headers: { host: 'evil.example' },
        })
      ).status,
    ).toBe(421);
    // Starting an agent, trusting commands and removing landed tasks, like every action.
    for (const name of ['agent', 'run', 'trust', 'rm-landed']) {
      const res = await request(`${server.url}api/actions/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ project, id: 'keep', options: {} }),
      });
      expect(res.status, name).toBe(403);
    }

    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(wt)).toBe(true);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['keep']);

    // The same request with the token does remove it: the refusals above were the token's doing.
    const ok = await request(
      `${server.url}api/actions/rm`,
      rmRequest(project, 'keep', { 'x-warren-token': token, origin: server.url.replace(/\/$/, '') }),
    );
    expect(ok.status, ok.body).toBe(200);
    expect(fs.existsSync(wt)).toBe(false);
  });

  it('takes an action only as application/json: any other Content-Type, even with the token, is refused with 415 and changes nothing', async () => {
    const { repo, path: wt } = await repoWithTask();
    const { server, project } = await serveRepo(repo);
    const token = server.token;
    const before = refsAndWorktrees(repo.root);
    for (const type of [
      'application/jsonx',
      'application/json-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'text/plain; application/json',
      '',
    ]) {
      const init = rmRequest(project, 'keep', { 'x-warren-token': token });
      const res = await request(`${server.url}api/actions/rm`, {
        ...init,
        headers: { ...init.headers, 'content-type': type },
      });
      expect(res.status, type).toBe(415);
      expect(JSON.parse(res.body).error.code, type).toBe('USAGE');
      expect(JSON.parse(res.body).error.message, type).toContain('must be application/json');
    }
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(wt)).toBe(true);
    // JSON with a parameter is JSON: the same request goes through.
    const init = rmRequest(project, 'keep', { 'x-warren-token': token });
    const ok = await request(`${server.url}api/actions/rm`, {
      ...init,
      headers: { ...init.headers, 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect(ok.status, ok.body).toBe(200);
    expect(fs.existsSync(wt)).toBe(false);
  });

  it("passes a guard's refusal through exactly as the CLI words it, details included, and records it", async () => {
    const { repo, path: wt } = await repoWithTask();
    fs.writeFileSync(path.join(wt, 'unsaved.txt'), 'draft\n');
    const { server, project } = await serveRepo(repo);
    const token = server.token;
    const res = await request(`${server.url}api/actions/rm`, rmRequest(project, 'keep', { 'x-warren-token': token }));
    const cli = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('rm', 'keep');
    expect(res.status).toBe(409);
    expect(JSON.parse(res.body).error).toEqual(cli.json.error);
    const shown = await repo.warrenJson<{ events: { kind: string; code?: string; command?: string }[] }>(
      'show',
      'keep',
    );
    expect(shown.json.events).toContainEqual(
      expect.objectContaining({ kind: 'refused', code: 'WORKSPACE_DIRTY', command: 'dashboard rm' }),
    );
    expect(fs.existsSync(path.join(wt, 'unsaved.txt'))).toBe(true);
  });

  it("streams a log only from inside warren's folders, whatever path an event names", async () => {
    const { repo } = await repoWithTask();
    const { server, project } = await serveRepo(repo);
    const token = server.token;
    const secret = path.join(path.dirname(repo.root), 'secret.txt');
    fs.writeFileSync(secret, 'do not serve me\n');
    const store = openStore(repo.home);
    try {
      store.addEvent({
        project,
        taskId: 'keep',
        kind: 'run.started',
        message: 'x',
        data: { runId: 'r-secret', kind: 'exec', log: secret, command: ['x'] },
      });
    } finally {
      store.close();
    }
    const res = await request(`${server.url}api/log?project=${project}&id=keep&token=${token}`);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.code).toBe('PATH_ESCAPE');
    expect(res.body).not.toContain('do not serve me');
  });

  it('sends headers that keep data from running as script or being framed', async () => {
    const { repo } = await repoWithTask();
    const { server } = await serveRepo(repo);
    const page = await request(server.url);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // The page carries no data and no token: the token comes in its address, the data as JSON that becomes text nodes.
    expect(page.body).not.toContain('keep');
    expect(page.body).not.toContain(server.token);
  });

  it('listens on loopback only unless --allow-remote, and then warns; the token in the URL is the key', async () => {
    const { repo } = await repoWithTask();
    const refused = await runCli(['serve', '--port', '0', '--host', '0.0.0.0'], { cwd: repo.root, home: repo.home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not a loopback address');
    expect(refused.stderr).toContain('Nothing was started');

    // An address this machine does not have, or cannot resolve, is bad input, not a crash.
    for (const host of ['[::1', 'no-such-host.invalid']) {
      const bad = await runCli(['serve', '--port', '0', '--host', host, '--allow-remote'], {
        cwd: repo.root,
        home: repo.home,
      });
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toMatch(new RegExp(`--host ${host.replace(/[[.]/g, '\\$&')} .*; nothing was started\\.`));
      expect(bad.stderr).not.toContain('internal error');
    }

    const badPort = await runCli(['serve', '--port', '70000'], { cwd: repo.root, home: repo.home });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('is not a port number');

    const remote = await startServe({ cwd: repo.root, home: repo.home, args: ['--host', '0.0.0.0', '--allow-remote'] });
    await expect.poll(() => remote.stderr()).toContain('warning: warren serve is listening on 0.0.0.0');
    expect(remote.openUrl).toMatch(new RegExp(`^http://0\\.0\\.0\\.0:${remote.port}/\\?token=[0-9a-f]{64}$`));
    const bare = `http://127.0.0.1:${remote.port}/`;
    // The page is served without the token, and shows how to open it; the API wants the token.
    const page = await request(bare);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(remote.token);
    expect((await request(`${bare}api/meta`)).status).toBe(403);
    expect((await request(`${bare}api/meta`, { headers: { 'x-warren-token': remote.token } })).status).toBe(200);
    const store = openStore(repo.home);
    try {
      expect(
        store
          .eventsSince(0)
          .filter((e) => e.kind === 'serve.remote')
          .map((e) => e.level),
      ).toEqual(['warn']);
    } finally {
      store.close();
    }
  });

  const noIpv6 = unavailable(import.meta.filename, 'ipv6-loopback');
  it.skipIf(noIpv6 !== null)(
    'serves IPv6 loopback written as in a URL, `--host [::1]`, with the brackets kept in the URL',
    async () => {
      const { repo } = await repoWithTask();
      const v6 = await startServe({ cwd: repo.root, home: repo.home, json: true, args: ['--host', '[::1]'] });
      expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+\/$/);
      expect(v6.printed?.host).toBe('[::1]');
      const token = String(v6.printed?.token);
      expect((await request(`${v6.url}api/meta`, { headers: { 'x-warren-token': token } })).status).toBe(200);
      // The same request on 127.0.0.1 finds nothing listening there: it is bound to ::1 alone.
      await expect(request(`http://127.0.0.1:${v6.port}/`)).rejects.toThrow(/ECONNREFUSED/);
    },
  );
});
