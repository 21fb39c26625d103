import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { openBrowser, screenshot, waitForView } from '../helpers/browser.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { request, startServe } from '../helpers/serve.js';

/**
 * The dashboard answers every action at once (issue 39), in Debian's headless Chromium against a
 * real `warren serve`: what the page shows before the server has answered (a pending row, a
 * toast, skeletons) is checked while the server's answer is held back by the browser, never
 * against a clock; and the states, badges, layouts and tabs it shows after.
 */

const noChromium = unavailable(import.meta.filename, 'chromium');

function projectKey(repo: TestRepo): string {
  const store = openStore(repo.home);
  try {
    const [p] = store.listProjects();
    if (!p) throw new Error('no project recorded');
    return p.key;
  } finally {
    store.close();
  }
}

/** Holds the browser's requests to `pathname` until `release()`; `answered` says whether any went on. */
async function hold(page: Page, pathname: string): Promise<{ release(): void; answered(): boolean; asked(): number }> {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  let answered = false;
  await page.route(
    (url) => url.pathname === pathname,
    async (route) => {
      asked++;
      await gate;
      answered = true;
      await route.continue();
    },
  );
  return { release: () => release(), answered: () => answered, asked: () => asked };
}

/** The page scrolls sideways only when something is wider than the window. */
function overflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
}

describe.skipIf(noChromium !== null)('a dashboard that answers at once', () => {
  it('shows a pending row and a toast for New task before the server has answered, then the task', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'older')).code).toBe(0);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();

    // Before the fleet answers, its shape; before the details answer, their cells.
    const fleet = await hold(page, '/api/fleet');
    const details = await hold(page, '/api/fleet/details');
    await page.goto(serve.openUrl);
    await page.locator('#fleet-loading').waitFor();
    await expect.poll(() => fleet.asked()).toBe(1);
    expect(await page.locator('#fleet').count()).toBe(0);
    fleet.release();
    await page.locator('tr[data-task="older"]').waitFor();
    await expect.poll(() => details.asked()).toBe(1);
    expect(await page.locator('tr[data-task="older"] td[data-col="changes"] .skeleton').count()).toBe(1);
    await screenshot(page, 'fleet-details-loading');
    details.release();
    await expect
      .poll(() => page.locator('tr[data-task="older"] td[data-col="changes"]').textContent(), { timeout: 15_000 })
      .toBe('0');
    await page.unrouteAll();
    await page.locator('#live.on').waitFor();

    // New task: the server's answer is held; the row is at the top and the toast says what runs.
    const created = await hold(page, '/api/actions/new');
    await page.locator('section.project button[data-action="new"]').click();
    await page.locator('dialog#confirm input[name="id"]').fill('quick');
    await page.locator('#confirm-ok').click();
    const pending = page.locator('tr[data-pending][data-task="quick"]');
    await pending.waitFor();
    expect(created.answered()).toBe(false);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['older']);
    await expect(
      page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task'))),
    ).resolves.toEqual(['quick', 'older']);
    await expect(pending.locator('td[data-col="state"]').textContent()).resolves.toBe('creating…');
    await expect(page.locator('.toast.pending[data-action="new"]').textContent()).resolves.toBe('New task: quick…');
    await screenshot(page, 'new-task-pending');

    // The server answers: the toast turns into the result, and the task's own row takes the place.
    created.release();
    await page.locator('.toast.info[data-action="new"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('.toast.info[data-action="new"] .details li').first().textContent()).resolves.toMatch(
      /^ready: feat\/quick at \//,
    );
    await page.locator('tr[data-task="quick"]:not([data-pending])').waitFor({ timeout: 15_000 });
    expect(await page.locator('tr[data-pending]').count()).toBe(0);
    await expect(
      page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task'))),
    ).resolves.toEqual(['quick', 'older']);

    // A task action: the toast says so at once, before its answer.
    const verified = await hold(page, '/api/actions/verify');
    await page.locator('tr[data-task="older"] details.menu summary').click();
    await page.locator('tr[data-task="older"] button[data-action="verify"]').click();
    await page.locator('.toast.pending[data-action="verify"]').waitFor();
    await expect(page.locator('tr[data-task="older"] td[data-col="state"] .badge.busy').textContent()).resolves.toBe(
      'Verify…',
    );
    expect(verified.answered()).toBe(false);
    verified.release();
    await page.locator('.toast.info[data-action="verify"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('tr[data-task="older"] .badge.busy').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('says "agent running" while an agent works in a task, and its state again once it ends', async () => {
    const gate = path.join(tmpDir('warren-gate-'), 'go');
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        // A stand-in agent that works until the test lets it finish.
        'warren.yaml': `agents:\n  waiter: { command: [sh, -c, 'cat > /dev/null; while [ ! -f "$0" ]; do sleep 0.05; done', ${JSON.stringify(gate)}], prompt: stdin }\n`,
      },
    });
    expect((await repo.warren('new', 'feat', 'busy')).code).toBe(0);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    await page.goto(serve.openUrl);
    const state = page.locator('tr[data-task="busy"] td[data-col="state"]');
    await expect(state.textContent()).resolves.toBe('ready');

    const run = repo.warren('run', 'busy', '--agent', 'waiter', '--prompt', 'work');
    try {
      await expect.poll(() => state.textContent(), { timeout: 30_000 }).toBe('agent running');
      await expect(state.locator('.badge').getAttribute('class')).resolves.toContain('state-running');
      await screenshot(page, 'fleet-agent-running');
      await page.locator('tr[data-task="busy"] a.task-link').click();
      await waitForView(page, '#task[data-task="busy"]', 'open-task-busy');
      await expect(page.locator('#task .section-head h2').textContent()).resolves.toBe('busy agent running');
    } finally {
      fs.writeFileSync(gate, '');
    }
    expect((await run).code).toBe(0);
    await expect
      .poll(() => page.locator('#task .section-head h2').textContent(), { timeout: 30_000 })
      .toBe('busy ready');
  });

  it("clears a landed task's badges from before it landed", async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        'warren.yaml': 'verify:\n  - { id: test, run: "test -f feature.js", required: true }\n',
      },
    });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'red');
    expect(made.code).toBe(0);
    expect((await repo.warren('verify', 'red')).code).toBe(1);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    await page.goto(serve.openUrl);
    const row = page.locator('tr[data-task="red"]');
    await row.waitFor();
    // Before: red, as it should be.
    await expect(row.locator('[data-verify]').textContent()).resolves.toBe('failed: test');
    expect(await row.locator('.badge.bad').count()).toBe(2);

    // Fixed and landed (the queue's gate passes on the merged tree); its own verify is the failed one.
    fs.writeFileSync(path.join(made.json.path, 'feature.js'), 'export {};\n');
    expect((await repo.warren('checkpoint', 'red', '-m', 'the feature')).code).toBe(0);
    const landed = await repo.warren('land', 'red');
    expect(landed.code, landed.stderr).toBe(0);
    await expect.poll(() => row.locator('td[data-col="state"]').textContent(), { timeout: 15_000 }).toBe('landed');
    // The failure is history now: shown, but not as a red badge.
    expect(await row.locator('.badge.bad').count()).toBe(0);
    await expect(row.locator('[data-verify]').getAttribute('class')).resolves.toContain('quiet');
    await screenshot(page, 'fleet-landed-quiet');
    await row.locator('a.task-link').click();
    await waitForView(page, '#task[data-task="red"]', 'open-task-red');
    expect(await page.locator('#task dl.kv .badge.bad').count()).toBe(0);
  });

  it('fits 820 px and a phone: no sideways scroll, every row menu within reach', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        'warren.yaml': 'verify:\n  - { id: test, run: "false", required: true }\n',
      },
    });
    for (const id of ['a-task-with-a-rather-long-identifier-to-wrap', 'short']) {
      expect((await repo.warren('new', 'feat', id)).code).toBe(0);
      expect((await repo.warren('verify', id)).code).toBe(1);
    }
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    await page.goto(serve.openUrl);
    await page
      .locator('tr[data-task="short"] td[data-col="changes"]:not(:has(.skeleton))')
      .waitFor({ timeout: 15_000 });
    for (const [width, name] of [
      [820, 'fleet-820'],
      [390, 'fleet-phone'],
    ] as const) {
      await page.setViewportSize({ width, height: 900 });
      const o = await overflow(page);
      expect(o.scrollWidth, `the fleet at ${width} px`).toBeLessThanOrEqual(o.innerWidth);
      // Every row's menu is on the screen, and so is what it opens.
      for (const id of ['a-task-with-a-rather-long-identifier-to-wrap', 'short']) {
        const summary = page.locator(`tr[data-task="${id}"] details.menu summary`);
        const box = await summary.boundingBox();
        expect(box, `${id}'s menu at ${width} px`).not.toBeNull();
        expect(box!.x + box!.width).toBeLessThanOrEqual(width);
      }
      await page.locator('tr[data-task="short"] details.menu summary').click();
      const items = await page.locator('tr[data-task="short"] .menu-items').boundingBox();
      expect(items!.x).toBeGreaterThanOrEqual(0);
      expect(items!.x + items!.width).toBeLessThanOrEqual(width);
      await screenshot(page, name);
      await page.keyboard.press('Escape');
      expect(await page.locator('details.menu[open]').count()).toBe(0);
    }
    await page.setViewportSize({ width: 820, height: 900 });
    await page.locator('tr[data-task="short"] a.task-link').click();
    await waitForView(page, '#task[data-task="short"]', 'open-task-short');
    for (const width of [820, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const tab of ['conversation', 'diff', 'services', 'log', 'audit', 'events']) {
        await page.locator(`#task button[data-tab="${tab}"]`).click();
        const o = await overflow(page);
        expect(o.scrollWidth, `the ${tab} tab at ${width} px`).toBeLessThanOrEqual(o.innerWidth);
      }
    }
    await screenshot(page, 'task-phone');
  });

  it('shows the task page in tabs, one at a time, the tab in the address', async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'tabs');
    expect(made.code).toBe(0);
    fs.writeFileSync(path.join(made.json.path, 'new.txt'), 'one\n');
    // A command that prints nothing: the log says so, with no empty box.
    expect((await repo.warren('exec', 'tabs', '--', 'true')).code).toBe(0);
    const key = projectKey(repo);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();

    // While the task is read: the tabs' shape, the facts the fleet had.
    const task = await hold(page, '/api/task');
    await page.goto(`${serve.openUrl}#/task/${encodeURIComponent(key)}/tabs`);
    await page.locator('#task-loading[data-task="tabs"] nav.tabs').waitFor();
    expect(task.answered()).toBe(false);
    task.release();
    await waitForView(page, '#task[data-task="tabs"]', 'open-task-tabs');
    await page.unrouteAll();

    const tabs = page.locator('#task nav.tabs [role="tab"]');
    await expect(tabs.evaluateAll((b) => b.map((x) => x.getAttribute('data-tab')))).resolves.toEqual([
      'conversation',
      'diff',
      'services',
      'log',
      'audit',
      'events',
    ]);
    const visiblePanels = () =>
      page
        .locator('#task .tab-panel')
        .evaluateAll((ps) =>
          ps.filter((p) => !(p as { hidden: boolean }).hidden).map((p) => p.getAttribute('data-panel')),
        );
    // No agent has run and nothing runs: the diff first.
    await expect(visiblePanels()).resolves.toEqual(['diff']);
    await expect(page.locator('#task [data-tab="diff"]').getAttribute('aria-selected')).resolves.toBe('true');

    await page.locator('#task [data-tab="log"]').click();
    await expect(visiblePanels()).resolves.toEqual(['log']);
    expect(new URL(page.url()).hash).toBe(`#/task/${encodeURIComponent(key)}/tabs/log`);
    await expect.poll(() => page.locator('#log-status').textContent(), { timeout: 15_000 }).toBe('finished: exit 0');
    await expect(page.locator('#log').isHidden()).resolves.toBe(true);
    await expect(page.locator('#log-empty').isVisible()).resolves.toBe(true);
    await screenshot(page, 'task-tab-log');

    // The arrow keys move along the tabs; a reload opens the tab the address names.
    await page.locator('#task [data-tab="log"]').focus();
    await page.keyboard.press('ArrowRight');
    await expect(visiblePanels()).resolves.toEqual(['audit']);
    await page.locator('#task [data-tab="events"]').click();
    await page.reload();
    await waitForView(page, '#task[data-task="tabs"]', 'reload-task-tabs');
    await expect(visiblePanels()).resolves.toEqual(['events']);
    // An event's kind and its message are apart, each in its own column.
    const created = page.locator('#task ol.timeline li', { hasText: 'task.created' });
    const [kind, message] = await Promise.all([
      created.locator('.kind').boundingBox(),
      created.locator('.msg').boundingBox(),
    ]);
    expect(kind!.x + kind!.width).toBeLessThan(message!.x);
    await screenshot(page, 'task-tab-events');

    // An error banner belongs to its page: going elsewhere clears it.
    await page.evaluate("location.hash = '#/disk/no-such-repository'");
    await page.locator('#notice.error').waitFor();
    await page.evaluate("location.hash = '#/'");
    await page.locator('tr[data-task="tabs"]').waitFor();
    await expect(page.locator('#notice').isHidden()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
  });

  it('shows a comment at its line as soon as it is saved, before the task is read again', async () => {
    const repo = makeRepo({ files: { 'app.js': Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join('') } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'review');
    expect(made.code).toBe(0);
    const file = path.join(made.json.path, 'app.js');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('line 7\n', 'line seven\n'));
    const key = projectKey(repo);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    await page.goto(`${serve.openUrl}#/task/${encodeURIComponent(key)}/review/diff`);
    await waitForView(page, '#task[data-task="review"]', 'open-task-review');

    await page.locator('details.file[data-file="app.js"] tr.line.add[data-line="7"]').click();
    await page.locator('tr.comment-form textarea').fill('Spell it as a number.');
    // The task is not read again until the comment is on the page.
    const reread = await hold(page, '/api/task');
    await page.locator('tr.comment-form button.save').click();
    const atLine = page.locator('details.file[data-file="app.js"] tr.line.add[data-line="7"] + tr.comment-row');
    await atLine.waitFor({ timeout: 15_000 });
    await expect(atLine.textContent()).resolves.toMatch(/^#\d+ open: Spell it as a number\.$/);
    expect(await page.locator('tr.comment-form').count()).toBe(0);
    expect(reread.answered()).toBe(false);
    await screenshot(page, 'comment-at-line');
    reread.release();
    // Read again: still at its line, and listed with the review.
    await page.locator('.review li[data-comment]').waitFor({ timeout: 15_000 });
    await expect(atLine.count()).resolves.toBe(1);
  });

  it('asks for the details with the token like every other read', async () => {
    const repo = makeRepo();
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    expect((await request(`${serve.url}api/fleet/details`)).status).toBe(403);
    const ok = await request(`${serve.url}api/fleet/details`, { headers: { 'x-warren-token': serve.token } });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ tasks: [], strays: [] });
    const foreign = await request(`${serve.url}api/fleet/details`, {
      headers: { 'x-warren-token': serve.token, host: 'evil.example' },
    });
    expect(foreign.status).toBe(421);
  });
});
