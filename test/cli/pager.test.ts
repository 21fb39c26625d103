import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { longerThan, pagerCommand } from '../../src/cli/pager.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, runCli, tmpDir, type TestRepo } from '../helpers/repo.js';
import { atTerminal, plain } from '../helpers/tty.js';

/**
 * Long output (diff, show, help) through the user's pager, as git does: at a terminal only, when
 * it does not fit; never with --no-pager, --json or in a pipe (src/cli/pager.ts).
 */

describe('which pager', () => {
  it.each([
    ['WARREN_PAGER first', { WARREN_PAGER: 'most', PAGER: 'more' }, 'most'],
    ['then PAGER, a command line', { PAGER: 'less -S' }, 'less -S'],
    ['an empty WARREN_PAGER: none, whatever PAGER says', { WARREN_PAGER: '', PAGER: 'more' }, null],
    ['cat: none', { PAGER: 'cat' }, null],
    ['neither: less, where it is installed', {}, 'less'],
    ['neither, and no less: none', { PATH: '/nonexistent' }, null],
  ] as const)('%s', (_, env, expected) => {
    const bin = tmpDir('warren-pager-path-');
    fs.writeFileSync(path.join(bin, 'less'), '#!/bin/sh\n', { mode: 0o755 });
    expect(pagerCommand({ PATH: bin, ...env })).toBe(expected);
  });

  it('counts the rows a text takes, a long line as several, colours as nothing', () => {
    expect(longerThan('a\nb\nc', 4, 80)).toBe(false);
    expect(longerThan('a\nb\nc\nd', 4, 80)).toBe(true);
    expect(longerThan('x'.repeat(100), 2, 80)).toBe(true);
    expect(longerThan(`\x1b[32m${'x'.repeat(79)}\x1b[39m`, 2, 80)).toBe(false);
  });
});

const noPty = unavailable(import.meta.filename, 'pty');

describe.skipIf(noPty !== null)('the pager at a terminal', () => {
  /** A pager that records that it ran, with LESS and what it was given. */
  function fakePager(): { command: string; ran: () => string | null } {
    const dir = tmpDir('warren-pager-');
    const record = path.join(dir, 'paged');
    const script = path.join(dir, 'pager');
    fs.writeFileSync(script, `#!/bin/sh\n{ echo "LESS=$LESS"; cat; } > '${record}'\n`, { mode: 0o755 });
    return { command: script, ran: () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : null) };
  }

  async function longDiff(): Promise<TestRepo> {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 't');
    expect(made.code, made.stderr).toBe(0);
    fs.writeFileSync(
      path.join(made.json.path, 'long.txt'),
      `${Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n')}\n`,
    );
    return repo;
  }

  it('a diff longer than the terminal goes through PAGER (LESS=FRX), in colour; --no-pager, --json and a pipe print it', async () => {
    const repo = await longDiff();
    const at = (pager: string, ...args: string[]) =>
      atTerminal(args, { cwd: repo.root, home: repo.home, rows: 10, env: { PAGER: pager } });

    const pager = fakePager();
    const paged = at(pager.command, 'diff', 't');
    expect(paged.status, paged.output).toBe(0);
    const seen = pager.ran();
    expect(seen, paged.output).not.toBeNull();
    expect(seen).toMatch(/^LESS=FRX\n/);
    expect(seen).toContain('\x1b[32m+line 39\x1b[39m');
    expect(paged.output).not.toContain('line 39');

    const unused = fakePager();
    for (const args of [
      ['diff', 't', '--no-pager'],
      ['--no-pager', 'diff', 't'],
      ['--json', 'diff', 't'],
    ]) {
      const printed = at(unused.command, ...args);
      expect(printed.status, printed.output).toBe(0);
      expect(printed.output, args.join(' ')).toContain('line 39');
      expect(unused.ran(), args.join(' ')).toBeNull();
    }
    // A pipe (the test's own): printed, the pager never asked.
    const piped = await runCli(['diff', 't'], { cwd: repo.root, home: repo.home, env: { PAGER: unused.command } });
    expect(piped.stdout).toContain('+line 39');
    expect(unused.ran()).toBeNull();
  });

  it('output that fits is printed; WARREN_PAGER over PAGER; show and help page too', async () => {
    const repo = await longDiff();
    const mine = fakePager();
    const theirs = fakePager();
    const env = { WARREN_PAGER: mine.command, PAGER: theirs.command };
    const fits = atTerminal(['diff', 't', '--stat'], { cwd: repo.root, home: repo.home, rows: 40, env });
    expect(fits.status, fits.output).toBe(0);
    expect(plain(fits.output)).toMatch(/A +\+40 +-0 +long\.txt/);
    expect(mine.ran()).toBeNull();

    const help = atTerminal(['help', 'configuration'], { cwd: repo.root, home: repo.home, rows: 10, env });
    expect(help.status, help.output).toBe(0);
    expect(mine.ran()).toContain('warren.yaml');
    expect(theirs.ran()).toBeNull();

    const show = atTerminal(['show', 't'], {
      cwd: repo.root,
      home: repo.home,
      rows: 3,
      env: { PAGER: theirs.command },
    });
    expect(show.status, show.output).toBe(0);
    expect(theirs.ran()).toContain('feat/t');
  });

  it('a pager that cannot be found: the output is printed all the same', async () => {
    const repo = await longDiff();
    const r = atTerminal(['diff', 't'], {
      cwd: repo.root,
      home: repo.home,
      rows: 10,
      env: { PAGER: '/nonexistent/pager' },
    });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('line 39');
  });
});
