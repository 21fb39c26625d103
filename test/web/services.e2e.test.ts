import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { openBrowser, screenshot } from '../helpers/browser.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo } from '../helpers/repo.js';
import { startServe } from '../helpers/serve.js';
import { listening, livingDaemons, stopServicesAfter } from '../helpers/services.js';

/**
 * A dev server as a task's service, in Debian's headless Chromium: ready by HTTP, listed in the
 * task's page with its state and a link that opens the running server, gone with the task.
 */

const noChromium = unavailable(import.meta.filename, 'chromium');

const SERVER = `const http = require('node:http');
const port = Number(process.env.WARREN_PORT);
let ready = false;
setTimeout(() => (ready = true), 300);
http.createServer((req, res) => {
  if (req.url === '/health') { res.statusCode = ready ? 200 : 503; res.end(ready ? 'ok' : 'starting'); return; }
  res.setHeader('content-type', 'text/html');
  res.end('<title>dev server</title><h1 id="hello">hello from task ' + process.env.WARREN_TASK_ID + '</h1>');
}).listen(port, '127.0.0.1');
`;

describe.skipIf(noChromium !== null)('a dev server service in the dashboard', () => {
  it('reaches ready by HTTP, shows in the task page with a working link, and ends with the task', async () => {
    const repo = makeRepo({
      files: {
        'server.js': SERVER,
        'warren.yaml': 'services:\n  web: { run: [node, server.js], ready: { http: /health, timeout: 20s } }\n',
      },
    });
    repo.trust();
    stopServicesAfter(repo.home);
    const made = await repo.warren('new', 'feat', 'site');
    expect(made.code, made.stderr).toBe(0);
    const shown = await repo.warrenJson<{ events: { kind: string; readyMs?: number }[] }>('show', 'site');
    const started = shown.json.events.find((e) => e.kind === 'service.started');
    // Ready by HTTP: /health answered 503 for 300 ms, so readiness waited past it.
    expect(started?.readyMs).toBeGreaterThanOrEqual(250);

    const store = openStore(repo.home);
    const key = store.listProjects()[0]?.key ?? '';
    store.close();
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { context, page } = await openBrowser();
    await page.goto(serve.openUrl);
    // The fleet names the service on its port.
    const named = page.locator('tr[data-task="site"] a.endpoint[data-service="web"]');
    await named.waitFor();
    const port = Number(await named.getAttribute('data-port'));
    await expect(named.textContent()).resolves.toBe(`web :${port}`);
    // The services tab, named in the address.
    await page.goto(`${serve.url}#/task/${encodeURIComponent(key)}/site/services`);
    const row = page.locator('tr[data-service="web"]');
    await row.waitFor();
    await expect(page.locator('#task a.endpoint[data-service="web"]').textContent()).resolves.toBe(`web :${port}`);
    expect(await row.locator('td').nth(2).textContent()).toBe('running');
    const link = row.locator('a');
    const href = await link.getAttribute('href');
    expect(href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    await screenshot(page, 'services-task');
    // The link opens the task's own dev server.
    const [opened] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await opened.locator('#hello').waitFor();
    expect(await opened.locator('#hello').textContent()).toBe('hello from task site');
    await opened.close();

    expect(Number(new URL(href ?? '').port)).toBe(port);
    expect(listening(port)).toBe(true);
    expect((await repo.warren('rm', 'site')).code).toBe(0);
    expect(listening(port)).toBe(false);
    expect(livingDaemons(repo.home)).toEqual([]);
  }, 120_000);
});
