import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reviewPrompt } from '../../src/review/prompt.js';
import { openBrowser, screenshot, waitForView } from '../helpers/browser.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { request, startServe } from '../helpers/serve.js';

/**
 * The daily loop in the dashboard (issue 16), in Debian's headless Chromium against a real
 * `warren serve`: the diff shows uncommitted and untracked work file by file, two comments made
 * on its lines reach a stand-in agent with their hunks, and a failed verify is red.
 */

interface Created {
  id: string;
  path: string;
}

interface CommentJson {
  id: number;
  path: string;
  line: number;
  side: 'new' | 'old';
  body: string;
  hunk: string;
  state: string;
}

async function newTask(repo: TestRepo, id: string): Promise<Created> {
  const r = await repo.warrenJson<Created>('new', 'feat', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
}

const noChromium = unavailable(import.meta.filename, 'chromium');

describe.skipIf(noChromium !== null)('the review loop in headless Chromium', () => {
  it('shows uncommitted work file by file, sends two line comments with their hunks to the agent, and resolves them', async () => {
    const recorded = path.join(tmpDir('warren-agent-'), 'prompt.txt');
    const repo = makeRepo({
      files: {
        'src/app.js': Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join(''),
        'README.md': '# app\n',
        // The stand-in agent: records the prompt it gets on stdin, byte for byte.
        'warren.yaml': `agents:\n  recorder: { command: [sh, -c, 'cat > "$0"', ${JSON.stringify(recorded)}], prompt: stdin }\n`,
      },
    });
    const task = await newTask(repo, 'loop');
    // Uncommitted work only: a changed line, a new untracked file (name with a space), a deleted file.
    const app = fs.readFileSync(path.join(task.path, 'src/app.js'), 'utf8').replace('line 12\n', 'line twelve\n');
    fs.writeFileSync(path.join(task.path, 'src/app.js'), app);
    fs.writeFileSync(path.join(task.path, 'new notes.md'), 'first\nsecond\n');
    fs.rmSync(path.join(task.path, 'README.md'));

    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(serve.openUrl);
    await page.locator('tr[data-task="loop"] a.task-link').click();
    await waitForView(page, '#task[data-task="loop"]', 'open-task-loop');

    // The diff of uncommitted work: every file, with its counts; small diffs open.
    const files = page.locator('details.file');
    await expect
      .poll(() =>
        files.evaluateAll((ds) => ds.map((d) => `${d.getAttribute('data-status')} ${d.getAttribute('data-file')}`)),
      )
      .toEqual(['deleted README.md', 'added new notes.md', 'modified src/app.js']);
    await expect(page.locator('details.file[data-file="src/app.js"] summary').textContent()).resolves.toContain(
      '+1 −1',
    );
    await expect(page.locator('details.file[data-file="new notes.md"] tr.line.add').count()).resolves.toBe(2);
    await screenshot(page, 'review-diff');

    // Two comments, on the changed line and on the new file's second line.
    await page.locator('details.file[data-file="src/app.js"] tr.line.add[data-line="12"]').click();
    await page.locator('tr.comment-form textarea').fill('Spell it as a number, like the others.');
    await page.locator('tr.comment-form button.save').click();
    await page.locator('.review li[data-comment]').first().waitFor({ timeout: 15_000 });
    await page.locator('details.file[data-file="new notes.md"] tr.line[data-line="2"]').click();
    await page.locator('tr.comment-form textarea').fill('Say why this file exists.\nIn one line.');
    await page.locator('tr.comment-form button.save').click();
    await expect.poll(() => page.locator('.review li[data-state="open"]').count(), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => page.locator('tr.comment-row').count()).toBe(2);
    await screenshot(page, 'review-comments');

    // The CLI sees the same comments, with the hunk each was made on.
    const listed = await repo.warrenJson<CommentJson[]>('comments', 'loop');
    expect(listed.json.map((c) => [c.path, c.line, c.side, c.state])).toEqual([
      ['src/app.js', 12, 'new', 'open'],
      ['new notes.md', 2, 'new', 'open'],
    ]);
    expect(listed.json[0]?.hunk).toContain('-line 12\n+line twelve');
    expect(listed.json[1]?.hunk).toBe('@@ -0,0 +1,2 @@\n+first\n+second');

    // Send to agent: the stand-in is offered first (the only configured agent) and gets exactly those comments.
    await expect(page.locator('.review select[name="agent"]').inputValue()).resolves.toBe('recorder');
    await page.locator('.review button[data-action="review"]').click();
    await page
      .locator('.toast.info[data-action="review"]', { hasText: 'Sent 2 comment(s) to recorder' })
      .waitFor({ timeout: 30_000 });
    const prompt = fs.readFileSync(recorded, 'utf8');
    expect(prompt).toBe(reviewPrompt(listed.json));
    expect(prompt).toContain('1. src/app.js:12\nSpell it as a number, like the others.\n\n```diff\n@@ ');
    expect(prompt).toContain(
      '2. new notes.md:2\nSay why this file exists.\nIn one line.\n\n```diff\n@@ -0,0 +1,2 @@\n+first\n+second\n```',
    );
    // The agent finished with exit 0: both are resolved, and Send has nothing left to send.
    await expect.poll(() => page.locator('.review li[data-state="resolved"]').count(), { timeout: 15_000 }).toBe(2);
    await expect(page.locator('.review button[data-action="review"]').isDisabled()).resolves.toBe(true);

    // Reopen one from the page; the CLI agrees.
    await page.locator('.review li[data-comment] button.resolve').first().click();
    await expect
      .poll(async () => (await repo.warrenJson<CommentJson[]>('comments', 'loop', '--open')).json.length, {
        timeout: 15_000,
      })
      .toBe(1);
    await screenshot(page, 'review-sent');

    // The favicon is the server's own; nothing was fetched from anywhere else.
    const icon = await request(new URL('/favicon.svg', serve.url).toString());
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    await expect(page.locator('link[rel="icon"]').getAttribute('href')).resolves.toBe('/favicon.svg');
    const origin = new URL(serve.url).origin;
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('shows a failed required verify in red (fleet and task), the results as a table, and no Land on a landed task', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# test\n',
        // The required check fails; the optional one after it passes: the last command's exit is 0.
        'warren.yaml':
          'verify:\n  - { id: unit, run: "test -f feature.js", required: true }\n  - { id: lint, run: "true", required: false }\n',
      },
    });
    await newTask(repo, 'red');
    const failed = await repo.warren('verify', 'red');
    expect(failed.code).toBe(1);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    await page.goto(serve.openUrl);
    const row = page.locator('tr[data-task="red"]');
    await row.waitFor();
    await expect(row.locator('[data-verify]').getAttribute('data-verify')).resolves.toBe('failed');
    await expect(row.locator('[data-verify]').textContent()).resolves.toBe('failed: unit');
    await expect(row.locator('[data-verify]').getAttribute('class')).resolves.toContain('bad');
    // The last run was `lint` (exit 0), yet what shows is the verify's outcome, in red.
    await expect(row.locator('[data-outcome]').getAttribute('data-outcome')).resolves.toBe('failed');
    await expect(row.locator('[data-outcome]').getAttribute('class')).resolves.toContain('bad');
    await screenshot(page, 'fleet-verify-failed');

    await row.locator('a.task-link').click();
    await waitForView(page, '#task[data-task="red"]', 'open-task-red');
    const results = page.locator('table.results');
    await expect(results.locator('th').allTextContents()).resolves.toEqual([
      'command',
      'result',
      'exit',
      'required',
      'took',
      'why',
    ]);
    await expect(
      results
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent))),
    ).resolves.toEqual([
      ['unit', 'failed', '1', 'yes'],
      ['lint', 'passed', '0', 'no'],
    ]);
    expect(await page.locator('pre.data').count()).toBe(0);

    // Fixed, verified, checkpointed and landed: green, and Land is no longer offered.
    fs.writeFileSync(
      path.join((await repo.warrenJson<{ path: string }>('path', 'red')).json.path, 'feature.js'),
      'export {};\n',
    );
    expect((await repo.warren('verify', 'red')).code).toBe(0);
    expect((await repo.warren('checkpoint', 'red', '-m', 'add the feature')).code).toBe(0);
    const landed = await repo.warren('land', 'red');
    expect(landed.code, landed.stderr).toBe(0);
    await page.locator('a', { hasText: '← fleet' }).click();
    await expect.poll(() => row.locator('td[data-col="state"]').textContent(), { timeout: 15_000 }).toBe('landed');
    await expect(row.locator('[data-verify]').getAttribute('data-verify')).resolves.toBe('passed');
    expect(await row.locator('button[data-action="land"]').count()).toBe(0);
    expect(await row.locator('button[data-action="rm"]').count()).toBe(1);
    expect(repo.git('log', '-1', '--format=%s%n%(trailers:key=Warren-Task,valueonly)', 'main')).toBe(
      'add the feature\nred',
    );
  });
});
