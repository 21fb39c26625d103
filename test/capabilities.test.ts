import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBrowser } from './helpers/browser.js';
import {
  CAPABILITIES,
  DEFAULT_PROBE_OPTIONS,
  probe,
  recordSkip,
  skipFile,
  unavailable,
  type CapabilityName,
  type SkipRecord,
} from './helpers/capabilities.js';
import { tmpDir } from './helpers/repo.js';
import { fullTierOnly } from './helpers/tier.js';

/**
 * The probes that decide whether a test can run here, and the CI check that holds them to
 * account: a probe names what is missing and how to install it, a probe that says yes is right,
 * and .ci/check-skips.mjs fails a skip that .ci/probe finds avoidable.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const NAMES = Object.keys(CAPABILITIES) as CapabilityName[];
const isRoot = process.getuid?.() === 0;

function ciProbe(name: string): { status: number | null; stderr: string } {
  const r = spawnSync('bash', [path.join(ROOT, '.ci/probe'), name], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr.trim() };
}

describe('a probe names what is missing', () => {
  // [capability, the first binary its probe runs, what its install line must name]
  const cases: [CapabilityName, string, string][] = [
    ['bwrap', 'bwrap', 'bubblewrap'],
    ['xfs', 'mkfs.xfs', 'xfsprogs'],
    ['chattr', 'chattr', 'e2fsprogs'],
    ['nobody', 'setpriv', 'util-linux'],
    ['overlay-userns', 'setpriv', 'util-linux'],
    ['overlay-root', 'mount', 'root'],
    ['tmpfs-mount', 'mount', 'root'],
    ['setpriv', 'setpriv', 'util-linux'],
    ['pty', 'script', 'util-linux'],
  ];
  it.each(cases)('%s, with no %s on PATH, says so, and how to get it (%s)', (name, binary, needs) => {
    const reason = CAPABILITIES[name].probe({ ...DEFAULT_PROBE_OPTIONS, PATH: tmpDir('warren-empty-path-') });
    const missing = `${binary} is not installed (not found on PATH)`;
    // Where root is needed and missing, that is what it says first.
    if (isRoot || !reason?.startsWith('not root: ')) expect(reason).toBe(missing);
    expect(CAPABILITIES[name].install).toContain(needs);
  });

  it('chromium, not where the tests launch it from, names the path and the package', () => {
    const reason = CAPABILITIES.chromium.probe({ ...DEFAULT_PROBE_OPTIONS, chromium: '/nonexistent/chromium' });
    expect(reason).toBe('/nonexistent/chromium does not exist');
    expect(CAPABILITIES.chromium.install).toBe('apt-get install chromium');
  });
});

describe.skipIf(fullTierOnly(import.meta.filename, "every capability's probe"))(
  'a probe agrees with the real thing',
  () => {
    // Generous: some probes start a real program (an agent CLI's --version takes 15 s on a loaded machine).
    it.each(NAMES)("%s: the tests' probe and .ci/probe (written apart) agree", { timeout: 240_000 }, (name) => {
      const mine = probe(name);
      const theirs = ciProbe(name);
      expect(theirs.status, `.ci/probe ${name}: ${theirs.stderr}`).not.toBe(2);
      expect(
        mine === null,
        `the tests' probe: ${mine ?? 'available'}; .ci/probe: ${theirs.status === 0 ? 'available' : theirs.stderr}`,
      ).toBe(theirs.status === 0);
    });

    const noBwrap = unavailable(import.meta.filename, 'bwrap');
    it.skipIf(noBwrap !== null)('bwrap, when its probe says yes, runs a command in a read-only root', () => {
      const outside = path.join(tmpDir('warren-bwrap-'), 'escaped');
      expect(execFileSync('bwrap', ['--ro-bind', '/', '/', '--', 'echo', 'boxed'], { encoding: 'utf8' })).toBe(
        'boxed\n',
      );
      const write = spawnSync('bwrap', ['--ro-bind', '/', '/', '--', 'touch', outside], { encoding: 'utf8' });
      expect(write.stderr).toMatch(/Read-only file system/);
      expect(fs.existsSync(outside)).toBe(false);
    });

    const noChromium = unavailable(import.meta.filename, 'chromium');
    it.skipIf(noChromium !== null)(
      'chromium, when its probe says yes, prints its version and renders a page through playwright',
      async () => {
        expect(execFileSync(DEFAULT_PROBE_OPTIONS.chromium, ['--version'], { encoding: 'utf8' })).toMatch(
          /^Chromium \d+/,
        );
        const { page } = await openBrowser();
        await page.setContent('<p id="probe">rendered</p>');
        expect(await page.locator('#probe').textContent()).toBe('rendered');
      },
    );
  },
);

describe('a recorded skip', () => {
  const record: SkipRecord = {
    suite: 'workspace/rm',
    capability: 'chattr',
    reason: 'not root: chattr +i needs CAP_LINUX_IMMUTABLE',
    install: CAPABILITIES.chattr.install,
  };

  it('is one JSON file per suite and capability: {suite, capability, reason, install}', () => {
    const dir = tmpDir('warren-skips-');
    recordSkip(dir, record);
    const file = skipFile(dir, 'workspace/rm', 'chattr');
    expect(path.basename(file)).toBe('workspace__rm.chattr.json');
    expect(fs.readdirSync(dir)).toEqual([path.basename(file)]);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(record);
  });

  const check = (skips: string, report = 'none') =>
    spawnSync(process.execPath, [path.join(ROOT, '.ci/check-skips.mjs'), '--skips', skips, '--report', report], {
      encoding: 'utf8',
    });

  it('fails .ci/check-skips.mjs when .ci/probe finds the capability here, naming the suite', () => {
    // /proc/self/io is on every Linux machine these tests run on: a skip for it is avoidable.
    const dir = tmpDir('warren-skips-');
    recordSkip(dir, {
      ...record,
      capability: 'proc-io',
      reason: 'a probe that is wrong',
      install: CAPABILITIES['proc-io'].install,
    });
    const r = check(dir);
    expect(r.status, r.stdout).toBe(1);
    expect(r.stderr).toContain(
      '[workspace/rm] skipped, saying "a probe that is wrong", but .ci/probe finds proc-io on this machine',
    );
  });

  it('fails it for a capability .ci/probe does not know, and for a skipped test that recorded nothing', () => {
    const dir = tmpDir('warren-skips-');
    fs.writeFileSync(
      path.join(dir, 'x.teleport.json'),
      JSON.stringify({ suite: 'x', capability: 'teleport', reason: 'r', install: 'i' }),
    );
    const report = path.join(dir, 'report.txt');
    const file = (name: string, statuses: string[]) => ({
      name: path.join(ROOT, 'test', `${name}.test.ts`),
      assertionResults: statuses.map((status, i) => ({ status, fullName: `${name} ${i}` })),
    });
    fs.writeFileSync(
      report,
      JSON.stringify({
        numTotalTests: 3,
        testResults: [file('x', ['skipped']), file('web/quiet', ['passed', 'pending'])],
      }),
    );
    const r = check(dir, report);
    expect(r.status, r.stdout).toBe(1);
    expect(r.stderr).toContain(
      '[x] skipped for teleport, which .ci/probe cannot check (exit 2: no probe for "teleport": add one to .ci/probe)',
    );
    expect(r.stderr).toContain('[web/quiet] skipped 1 test(s) without recording why: web/quiet 1');
  });

  it('passes it when nothing was skipped', () => {
    const r = check(tmpDir('warren-skips-'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('nothing was skipped');
  });
});
