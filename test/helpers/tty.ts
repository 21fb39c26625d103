import { spawnSync } from 'node:child_process';
import { BIN } from './repo.js';

/**
 * warren on a terminal: bin/warren.js run by util-linux's `script`, which gives it a
 * pseudo-terminal for stdin, stdout and stderr (the `pty` capability). `rows` sizes the
 * terminal first (a pseudo-terminal nobody sized has none). What the terminal received comes
 * back with its `\r\n` as `\n`; `screen` reads it as the terminal would show it.
 */
export function atTerminal(
  args: readonly string[],
  options: { cwd: string; home: string; env?: Record<string, string>; rows?: number; input?: string },
): { status: number | null; output: string } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const size = options.rows === undefined ? '' : `stty rows ${options.rows} cols 80; `;
  // Colour is decided by the test: none of the environment's own choice leaks in.
  const { NO_COLOR: _no, FORCE_COLOR: _force, ...env } = process.env;
  const r = spawnSync('script', ['-qec', `${size}${command}`, '/dev/null'], {
    cwd: options.cwd,
    env: { ...env, TERM: 'xterm', WARREN_HOME: options.home, ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, output: r.stdout.replace(/\r\n/g, '\n') };
}

/** What a terminal shows of `output`: each line as its last redraw left it (`\r`, then erase-line), colours taken out. */
export function screen(output: string): string[] {
  return output.split('\n').map((line) => plain(line.slice(line.lastIndexOf('\r') + 1)));
}

/** `text` without its colour sequences and erase-line. */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*[mK]/g, '');
}
