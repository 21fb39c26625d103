/* eslint-disable no-control-regex -- these tests read the escape sequences a terminal receives */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { colourWanted, painter } from '../../src/cli/colour.js';
import { paintPatch, paintStatus } from '../../src/cli/highlight.js';
import { unavailable } from '../helpers/capabilities.js';
import { HOSTILE } from '../helpers/hostile-text.js';
import { makeRepo, runWarren, type TestRepo } from '../helpers/repo.js';
import { atTerminal } from '../helpers/tty.js';

/**
 * Colour at a terminal for diff, status, refusals and warnings (src/cli/colour.ts,
 * src/cli/highlight.ts): off in a pipe and with --json, off with NO_COLOR, on with FORCE_COLOR
 * even in a pipe; and only ever around text made safe first, so an agent's text carries none.
 */

const GREEN = '\x1b[32m';
const RED = '\x1b[31m';
/** Every sequence warren's colours are made of. */
const OURS = /\x1b\[(1|2|22|31|32|33|36|39)m/g;
/** Anything a terminal obeys but a newline and a tab. */
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const tty = { isTTY: true } as unknown as NodeJS.WritableStream;
const pipe = {} as unknown as NodeJS.WritableStream;

describe('when warren colours', () => {
  it.each([
    ['a terminal', tty, false, {}, true],
    ['a pipe', pipe, false, {}, false],
    ['--json on a terminal', tty, true, {}, false],
    ['NO_COLOR=1 on a terminal', tty, false, { NO_COLOR: '1' }, false],
    ['NO_COLOR empty on a terminal (unset, as no-color.org says)', tty, false, { NO_COLOR: '' }, true],
    ['TERM=dumb', tty, false, { TERM: 'dumb' }, false],
    ['FORCE_COLOR=1 in a pipe', pipe, false, { FORCE_COLOR: '1' }, true],
    ['FORCE_COLOR empty in a pipe', pipe, false, { FORCE_COLOR: '' }, true],
    ['FORCE_COLOR=0 on a terminal', tty, false, { FORCE_COLOR: '0' }, false],
    ['FORCE_COLOR=false on a terminal', tty, false, { FORCE_COLOR: 'false' }, false],
    ['FORCE_COLOR=1 over NO_COLOR=1', pipe, false, { FORCE_COLOR: '1', NO_COLOR: '1' }, true],
    ['FORCE_COLOR=1 with --json', tty, true, { FORCE_COLOR: '1' }, false],
  ] as const)('%s', (_, stream, json, env, expected) => {
    expect(colourWanted(stream, json, { TERM: 'xterm', ...env })).toBe(expected);
  });

  it('a patch: headers bold, hunks cyan, added green, removed red; a removed line that looks like a header is still removed', () => {
    const shown = [
      'diff --git a/x b/x',
      'index 1..2 100644',
      '--- a/x',
      '+++ b/x',
      '@@ -1,2 +1,2 @@ fn',
      ' same',
      '--- looks like a header',
      '+new',
    ].join('\n');
    expect(paintPatch(shown, painter(true)).split('\n')).toEqual([
      '\x1b[1mdiff --git a/x b/x\x1b[22m',
      '\x1b[1mindex 1..2 100644\x1b[22m',
      '\x1b[1m--- a/x\x1b[22m',
      '\x1b[1m+++ b/x\x1b[22m',
      '\x1b[36m@@ -1,2 +1,2 @@\x1b[39m fn',
      ' same',
      `${RED}--- looks like a header\x1b[39m`,
      `${GREEN}+new\x1b[39m`,
    ]);
    expect(paintPatch(shown, painter(false))).toBe(shown);
  });

  it('status: a service named like a change code is read as a service, by the section it is in', () => {
    const shown = [
      'tracked: 1 change(s)',
      '  ?? new.txt',
      'stale: no',
      'services:',
      '  M  redis  crashed (exit 1)',
    ].join('\n');
    expect(paintStatus(shown, painter(true)).split('\n')).toEqual([
      'tracked: \x1b[33m1 change(s)\x1b[39m',
      `  ${RED}??\x1b[39m new.txt`,
      `stale: ${GREEN}no\x1b[39m`,
      'services:',
      `  M  redis  ${RED}crashed\x1b[39m (exit 1)`,
    ]);
  });
});

describe('colour on the command line', () => {
  it("diff and status in colour with FORCE_COLOR in a pipe; none without; an agent's text carries no sequence of its own", async () => {
    const repo = makeRepo({ files: { 'a.txt': 'old\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 't');
    expect(made.code, made.stderr).toBe(0);
    const ws = made.json.path;
    // What an agent writes: a line that would turn the terminal red and clear it, hostile file names.
    fs.writeFileSync(path.join(ws, 'a.txt'), 'new \x1b[31mred\x1b[2J\n');
    const names = HOSTILE.filter((h) => !h.raw.includes('/') && !h.raw.includes('\0'));
    for (const h of names) fs.writeFileSync(path.join(ws, h.raw), 'x\n');

    const diff = await repo.warren('diff', 't');
    expect(diff.stdout).not.toContain('\x1b');
    const forced = await runForced(repo, 'diff', 't');
    expect(forced.stdout).toContain(`${RED}-old\x1b[39m`);
    expect(forced.stdout).toContain(`${GREEN}+new \\x1b[31mred\\x1b[2J\x1b[39m`);
    // Take warren's colours out: what is left is exactly the uncoloured output, with nothing obeyed in it.
    expect(forced.stdout.replace(OURS, '')).toBe(diff.stdout);
    expect(forced.stdout.replace(OURS, '')).not.toMatch(OBEYED);

    const status = await runForced(repo, 'status', 't');
    expect(status.stdout).toMatch(/^tracked: \x1b\[33m\d+ change\(s\)\x1b\[39m$/m);
    expect(status.stdout).toContain(`  \x1b[33mM\x1b[39m a.txt`);
    expect(status.stdout.replace(OURS, '')).toBe((await repo.warren('status', 't')).stdout);
    expect(status.stdout.replace(OURS, '')).not.toMatch(OBEYED);

    // --json is data, never coloured.
    const json = await runForced(repo, '--json', 'status', 't');
    expect(json.stdout).not.toContain('\x1b[');
    expect(() => JSON.parse(json.stdout) as unknown).not.toThrow();
  });

  it('a refusal and a warning: the prefix red, the hint and warn: yellow; plain in a pipe', async () => {
    const repo = makeRepo();
    const refused = await runForced(repo, 'show', 'nosuch');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^\x1b\[1m\x1b\[31mwarren:\x1b\[39m\x1b\[22m \w/);
    expect(refused.stderr).toMatch(/\n {2}\x1b\[33mhint:\x1b\[39m /);
    const plain = await repo.warren('show', 'nosuch');
    expect(refused.stderr.replace(OURS, '')).toBe(plain.stderr);

    // warren.yaml that `list` does not need: one warning line.
    repo.write('warren.yaml', 'nonsense: [\n');
    const warned = await runForced(repo, 'list');
    expect(warned.stderr).toMatch(/^warren: \x1b\[33mwarn:\x1b\[39m /m);
  });

  const noPty = unavailable(import.meta.filename, 'pty');
  it.skipIf(noPty !== null)('at a terminal: on by itself, off with NO_COLOR and with FORCE_COLOR=0', async () => {
    const repo = makeRepo({ files: { 'a.txt': 'old\n' } });
    const ws = (await repo.warrenJson<{ path: string }>('new', 'feat', 't')).json.path;
    fs.writeFileSync(path.join(ws, 'a.txt'), 'new\n');
    const at = (env: Record<string, string> = {}) =>
      atTerminal(['diff', 't'], { cwd: repo.root, home: repo.home, env });
    const coloured = at();
    expect(coloured.status, coloured.output).toBe(0);
    expect(coloured.output).toContain(`${GREEN}+new\x1b[39m`);
    for (const env of [{ NO_COLOR: '1' }, { FORCE_COLOR: '0' }] as Record<string, string>[]) {
      const plain = at(env);
      expect(plain.status, plain.output).toBe(0);
      expect(plain.output).toContain('+new');
      expect(plain.output, JSON.stringify(env)).not.toContain('\x1b[');
    }
  });
});

/** The command line in a pipe (the test's), with FORCE_COLOR=1. */
function runForced(repo: TestRepo, ...args: string[]) {
  return runWarren(args, { cwd: repo.root, home: repo.home, env: { FORCE_COLOR: '1' } });
}
