import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/composition.js';
import { openBrowser, screenshot, waitForView } from '../helpers/browser.js';
import { unavailable } from '../helpers/capabilities.js';
import { gitIn, makeRepo } from '../helpers/repo.js';
import { startServe } from '../helpers/serve.js';
import { makeNodeModules, unmountUnder } from '../helpers/tree.js';

/**
 * The disk and age view in headless Chromium: each task's bytes against `du` of the same folders
 * (found here from the layout, not from the page), a cow path's upper layer counted and the
 * snapshot below it not, and the removal of the landed tasks, archived first.
 */

const noChromium = unavailable(import.meta.filename, 'chromium');
const noOverlay = unavailable(import.meta.filename, 'overlay-root');

/** `du -scx -B1` of these folders: the total line. */
function du(paths: string[]): number {
  const out = execFileSync('du', ['-scx', '-B1', ...paths.filter((p) => fs.existsSync(p))], { encoding: 'utf8' });
  return Number(/^(\d+)\s+total$/m.exec(out)?.[1]);
}

describe.skipIf(noChromium !== null || noOverlay !== null)('the disk and age view', () => {
  it('counts each workspace as du does, cow layers included; removes the landed ones, archived first', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'package.json': '{"name":"app"}\n',
        'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: cow }\n',
      },
    });
    makeNodeModules(repo.root);
    onTestFinished(() => unmountUnder(path.dirname(repo.root)));
    const made: Record<string, string> = {};
    for (const id of ['a', 'b', 'c']) {
      const r = await repo.warrenJson<{ path: string }>('new', 'feat', id);
      expect(r.code, r.stderr).toBe(0);
      made[id] = r.json.path;
    }
    // a: 1 MiB written through its cow node_modules (its upper layer); c: 2 MiB in its folder.
    fs.writeFileSync(path.join(made.a!, 'node_modules', 'big.bin'), Buffer.alloc(1024 * 1024, 1));
    fs.writeFileSync(path.join(made.c!, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 2));
    // a's run writes a log under WARREN_HOME: counted with it.
    expect((await repo.warren('exec', 'a', '--', 'sh', '-c', 'head -c 300000 /dev/zero | tr "\\0" x')).code).toBe(0);
    // b: landed.
    fs.writeFileSync(path.join(made.b!, 'feature.txt'), 'b\n');
    expect((await repo.warren('checkpoint', 'b')).code).toBe(0);
    const landed = await repo.warren('land', 'b');
    expect(landed.code, landed.stderr).toBe(0);

    const store = openStore(repo.home);
    const key = store.listProjects()[0]!.key;
    store.close();
    const expected = (id: string): number =>
      du([
        made[id]!,
        ...fs
          .readdirSync(path.join(repo.home, 'overlays', key, id), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => path.join(repo.home, 'overlays', key, id, e.name, 'upper')),
        path.join(repo.home, 'logs', key, id),
      ]);

    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const { page, dialogs } = await openBrowser();
    await page.goto(serve.openUrl);
    await page.locator('#live.on').waitFor();
    await page.locator('section.project a[data-view="disk"]').click();
    await waitForView(page, '#disk table.disk', 'disk-view');

    const cell = async (id: string, part: string): Promise<number> =>
      Number(await page.locator(`#disk tr[data-task="${id}"] td[data-part="${part}"]`).getAttribute('data-bytes'));
    const want = { a: expected('a'), b: expected('b'), c: expected('c') };
    for (const id of ['a', 'b', 'c'] as const) expect(await cell(id, 'total'), id).toBe(want[id]);
    // a's 1 MiB is in its layer, not in its folder (du -x does not cross into the mount); c's is in its folder.
    expect(await cell('a', 'layers')).toBeGreaterThanOrEqual(1024 * 1024);
    expect(await cell('a', 'workspace')).toBeLessThan(1024 * 1024);
    expect(await cell('c', 'workspace')).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    expect(await cell('a', 'logs')).toBeGreaterThanOrEqual(300_000);
    expect(Number(await page.locator('#disk td[data-part="fleet-total"]').getAttribute('data-bytes'))).toBe(
      want.a + want.b + want.c,
    );
    // Largest first.
    expect(
      await page.locator('#disk tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task'))),
    ).toEqual(['c', 'a', 'b'].sort((x, y) => want[y as 'a'] - want[x as 'a']));
    await expect(page.locator('#disk tr[data-task="b"] td').nth(1).textContent()).resolves.toBe('landed');
    await screenshot(page, 'disk-view');

    // One action removes the landed tasks, each saved under refs/warren/archive/ID/ first.
    await page.locator('#disk button[data-action="rm-landed"]').click();
    await page.locator('dialog#confirm[open]').waitFor();
    await expect(page.locator('#confirm-text').textContent()).resolves.toContain('Remove 1 landed task(s) of repo: b?');
    await page.locator('#confirm-ok').click();
    await page.locator('.toast.info[data-action="rm-landed"]').waitFor({ timeout: 30_000 });
    const line = await page.locator('.toast.info[data-action="rm-landed"] .details li').textContent();
    expect(line).toMatch(/^removed b; saved under refs\/warren\/archive\/b\//);
    const archive = line!.replace(/^removed b; saved under /, '');
    expect(gitIn(repo.root, 'for-each-ref', '--format=%(refname)', archive)).not.toBe('');
    await page.locator('#disk tr[data-task="b"]').waitFor({ state: 'detached', timeout: 15_000 });
    expect(fs.existsSync(made.b!)).toBe(false);
    const list = await repo.warrenJson<{ id: string }[]>('list');
    expect(list.json.map((t) => t.id).sort()).toEqual(['a', 'c']);
    expect(dialogs).toEqual([]);
  }, 120_000);
});
