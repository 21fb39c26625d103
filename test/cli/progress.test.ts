/* eslint-disable no-control-regex -- these tests read the escape sequences a terminal receives */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { NO_PAINT, painter } from '../../src/cli/colour.js';
import { elapsed, StepLines } from '../../src/cli/progress.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo } from '../helpers/repo.js';
import { stopServicesAfter } from '../helpers/services.js';
import { atTerminal, screen } from '../helpers/tty.js';

/**
 * Every step that may take a while says what it does while it does it, on a terminal: one line
 * each, its seconds counting, then its time (src/cli/progress.ts, through `Reporter.step`).
 * With --json, or off a terminal, nothing of it: the output is as it was.
 */

class Screen extends Writable {
  text = '';
  columns = 80;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** A clock the test moves. */
function clock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('steps on a terminal, drawn', () => {
  it('a step is one line: drawn live, then ended in place with its time', () => {
    const out = new Screen();
    const time = clock();
    const steps = new StepLines(out, NO_PAINT, true, time.now);
    const step = steps.start('setup deps: npm ci');
    expect(out.text).toBe('\r\x1b[2K  setup deps: npm ci…');
    time.advance(1234);
    step.done();
    expect(out.text).toBe('\r\x1b[2K  setup deps: npm ci…\r\x1b[2K  setup deps: npm ci… done in 1.2 s\n');
    // Said once: a second end changes nothing.
    step.fail();
    expect(out.text.endsWith('done in 1.2 s\n')).toBe(true);
  });

  it("warren's own line goes above the live step; a command's output after it, the step's end on a line of its own", () => {
    const out = new Screen();
    const time = clock();
    const steps = new StepLines(out, NO_PAINT, true, time.now);
    const step = steps.start('provisioning node_modules (cow)');
    steps.line('warren: taking a snapshot of node_modules…\n');
    expect(out.text).toBe(
      '\r\x1b[2K  provisioning node_modules (cow)…\r\x1b[2Kwarren: taking a snapshot of node_modules…\n\r\x1b[2K  provisioning node_modules (cow)…',
    );
    out.text = '';
    steps.beforeOutput();
    out.write('npm output\n');
    time.advance(12_400);
    step.fail('exit 1');
    expect(out.text).toBe('\nnpm output\n  provisioning node_modules (cow)… failed (exit 1) after 12 s\n');
  });

  it('a step begun while another runs: each keeps a line, each end is said on its own', () => {
    const out = new Screen();
    const time = clock();
    const steps = new StepLines(out, NO_PAINT, true, time.now);
    const outer = steps.start('service db: cloning the database');
    const inner = steps.start("starting warren's PostgreSQL server");
    time.advance(500);
    outer.done();
    inner.done();
    expect(screen(out.text)).toEqual([
      '  service db: cloning the database…',
      '  service db: cloning the database… done in 0.5 s',
      "  starting warren's PostgreSQL server… done in 0.5 s",
      '',
    ]);
  });

  it('a terminal that cannot redraw (TERM=dumb) gets each line once, its end appended', () => {
    const out = new Screen();
    const time = clock();
    const steps = new StepLines(out, NO_PAINT, false, time.now);
    const step = steps.start('checking out feat/t');
    time.advance(100);
    step.done();
    expect(out.text).toBe('  checking out feat/t… done in 0.1 s\n');
  });

  it("a label is shown as text: a name's escape sequences are not obeyed; colour only around warren's own words", () => {
    const out = new Screen();
    const steps = new StepLines(out, painter(true), true, clock().now);
    steps.start('setup x: printf "\x1b]52;c;ZXZpbA==\x07\x1b[2J"').done();
    expect(out.text).toContain('setup x: printf "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J"');
    expect(out.text.replace(/\r\x1b\[2K|\x1b\[(32|39|2|22)m/g, '')).not.toMatch(/[\x00-\x09\x0b-\x1f]/);
  });

  it('the live line is cut to the width of the terminal (a wrapped line could not be redrawn)', () => {
    const out = new Screen();
    out.columns = 20;
    const steps = new StepLines(out, NO_PAINT, true, clock().now);
    steps.start('setup deps: a very long command indeed');
    expect(out.text).toBe('\r\x1b[2K  setup deps: a ve…'); // 19 columns: the last stays free
  });

  it('times read like people say them', () => {
    expect([0, 1234, 9_990, 12_400, 125_000].map(elapsed)).toEqual(['0.0 s', '1.2 s', '10.0 s', '12 s', '2 min 5 s']);
  });
});

const noPty = unavailable(import.meta.filename, 'pty');

describe.skipIf(noPty !== null)('warren new on a terminal', () => {
  it('says each step while it runs and what it took; with --json, and off a terminal, nothing of it', async () => {
    const repo = makeRepo({
      files: {
        'warren.yaml': [
          'services:',
          '  web: { run: "echo up; exec sleep 300", ready: { log: up } }',
          'setup:',
          '  - { id: deps, run: "sleep 1" }',
          '  - { id: check, run: "true" }',
          '',
        ].join('\n'),
      },
    });
    stopServicesAfter(repo.home);
    const made = atTerminal(['new', 'feat', 't'], { cwd: repo.root, home: repo.home });
    expect(made.status, made.output).toBe(0);
    const lines = screen(made.output);
    const said = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l));
    const order = [
      /^ {2}checking out feat\/t… done in \d+\.\d s$/,
      /^ {2}service web: starting \(until it is ready\)… done in \d+\.\d s$/,
      /^ {2}setup deps: sleep 1… done in \d+\.\d s$/,
      /^ {2}setup check: true… done in \d+\.\d s$/,
      /^ready: feat\/t at /,
    ].map(said);
    expect(
      order.every((i) => i >= 0),
      lines.join('\n'),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // While `sleep 1` ran, its line was drawn live (then drawn again: with its seconds, or ended).
    expect(made.output).toMatch(/\r\x1b\[2K {2}setup deps: sleep 1…(\x1b\[2m \d+ s\x1b\[22m)?\r/);

    // --json on the same terminal: one JSON document, and not a step.
    const json = atTerminal(['--json', 'new', 'feat', 'u'], { cwd: repo.root, home: repo.home });
    expect(json.status, json.output).toBe(0);
    expect(json.output).not.toContain('…');
    // (The terminal has stderr too: a warning line may come before the document.)
    expect((JSON.parse(json.output.slice(json.output.search(/^\{/m))) as { id: string }).id).toBe('u');

    // A pipe (the test's own): stderr as it was, no step and no escape sequence in it.
    const piped = await repo.warren('new', 'feat', 'v');
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).not.toContain('…');
    expect(piped.stderr).not.toContain('\x1b');
  });

  it("a failed step says how, after the command's own output", () => {
    const repo = makeRepo({
      files: { 'warren.yaml': 'setup:\n  - { id: bad, run: "echo broken; exit 3" }\n' },
    });
    const made = atTerminal(['new', 'feat', 't'], { cwd: repo.root, home: repo.home });
    expect(made.status, made.output).toBe(1);
    const lines = screen(made.output);
    const output = lines.indexOf('broken');
    const failed = lines.findIndex((l) =>
      /^ {2}setup bad: echo broken; exit 3… failed \(exit 3\) after \d+\.\d s$/.test(l),
    );
    expect(output, lines.join('\n')).toBeGreaterThan(-1);
    expect(failed).toBeGreaterThan(output);
  });
});
