import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBrowser, screenshot, waitForView } from '../helpers/browser.js';
import { AGENT_CLI_BIN, unavailable } from '../helpers/capabilities.js';
import { COMMAND, FINAL, NOTE, sendsToolResults, startModelServer } from '../helpers/model-server.js';
import { makeRepo, tmpDir } from '../helpers/repo.js';
import { request, startServe } from '../helpers/serve.js';

/**
 * Starting an agent from the page and following its conversation: the real claude CLI, run by
 * a real `warren serve` against the scripted model server, its transcript streamed into
 * headless Chromium while the turn is still going.
 */

const noChromium = unavailable(import.meta.filename, 'chromium');
const noClaude = unavailable(import.meta.filename, 'claude-cli');

describe.skipIf(noChromium !== null || noClaude !== null)('an agent started from the dashboard', () => {
  it(
    'makes the task, runs claude in it, and streams its turns and tool calls while it works',
    { timeout: 180_000 },
    async () => {
      // The final answer is held back until the page has shown the tool calls: the stream is live.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const server = await startModelServer({
        hold: ({ path: url, body }) => (url.startsWith('/v1/messages') && sendsToolResults(body) ? gate : undefined),
      });
      const repo = makeRepo({ name: 'shop', files: { 'README.md': '# shop\n' } });
      const userHome = tmpDir('warren-claude-user-');
      const serve = await startServe({
        cwd: repo.root,
        home: repo.home,
        env: {
          PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
          HOME: userHome,
          CLAUDE_CONFIG_DIR: '',
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'scripted',
        },
      });
      const { page, dialogs } = await openBrowser();
      try {
        await page.goto(serve.openUrl);
        await page.locator('#live.on').waitFor();

        await page.locator('section.project button[data-action="agent"]').click();
        await page.locator('dialog#confirm[open]').waitFor();
        await expect(page.locator('#confirm-text').textContent()).resolves.toBe('Start agent in repository shop');
        await expect(page.locator('dialog#confirm select[name="agent"]').inputValue()).resolves.toBe('claude');
        await page
          .locator('dialog#confirm textarea[name="prompt"]')
          .fill('Write the note,\nthen record where you are. <img src=x onerror="window.pwned=1">');
        await page.locator('dialog#confirm input[name="id"]').fill('note');
        await screenshot(page, 'start-agent-dialog');
        await page.locator('#confirm-ok').click();

        // The page goes to the new task and follows the conversation as the CLI writes it.
        await waitForView(page, '#task[data-task="note"]', 'agent-task');
        const transcript = page.locator('#transcript');
        await expect
          .poll(() => transcript.locator('.turn').allTextContents(), { timeout: 60_000 })
          .toEqual([
            'promptWrite the note,\nthen record where you are. <img src=x onerror="window.pwned=1">',
            // Each result under its call, though claude called both tools before either answered.
            expect.stringMatching(/^Write\/.*\/note\/agent-note\.txt$/),
            expect.stringMatching(/^File created successfully/),
            `Bash${COMMAND}`,
            '(Bash completed with no output)',
          ]);
        await expect(page.locator('#transcript-status').textContent()).resolves.toMatch(
          /^claude · session [0-9a-f-]{36} · running…$/,
        );
        await screenshot(page, 'task-agent-transcript');

        // The model answers: the final words arrive in the open page, and the run ends.
        release();
        await expect
          .poll(() => transcript.locator('.turn.text .said').allTextContents(), { timeout: 60_000 })
          .toEqual([FINAL]);
        await expect
          .poll(() => page.locator('#transcript-status').textContent(), { timeout: 30_000 })
          .toMatch(/ · finished$/);
        await expect
          .poll(() => page.locator('#log-status').textContent(), { timeout: 30_000 })
          .toBe('finished: exit 0');

        // It ran where the dashboard said: the task's workspace, through `warren run`'s own call.
        const shown = await repo.warrenJson<{ path: string; data: { agentSessions?: { agent: string }[] } }>(
          'show',
          'note',
        );
        expect(fs.readFileSync(path.join(shown.json.path, 'agent-note.txt'), 'utf8')).toBe(NOTE);
        expect(shown.json.data.agentSessions?.map((s) => s.agent)).toEqual(['claude']);
        // The transcript is hostile text too: shown, never run or made into elements.
        expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
        expect(await page.locator('#transcript img').count()).toBe(0);
        expect(dialogs).toEqual([]);
      } finally {
        release();
      }
    },
  );
});

describe.skipIf(noClaude !== null)('stopping the dashboard while an agent it started works', () => {
  it('ends the agent as ctrl-c ends `warren run`, records it, then exits', { timeout: 120_000 }, async () => {
    // The model never gives its final answer: the agent is mid-turn when the server is stopped.
    let asked: () => void = () => undefined;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const never = new Promise<void>(() => undefined);
    const server = await startModelServer({
      hold: ({ path: url, body }) => {
        if (!url.startsWith('/v1/messages') || !sendsToolResults(body)) return undefined;
        asked();
        return never;
      },
    });
    const repo = makeRepo({ files: { 'README.md': '# t\n' } });
    const serve = await startServe({
      cwd: repo.root,
      home: repo.home,
      json: true,
      env: {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: tmpDir('warren-claude-user-'),
        CLAUDE_CONFIG_DIR: '',
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'scripted',
      },
    });
    const meta = JSON.parse((await request(`${serve.url}api/meta?token=${serve.token}`)).body) as { project: string };
    const started = await request(`${serve.url}api/actions/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-warren-token': serve.token },
      body: JSON.stringify({
        project: meta.project,
        options: { agent: 'claude', prompt: 'Go.', id: 'held', type: 'feat' },
      }),
    });
    expect(started.status, started.body).toBe(200);
    expect(JSON.parse(started.body).result.run).toMatchObject({ agent: 'claude', started: true });
    await waiting;

    const exited = new Promise<number | null>((resolve) => serve.child.once('exit', resolve));
    const t0 = Date.now();
    serve.child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000);
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'held');
    // The run's end is recorded (its event's payload carries the run's kind, `agent`, in `show`).
    expect(shown.json.events.map((e) => e.message)).toContainEqual(
      expect.stringMatching(/^agent claude: canceled by SIGINT to warren; ended with SIG[A-Z]+ after \d+ms/),
    );
  });
});
