import { describe, expect, it } from 'vitest';
import { terminalStream, terminalText, type TerminalLayout } from '../../src/util/terminal-text.js';
import { HOSTILE } from '../helpers/hostile-text.js';
import { seeded } from '../helpers/seeded.js';

// Every character a terminal may obey, in every layout but the ones it keeps.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('terminalText', () => {
  it.each(HOSTILE)('a single line shows every control as an escape: $what', ({ raw, line }) => {
    expect(terminalText(raw)).toBe(line);
    expect(terminalText(raw, 'line')).not.toMatch(CONTROL);
  });

  it('keeps ordinary text, non-ASCII names and backslashes as they are', () => {
    for (const s of ['src/main.ts', 'café/naïve — 日本語 ✓ 🙂', 'C:\\Users\\x', 'a\\x1b literally', ''])
      expect(terminalText(s)).toBe(s);
  });

  it('a block keeps newlines and tabs, a stream carriage returns too; nothing else', () => {
    const raw = 'one\tline\r\ntwo\x1b[2K\u202e';
    expect(terminalText(raw, 'line')).toBe('one\\tline\\r\\ntwo\\x1b[2K\\u202e');
    expect(terminalText(raw, 'block')).toBe('one\tline\\r\ntwo\\x1b[2K\\u202e');
    expect(terminalText(raw, 'stream')).toBe('one\tline\r\ntwo\\x1b[2K\\u202e');
  });

  it.each(['line', 'block', 'stream'] as TerminalLayout[])(
    'in %s layout, random text never keeps a control it does not allow (seeded)',
    (layout) => {
      const kept = { line: '', block: '\n\t', stream: '\n\t\r' }[layout];
      const pool = [...'ab\\[;m]0 é', ...Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)), '\u202e'];
      for (let seed = 1; seed <= 200; seed++) {
        const next = seeded(seed);
        const raw = Array.from({ length: 40 }, () => pool[Math.floor(next() * pool.length)]).join('');
        const shown = [...terminalText(raw, layout)].filter((c) => !kept.includes(c)).join('');
        expect(shown, `seed ${seed}`).not.toMatch(CONTROL);
      }
    },
  );
});

/** Feeds chunks through one stream and flushes it, as a followed log or a run's output is. */
function streamed(...chunks: string[]): string {
  const s = terminalStream();
  return chunks.map((c) => s.write(c)).join('') + s.flush();
}

describe('terminalStream', () => {
  it('keeps colours, newlines, tabs and carriage returns; resets the colours left on at the end', () => {
    expect(streamed('\x1b[1;32mok\x1b[0m\tdone\r\n')).toBe('\x1b[1;32mok\x1b[0m\tdone\r\n');
    expect(streamed('\x1b[31mred')).toBe('\x1b[31mred\x1b[0m');
    expect(streamed('\x1b[38;5;196mx\x1b[m')).toBe('\x1b[38;5;196mx\x1b[m');
  });

  it.each([
    ['cursor up and erase line', '\x1b[1A\x1b[2K', '\\x1b[1A\\x1b[2K'],
    ['OSC 52 with BEL', '\x1b]52;c;ZXZpbA==\x07', '\\x1b]52;c;ZXZpbA==\\x07'],
    ['OSC 52 with ST', '\x1b]52;c;ZXZpbA==\x1b\\', '\\x1b]52;c;ZXZpbA==\\x1b\\'],
    ['a window title', '\x1b]0;pwned\x07', '\\x1b]0;pwned\\x07'],
    ['DCS', '\x1bP+q544e\x1b\\', '\\x1bP+q544e\\x1b\\'],
    ['hide the cursor (a private CSI)', '\x1b[?25l', '\\x1b[?25l'],
    ['clear the screen', '\x1b[2J\x1b[H', '\\x1b[2J\\x1b[H'],
    ['C1 CSI SGR', '\u009b31m', '\\x9b31m'],
    ['a bidi override', '\u202eabc', '\\u202eabc'],
    ['an SGR too long to be a colour', `\x1b[${'1;'.repeat(40)}m`, `\\x1b[${'1;'.repeat(40)}m`],
  ])('shows every other escape sequence as text: %s', (_what, raw, shown) => {
    expect(streamed(raw)).toBe(shown);
  });

  it('judges a sequence cut across chunks whole', () => {
    // A colour cut anywhere is kept, and held back only while it may still be one.
    const s = terminalStream();
    expect(s.write('a\x1b[3')).toBe('a');
    expect(s.write('1mred')).toBe('\x1b[31mred');
    // An OSC cut right after its ESC is shown as text once the next chunk says what it is.
    expect(s.write('b\x1b')).toBe('b');
    expect(s.write(']52;c;eA==\x07')).toBe('\\x1b]52;c;eA==\\x07');
    // Cut after ESC [ : erase, not a colour.
    expect(s.write('\x1b[')).toBe('');
    expect(s.write('2K')).toBe('\\x1b[2K');
    // Held at the end of the output: shown as text, and the colour left on is reset.
    expect(s.write('\x1b[1')).toBe('');
    expect(s.flush()).toBe('\\x1b[1\x1b[0m');
    expect(s.flush()).toBe('');
  });

  it('every chunking of a hostile stream prints the same, and no ESC but a colour (seeded)', () => {
    const raw = `\x1b[32mok\x1b[0m ${HOSTILE.map((h) => h.raw).join('\n')} \x1b[1;31mred\x1b[0m\r\n`;
    const whole = streamed(raw);
    for (let seed = 1; seed <= 100; seed++) {
      const next = seeded(seed);
      const chunks: string[] = [];
      for (let at = 0; at < raw.length;) {
        const size = 1 + Math.floor(next() * 6);
        chunks.push(raw.slice(at, at + size));
        at += size;
      }
      const shown = streamed(...chunks);
      expect(shown, `seed ${seed}`).toBe(whole);
    }
    // Every ESC left starts a colour; nothing else a terminal obeys is left.
    // eslint-disable-next-line no-control-regex
    const rest = whole.replace(/\x1b\[[0-9;]*m/g, '').replace(/[\n\r\t]/g, '');
    expect(rest).not.toMatch(CONTROL);
  });
});
