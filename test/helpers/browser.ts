import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { tmpDir } from './repo.js';

/** Debian's chromium, never a downloaded one; a fresh profile per test. */
export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../artifacts/screenshots');

/** The page, and every alert/confirm/prompt it opened (dismissed): injected script would show up here. */
export async function openBrowser(): Promise<{
  context: BrowserContext;
  page: Page;
  dialogs: string[];
  profile: string;
}> {
  const profile = tmpDir('warren-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
  });
  onTestFinished(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { context, page, dialogs, profile };
}

/**
 * The process of this browser's network service (Chromium runs it apart from the browser
 * process, which started with `--user-data-dir=PROFILE`): stopping it (SIGSTOP) stops every read
 * from the browser's sockets, so a server writing to the page backs up after the kernel's
 * buffers, whatever the page's own loaders would have buffered.
 */
export function networkServiceOf(profile: string): number {
  const procs = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        // Chromium's child processes rewrite their command line as one string: split on spaces too.
        const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
        const ppid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
        return [{ pid: Number(pid), ppid, args }];
      } catch {
        return []; // gone meanwhile
      }
    });
  const browser = procs.find(
    (p) => p.args.includes(`--user-data-dir=${profile}`) && !p.args.some((a) => a.startsWith('--type=')),
  );
  const network = procs.find(
    (p) => p.ppid === browser?.pid && p.args.includes('--utility-sub-type=network.mojom.NetworkService'),
  );
  if (!network)
    throw new Error(
      `no network service process found for the browser with profile ${profile} (browser process: ${browser?.pid ?? 'not found'})`,
    );
  return network.pid;
}

/**
 * The screenshots the docs show, by the name a test takes them under: written into docs/ on every
 * run of the dashboard's tests, so that they show the page as it is (`git diff` shows a change).
 */
const DOCS_SCREENSHOTS: Readonly<Record<string, string>> = {
  'task-log-running': 'docs/dashboard.png',
  'new-task-dialog': 'docs/dashboard-new-task.png',
  'task-agent-transcript': 'docs/dashboard-agent.png',
  'disk-view': 'docs/dashboard-disk.png',
};

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const docs = DOCS_SCREENSHOTS[name];
  if (docs) fs.copyFileSync(file, path.resolve(import.meta.dirname, '../..', docs));
}

/**
 * Waits for `selector`; when it does not come, fails with what the page showed instead (its
 * route, the notice, the live indicator) and a screenshot, so a failure in CI can be read.
 */
export async function waitForView(page: Page, selector: string, name: string, timeout = 30_000): Promise<void> {
  try {
    await page.locator(selector).waitFor({ timeout });
  } catch (err) {
    // A string, evaluated in the page: this file is compiled without the DOM's types.
    const state: unknown = await page
      .evaluate(
        "({ hash: location.hash, notice: document.getElementById('notice')?.textContent ?? null, live: document.getElementById('live')?.textContent ?? null, view: document.getElementById('view')?.firstElementChild?.id ?? null })",
      )
      .catch((e: unknown) => ({ evaluateFailed: String(e) }));
    await screenshot(page, `failed-${name}`).catch(() => undefined);
    throw new Error(
      `${selector} did not appear within ${timeout} ms; the page showed ${JSON.stringify(state)} (screenshot failed-${name}.png)`,
      { cause: err },
    );
  }
}
