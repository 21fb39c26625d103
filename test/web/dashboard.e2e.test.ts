import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { networkServiceOf, openBrowser, screenshot, waitForView } from '../helpers/browser.js';
import { unavailable } from '../helpers/capabilities.js';
import { gitIn, makeRepo, runCli, type TestRepo } from '../helpers/repo.js';
import { startServe } from '../helpers/serve.js';

/**
 * The dashboard driven in Debian's headless Chromium against a real `warren serve` process and
 * the real CLI in the same repository.
 */

interface Created {
  id: string;
  path: string;
}

async function newTask(repo: TestRepo, id: string): Promise<Created> {
  const r = await repo.warrenJson<Created>('new', 'feat', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
}

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

const noChromium = unavailable(import.meta.filename, 'chromium');

describe.skipIf(noChromium !== null)('dashboard in headless Chromium', () => {
  it(
    'shows a CLI-created task live, streams its log, verifies, lands and removes it from the page',
    { timeout: 180_000 },
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# test\n',
          'warren.yaml': 'verify:\n  - { id: feature, run: "test -f feature.js", required: true }\n',
        },
      });
      const first = await newTask(repo, 'first');
      const serve = await startServe({ cwd: repo.root, home: repo.home });
      const { page, dialogs } = await openBrowser();

      await page.goto(serve.openUrl);
      await page.locator('tr[data-task="first"]').waitFor();
      await page.locator('#live.on').waitFor();
      // Set a marker: if the page reloaded, it would be gone.
      await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));

      // Created from the CLI, in another process: appears without a reload.
      await newTask(repo, 'second');
      await page.locator('tr[data-task="second"]').waitFor({ timeout: 15_000 });
      expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
      await expect(page.locator('tr[data-task="second"] td[data-col="state"]').textContent()).resolves.toBe('ready');
      await screenshot(page, 'fleet');

      // Open it; a real `warren exec` starts and its log grows while the page watches.
      await page.locator('tr[data-task="second"] a.task-link').click();
      await waitForView(page, '#task[data-task="second"]', 'open-task-second');
      // The log has its own tab; the page stays on it as the command runs.
      await page.locator('#task button[data-tab="log"]').click();
      const gate = path.join(path.dirname(repo.root), 'go');
      const script = [
        // Colours, as test runners print them: drawn, never shown as escape codes.
        String.raw`printf '\033[1;32mstep 1:\033[0m installing \033[31mred\033[39m\033[2K\n'`,
        `while [ ! -f '${gate}' ]; do sleep 0.05; done`,
        'echo "step 2: testing <script>window.pwned=1</script>"',
        'echo "export const feature = 1;" > feature.js',
        'echo done',
      ].join('; ');
      const exec = repo.warren('exec', 'second', '--timeout', '2m', '--', 'sh', '-c', script);
      await expect
        .poll(
          () =>
            page
              .locator('#log')
              .textContent()
              .catch(() => ''),
          { timeout: 30_000 },
        )
        .toContain('step 1: installing red\n');
      expect(await page.locator('#log').textContent()).not.toContain('\x1b');
      await expect(page.locator('#log span.ansi-fg2.ansi-bold').textContent()).resolves.toBe('step 1:');
      await expect(page.locator('#log span.ansi-fg1').textContent()).resolves.toBe('red');
      await expect(page.locator('#log-status').textContent()).resolves.toBe('running…');
      await screenshot(page, 'task-log-running');
      fs.writeFileSync(gate, '');
      const ran = await exec;
      expect(ran.code, ran.stderr).toBe(0);
      await expect.poll(() => page.locator('#log-status').textContent(), { timeout: 15_000 }).toBe('finished: exit 0');
      await expect
        .poll(() => page.locator('#log').textContent(), { timeout: 15_000 })
        .toContain('step 2: testing <script>window.pwned=1</script>\ndone');
      expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
      await screenshot(page, 'task');

      // Verify from the page runs warren.yaml's verify commands through the same library call.
      await page.locator('#task button[data-action="verify"]').click();
      await page.locator('.toast.info[data-action="verify"]').waitFor({ timeout: 30_000 });
      // The result read as the CLI reads it, not as JSON.
      const verified = await page.locator('.toast.info[data-action="verify"] .details li').allTextContents();
      expect(verified[0]).toBe('passed');
      expect(verified[1]).toMatch(/^feature: passed \(exit 0, \d+(ms|\.\ds)\)$/);
      expect(verified[2]).toMatch(/^log \/.+\.log$/);
      await expect
        .poll(
          async () =>
            (await repo.warrenJson<{ data: { verify?: { passed: boolean } } }>('show', 'second')).json.data.verify
              ?.passed ?? null,
          { timeout: 30_000 },
        )
        .toBe(true);

      // Checkpoint and land from the page: the task moves to landed and the base has its work.
      await page.locator('#task button[data-action="checkpoint"]').click();
      await page.locator('.toast.info[data-action="checkpoint"]').waitFor({ timeout: 30_000 });
      await expect(
        page.locator('.toast.info[data-action="checkpoint"] .details li').first().textContent(),
      ).resolves.toMatch(/^committed [0-9a-f]{12} on feat\/second$/);
      await page.locator('#task button[data-action="land"]').click();
      await page.locator('dialog#confirm[open]').waitFor();
      await page.locator('#confirm-ok').click();
      await expect
        .poll(async () => (await repo.warrenJson<{ state: string }>('show', 'second')).json.state, { timeout: 30_000 })
        .toBe('landed');
      expect(fs.readFileSync(path.join(repo.root, 'feature.js'), 'utf8')).toBe('export const feature = 1;\n');
      await page.locator('a', { hasText: '← fleet' }).click();
      await expect
        .poll(() => page.locator('tr[data-task="second"] td[data-col="state"]').textContent(), { timeout: 15_000 })
        .toBe('landed');
      // Landed: the commit it became on the base, and nothing that no longer applies.
      const landed = (await repo.warrenJson<{ data: { landed: { commit: string } } }>('show', 'second')).json.data
        .landed.commit;
      await expect(page.locator('tr[data-task="second"] td[data-col="drift"]').textContent()).resolves.toBe(
        `landed as ${landed.slice(0, 12)}`,
      );
      await screenshot(page, 'fleet-landed');
      await page.locator('tr[data-task="second"] a.task-link').click();
      await waitForView(page, '#task[data-task="second"]', 'reopen-task-second');
      await expect(page.locator('#task dl.kv').textContent()).resolves.toContain(
        `landedlanded as ${landed.slice(0, 12)}`,
      );
      const taskText = (await page.locator('#task').textContent()) ?? '';
      expect(taskText).not.toContain('Commits not on');
      expect(taskText).not.toMatch(/\d+ behind/);
      expect(
        await page.locator('#task button[data-action="verify"], #task button[data-action="checkpoint"]').count(),
      ).toBe(0);
      await screenshot(page, 'task-landed');

      // Remove it from the page, through the confirmation; it leaves the fleet.
      await page.locator('#task button[data-action="rm"]').click();
      await page.locator('dialog#confirm[open]').waitFor();
      await page.locator('#confirm-ok').click();
      await page.locator('#fleet').waitFor();
      await page.locator('tr[data-task="second"]').waitFor({ state: 'detached', timeout: 15_000 });
      const list = await repo.warrenJson<{ id: string }[]>('list');
      expect(list.json.map((t) => t.id)).toEqual(['first']);

      // A guard's refusal is shown exactly as the CLI words it.
      fs.writeFileSync(path.join(first.path, 'unsaved.txt'), 'work in progress\n');
      // A row's actions are in its menu.
      await page.locator('tr[data-task="first"] details.menu summary').click();
      await page.locator('tr[data-task="first"] button[data-action="rm"]').click();
      await page.locator('#confirm-ok').click();
      const refusal = page.locator('.toast.error[data-action="rm"]');
      await refusal.waitFor();
      const cli = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('rm', 'first');
      expect(cli.code).toBe(1);
      await expect(refusal.locator('.msg').textContent()).resolves.toBe(cli.json.error.message);
      await expect(refusal.locator('.hint').textContent()).resolves.toBe(`hint: ${cli.json.error.hint}`);
      await expect(refusal.locator('strong').textContent()).resolves.toBe('WORKSPACE_DIRTY');
      expect(fs.existsSync(first.path)).toBe(true);
      // The page re-reads after a refusal: the uncommitted file now counts.
      await expect
        .poll(() => page.locator('tr[data-task="first"] td[data-col="changes"]').textContent(), { timeout: 15_000 })
        .toBe('1');
      await screenshot(page, 'refusal');
      expect(dialogs).toEqual([]);
    },
  );

  it('opens from the printed URL, takes the token out of the address bar and keeps it for a reload; without it, says how to open it and shows nothing', async () => {
    const repo = makeRepo();
    await newTask(repo, 'first');
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    const apiCalls: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/')) apiCalls.push(r.url());
    });

    // The bare address: the page knows no token, asks the server nothing and says where the token is.
    await page.goto(serve.url);
    await waitForView(page, '#locked', 'locked-bare');
    await expect(page.locator('#locked').textContent()).resolves.toBe(
      'This dashboard needs its tokenOpen the address warren serve printed: it ends in ?token=…. Or add ?token= and the contents of $WARREN_HOME/dashboard/token (by default ~/.warren/dashboard/token) to this address.',
    );
    expect(await page.locator('tr[data-task]').count()).toBe(0);
    await expect(page.locator('#scope').textContent()).resolves.toBe('');
    expect(apiCalls).toEqual([]);
    await screenshot(page, 'locked');

    // The printed URL: the dashboard, with the token gone from the address (the route kept).
    await page.goto(`${serve.openUrl}#/`);
    await waitForView(page, 'tr[data-task="first"]', 'opened-with-token');
    expect(page.url()).toBe(`${serve.url}#/`);
    await page.reload();
    await waitForView(page, 'tr[data-task="first"]', 'reloaded');
    await page.locator('#live.on').waitFor();

    // A wrong token (another WARREN_HOME's, or a replaced one): the same message, and it is forgotten.
    const other = await openBrowser();
    await other.page.goto(`${serve.url}?token=${'f'.repeat(64)}`);
    await waitForView(other.page, '#locked', 'locked-wrong-token');
    expect(await other.page.locator('tr[data-task]').count()).toBe(0);
    await expect(other.page.evaluate('sessionStorage.length')).resolves.toBe(0);
    expect([...dialogs, ...other.dialogs]).toEqual([]);
  });

  it('renders hostile branch names, file names, commit messages, events and log lines as inert text', async () => {
    const repo = makeRepo();
    const task = await newTask(repo, 'inj');
    const project = projectKey(repo);
    const fileName = '<img src=x onerror="window.pwned=2">.txt';
    const subject = '<script>window.pwned=3</script> fix \x1b]52;c;ZXZpbA==\x07';
    // Control characters show as the terminal shows them: escapes, never obeyed or hidden.
    const controlName = 'ctl\x1b[1A\x1b[2K\u202eevil\u009b.txt';
    fs.writeFileSync(path.join(task.path, fileName), 'x\n');
    fs.writeFileSync(path.join(task.path, controlName), 'x\n');
    gitIn(task.path, 'add', '-A');
    gitIn(task.path, 'commit', '-q', '-m', subject);
    const hostileBranch = 'feat/<script>window.pwned=4</script>';
    const store = openStore(repo.home);
    try {
      // A row no CLI could write (IDs are checked) but a database could hold: still inert.
      store.insertTask({
        project,
        id: 'ghost',
        type: 'feat',
        branch: hostileBranch,
        path: path.join(repo.home, 'nowhere', 'ghost'),
        base: 'main',
        baseCommit: repo.git('rev-parse', 'HEAD'),
        state: 'ready',
        data: {},
      });
      // Written as raw rows: the typed API would not let warren write these, but a database can hold them.
      const provision = [
        {
          path: '<b>vendor</b>',
          mode: 'copy',
          requested: 'copy',
          isolated: true,
          entries: 1,
          bytes: 1,
          ms: 1,
          method: 'cp -a',
          source: '/x',
          manifest: '/nowhere/m.json',
        },
      ];
      store.db
        .prepare('UPDATE tasks SET data = ? WHERE project = ? AND id = ?')
        .run(JSON.stringify({ provision }), project, 'ghost');
      const insert = store.db.prepare(
        "INSERT INTO events (at, project, task_id, kind, level, message, data) VALUES (?, ?, 'inj', ?, ?, ?, ?)",
      );
      insert.run(new Date().toISOString(), project, 'note', 'info', '<script>window.pwned=5</script>', '{}');
      insert.run(
        new Date().toISOString(),
        project,
        'verify.failed',
        'warn',
        'verify failed: <b>unit</b>',
        JSON.stringify({ log: '', results: [{ id: '<b>unit</b>', exitCode: 1, required: true, durationMs: 5 }] }),
      );
    } finally {
      store.close();
    }
    // A second repository under the same WARREN_HOME, for the "all repositories" view.
    const other = makeRepo({ name: 'other' });
    const made = await runCli(['new', 'fix', 'elsewhere'], { cwd: other.root, home: repo.home });
    expect(made.code, made.stderr).toBe(0);

    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    await page.goto(serve.openUrl);
    await page.locator('tr[data-task="ghost"]').waitFor();
    await expect(page.locator('tr[data-task="ghost"] td[data-col="branch"]').textContent()).resolves.toBe(
      hostileBranch,
    );
    // The provisioned paths come with the details, read after the fleet.
    await expect
      .poll(() => page.locator('tr[data-task="ghost"] td[data-col="provision"]').textContent(), { timeout: 15_000 })
      .toContain('<b>vendor</b>');
    // The ghost's directory does not exist: scan reports it among the strays, also as text.
    await page.locator('tr[data-stray="vanished"]').waitFor();
    expect(await page.locator('tr[data-task="elsewhere"]').count()).toBe(0);
    await page.locator('#all-repos').check();
    await page.locator('tr[data-task="elsewhere"]').waitFor();
    await screenshot(page, 'fleet-all-repositories');
    // An action on another repository's task goes through that repository's own context.
    await page.locator('tr[data-task="elsewhere"] details.menu summary').click();
    await page.locator('tr[data-task="elsewhere"] button[data-action="rm"]').click();
    await page.locator('#confirm-ok').click();
    await page.locator('tr[data-task="elsewhere"]').waitFor({ state: 'detached', timeout: 15_000 });
    const otherList = await runCli(['--json', 'list'], { cwd: other.root, home: repo.home });
    expect(JSON.parse(otherList.stdout)).toEqual([]);
    await page.locator('#all-repos').uncheck();

    await page.locator('tr[data-task="inj"] a.task-link').click();
    await page.locator('#task[data-task="inj"]').waitFor();
    const text = (await page.locator('#task').textContent()) ?? '';
    expect(text).toContain(fileName);
    expect(text).toContain('<script>window.pwned=3</script> fix \\x1b]52;c;ZXZpbA==\\x07');
    expect(text).toContain('ctl\\x1b[1A\\x1b[2K\\u202eevil\\x9b.txt');
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(text).toContain('<script>window.pwned=5</script>');
    await expect(page.locator('table.results td').first().textContent()).resolves.toBe('<b>unit</b>');
    await screenshot(page, 'task-hostile-text');

    // Inert: nothing ran, no element came from the data, no alert or prompt.
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('img, b').count()).toBe(0);

    // gc from the page: the vanished ghost's record goes, and the page says what it did.
    await page.locator('a', { hasText: '← fleet' }).click();
    await page.locator('section.project button[data-action="gc"]').click();
    await page.locator('#confirm-ok').click();
    await expect
      .poll(() => page.locator('.toast.info[data-action="gc"] .details li').allTextContents(), { timeout: 15_000 })
      .toEqual([`removed vanished ${path.join(repo.home, 'nowhere', 'ghost')} (ghost)`]);
    await page.locator('tr[data-task="ghost"]').waitFor({ state: 'detached', timeout: 15_000 });
    // The strays come with the details, read after the fleet.
    await expect.poll(() => page.locator('tr[data-stray]').count(), { timeout: 15_000 }).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('creates a task from the page: the New task dialog, its warnings, and a refused ID that changes nothing', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# test\n',
        '.gitignore': '.env\n',
        // One path that is not there: the skip must reach the page as a warning.
        'warren.yaml': 'provision:\n  - { path: .env, mode: copy }\nsetup:\n  - { id: mark, run: "touch setup-ran" }\n',
      },
    });
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    await page.goto(serve.openUrl);
    await page.locator('#live.on').waitFor();

    // A refused ID: the server's own message, and nothing made.
    await page.locator('section.project button[data-action="new"]').click();
    await page.locator('dialog#confirm[open]').waitFor();
    // The repository's name, not warren's internal key for it.
    await expect(page.locator('#confirm-text').textContent()).resolves.toBe('New task in repository repo');
    // No ID at all: the server's refusal, which has no hint, and nothing else (no "null").
    await page.locator('#confirm-ok').click();
    const newToast = page.locator('.toast[data-action="new"]').last();
    await expect
      .poll(() => newToast.textContent(), { timeout: 15_000 })
      .toBe('USAGE"new" needs option "id"; nothing was changed.×');
    await page.locator('section.project button[data-action="new"]').click();
    await page.locator('dialog#confirm[open]').waitFor();
    await page.locator('dialog#confirm input[name="id"]').fill('../escape');
    await page.locator('#confirm-ok').click();
    await expect.poll(() => newToast.textContent(), { timeout: 15_000 }).toContain('Nothing was created');
    // Its pending row went with the refusal.
    expect(await page.locator('tr[data-pending]').count()).toBe(0);
    expect(gitIn(repo.root, 'branch', '--list').trim()).toBe('* main');

    // A real one: type from the list, setup runs, the skip is shown, the row appears.
    await page.locator('section.project button[data-action="new"]').click();
    await page.locator('dialog#confirm[open]').waitFor();
    await page.locator('dialog#confirm select[name="type"]').selectOption('fix');
    await page.locator('dialog#confirm input[name="id"]').fill('from-page');
    await screenshot(page, 'new-task-dialog');
    await page.locator('#confirm-ok').click();
    await page.locator('tr[data-task="from-page"]:not([data-pending])').waitFor({ timeout: 30_000 });
    // The row can come from the fleet's refresh before the answer's toast is shown: wait for the toast.
    const details = page.locator('.toast.info[data-action="new"] .details li');
    await expect
      .poll(async () => (await details.allTextContents())[0] ?? '', { timeout: 30_000 })
      .toMatch(/^ready: fix\/from-page at \//);
    const lines = await details.allTextContents();
    expect(lines.some((l) => l.startsWith('warn: skipped .env (missing)'))).toBe(true);
    await expect(page.locator('tr[data-task="from-page"] td[data-col="type"]').textContent()).resolves.toBe('fix');

    // The same task the command line sees, made by the same library call.
    const shown = await repo.warrenJson<{ state: string; branch: string; path: string }>('show', 'from-page');
    expect(shown.json.state).toBe('ready');
    expect(shown.json.branch).toBe('fix/from-page');
    expect(fs.existsSync(path.join(shown.json.path, 'setup-ran'))).toBe(true);

    // The same ID again: refused by the same guard as `warren new`, the first task untouched.
    await page.locator('section.project button[data-action="new"]').click();
    await page.locator('dialog#confirm input[name="id"]').fill('from-page');
    await page.locator('#confirm-ok').click();
    await expect.poll(() => newToast.getAttribute('class'), { timeout: 15_000 }).toBe('toast error');
    expect(await newToast.locator('.msg').textContent()).toContain('from-page');
    expect(fs.existsSync(path.join(shown.json.path, 'setup-ran'))).toBe(true);
    expect(dialogs).toEqual([]);
  });

  it("offers Trust while warren.yaml's commands are untrusted: shows the set as `warren trust` does, then trusts that set", async () => {
    const repo = makeRepo({
      trusted: false,
      files: {
        'README.md': '# test\n',
        'warren.yaml': 'setup:\n  - { id: mark, run: "touch setup-ran" }\nverify:\n  - { id: unit, run: "true" }\n',
      },
    });
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    await page.goto(serve.openUrl);
    await page.locator('#live.on').waitFor();
    await expect(page.locator('p[data-untrusted]').textContent()).resolves.toContain(
      "warren.yaml's commands are not trusted yet",
    );

    await page.locator('section.project button[data-action="trust"]').click();
    await page.locator('dialog#confirm[open]').waitFor();
    const cli = await repo.warrenJson<{ hash: string; trusted: boolean }>('trust');
    expect(cli.json.trusted).toBe(false);
    await expect(page.locator('#confirm-text').textContent()).resolves.toContain(
      `sha256 ${cli.json.hash.slice(0, 12)}`,
    );
    await expect(page.locator('dialog pre.trust-set').textContent()).resolves.toBe(
      'setup mark: touch setup-ran\nverify unit: true\n',
    );
    // The set and nothing else (no stray "null" for an absent part).
    await expect(page.locator('#confirm-options').textContent()).resolves.toBe(
      'setup mark: touch setup-ran\nverify unit: true\n',
    );
    await screenshot(page, 'trust-dialog');
    await page.locator('#confirm-ok').click();
    await page.locator('.toast.info[data-action="trust"]').waitFor({ timeout: 15_000 });
    await expect(page.locator('.toast.info[data-action="trust"] .details li').textContent()).resolves.toBe(
      `trusted 2 command(s) and setting(s) (sha256 ${cli.json.hash.slice(0, 12)})`,
    );
    // The same record `warren trust` reads; the button and the warning go.
    const after = await repo.warrenJson<{ trusted: boolean; hash: string }>('trust');
    expect(after.json).toMatchObject({ trusted: true, hash: cli.json.hash });
    await page.locator('section.project button[data-action="trust"]').waitFor({ state: 'detached', timeout: 15_000 });
    expect(await page.locator('p[data-untrusted]').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('links the ports a dev server listens on, and opens the workspace in an editor', async () => {
    const repo = makeRepo();
    const dev = await newTask(repo, 'dev');
    const ports = (await repo.warrenJson<{ data: { ports: { first: number } } }>('show', 'dev')).json.data.ports;
    const gate = path.join(path.dirname(repo.root), 'stop');
    // A small dev server on $WARREN_PORT, run by `warren exec` as a task's command would be.
    const script = [
      "const http = require('node:http'), fs = require('node:fs');",
      "http.createServer((q, r) => r.end('hello from dev on ' + process.env.WARREN_PORT)).listen(Number(process.env.WARREN_PORT), '127.0.0.1');",
      `setInterval(() => fs.existsSync(${JSON.stringify(gate)}) && process.exit(0), 50);`,
    ].join('\n');
    // The user's own editor command (config.yaml): the page offers it beside the links.
    const opened = path.join(path.dirname(repo.root), 'opened');
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), `editor: [sh, -c, 'printf %s "$1" > ${opened}', sh]\n`);
    const exec = repo.warren('exec', 'dev', '--timeout', '2m', '--', process.execPath, '-e', script);
    try {
      const serve = await startServe({ cwd: repo.root, home: repo.home });
      const { context, page, dialogs } = await openBrowser();
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${ports.first}/`).then(
              (r) => r.text(),
              () => '',
            ),
          { timeout: 30_000 },
        )
        .toBe(`hello from dev on ${ports.first}`);
      await page.goto(`${serve.openUrl}#/task/${encodeURIComponent(projectKey(repo))}/dev`);
      await waitForView(page, '#task[data-task="dev"]', 'open-task-dev');
      const link = page.locator(`#task a.endpoint[data-port="${ports.first}"]`);
      await expect(link.getAttribute('href')).resolves.toBe(`http://127.0.0.1:${ports.first}/`);
      // Only what listens is a link. A server of another test, sharing the machine's ports, may hold
      // another port of the block for a moment: such a port takes a connection, or its link goes at
      // the page's next refresh once that server has stopped.
      const linkedPorts = () =>
        page.locator('#task a.endpoint').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-port'))));
      const linked = await linkedPorts();
      expect(linked).toContain(ports.first);
      expect(linked.length).toBeLessThan(10);
      expect(await takesConnection(ports.first)).toBe(true);
      for (const port of linked.filter((p) => p !== ports.first))
        await expect
          .poll(async () => (await takesConnection(port)) || !(await linkedPorts()).includes(port), {
            timeout: 30_000,
            message: `port ${port} is linked but takes no connection`,
          })
          .toBe(true);
      await expect(page.locator('#task a[data-editor="vscode"]').getAttribute('href')).resolves.toBe(
        `vscode://file${dev.path}`,
      );
      await expect(page.locator('#task a[data-editor="cursor"]').getAttribute('href')).resolves.toBe(
        `cursor://file${dev.path}`,
      );
      await page.locator('#task button[data-action="open"]').click();
      await expect
        .poll(() => (fs.existsSync(opened) ? fs.readFileSync(opened, 'utf8') : ''), { timeout: 15_000 })
        .toBe(dev.path);
      await expect(page.locator('.toast.info[data-action="open"] .msg').textContent()).resolves.toMatch(
        /^Opened \/.+\/dev with sh -c /,
      );
      await screenshot(page, 'task-port-link');
      const [tab] = await Promise.all([context.waitForEvent('page'), link.click()]);
      await tab.waitForLoadState();
      await expect(tab.locator('body').textContent()).resolves.toBe(`hello from dev on ${ports.first}`);
      await tab.close();

      // The server stops: the link goes with it.
      fs.writeFileSync(gate, '');
      expect((await exec).code).toBe(0);
      // (Its own port's link: another test's server may hold another port of the block meanwhile.)
      await link.waitFor({ state: 'detached', timeout: 15_000 });
      expect(dialogs).toEqual([]);
    } finally {
      fs.writeFileSync(gate, '');
      await exec;
    }
  });

  it('gives up a read the server does not answer, says so, and refreshes again once it answers', async () => {
    const repo = makeRepo();
    await newTask(repo, 'one');
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page } = await openBrowser();
    // The page's clock is the test's: its 20 s read timeout is run forward instead of waited for.
    await page.clock.install();
    await page.goto(serve.openUrl);
    await page.locator('tr[data-task="one"]').waitFor();
    // The server hangs (stopped, its socket open): the next read cannot be answered.
    serve.child.kill('SIGSTOP');
    try {
      await page.evaluate("location.hash = '#/task/x/one'");
      // Not given up before its time…
      await page.clock.runFor(5_000);
      expect(await page.locator('#notice').textContent()).not.toMatch(/TIMEOUT/);
      // …and given up once it has passed.
      await page.clock.fastForward(16_000);
      await expect
        .poll(() => page.locator('#notice').textContent(), { timeout: 30_000, interval: 200 })
        .toMatch(/TIMEOUT.*did not answer \/api\/task within 20 s/);
    } finally {
      serve.child.kill('SIGCONT');
    }
    // Not wedged: the next change of route is served.
    await page.evaluate("location.hash = '#/'");
    await waitForView(page, 'tr[data-task="one"]', 'after-timeout');
  }, 60_000);

  it('a page that fell behind a loud command shows how many bytes it skipped, then the end of the log', async () => {
    const repo = makeRepo();
    await newTask(repo, 'loud');
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, profile } = await openBrowser();
    await page.goto(`${serve.openUrl}#/task/${encodeURIComponent(projectKey(repo))}/loud`);
    await waitForView(page, '#task[data-task="loud"]', 'open-task-loud');
    const gate = path.join(path.dirname(repo.root), 'go');
    const exec = repo.warren(
      'exec',
      'loud',
      '--timeout',
      '2m',
      '--',
      'sh',
      '-c',
      `echo first; while [ ! -f '${gate}' ]; do sleep 0.05; done; seq 1 3000000; echo last`,
    );
    await expect
      .poll(
        () =>
          page
            .locator('#log')
            .textContent()
            .catch(() => ''),
        { timeout: 30_000 },
      )
      .toContain('first');
    // The browser stops reading: its network service is stopped (SIGSTOP), so the socket's buffers
    // fill (a few MB) and the server's writes back up while the command writes ~21 MB. Pausing the
    // page's script instead, with or without CDP's network throttling, left it to how much the
    // browser buffers: one CI run in six, then one local run in seventeen, showed no skip.
    const network = networkServiceOf(profile);
    process.kill(network, 'SIGSTOP');
    let ran;
    try {
      fs.writeFileSync(gate, '');
      ran = await exec;
    } finally {
      process.kill(network, 'SIGCONT');
    }
    expect(ran.code, ran.stderr).toBe(0);
    await expect.poll(() => page.locator('#log-status').textContent(), { timeout: 60_000 }).toBe('finished: exit 0');
    const marker = await page.locator('#log .log-skip', { hasText: 'bytes skipped' }).first().textContent();
    expect(marker).toMatch(
      /^\n\[… [\d,]+ bytes skipped: this page fell behind the command; the whole output is in \/.+\.log\]\n$/,
    );
    expect(await page.locator('#log').textContent()).toMatch(/\n2999999\n3000000\nlast\n$/);
  }, 120_000);
});

/** Does something listen on 127.0.0.1:`port`? */
function takesConnection(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
