import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { tmpDir } from './repo.js';

/** Debian's chromium, never a downloaded one; a fresh profile per test. */
export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../artifacts/screenshots');

/** The page, and every alert/confirm/prompt it opened (dismissed): injected script would show up here. */
export async function openBrowser(): Promise<{ context: BrowserContext; page: Page; dialogs: string[] }> {
  const context = await chromium.launchPersistentContext(tmpDir('warren-chromium-'), {
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
  return { context, page, dialogs };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
