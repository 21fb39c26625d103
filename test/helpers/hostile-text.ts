/**
 * What an agent names a file, a branch or a commit to reach the terminal of whoever reads it:
 * the text as it is (`raw`), and as warren shows it on one line (`line`, src/util/terminal-text.ts).
 */
export const HOSTILE: readonly { what: string; raw: string; line: string }[] = [
  { what: 'CSI cursor up, erase line', raw: 'a\x1b[1A\x1b[2Kb', line: 'a\\x1b[1A\\x1b[2Kb' },
  { what: 'OSC 52 (clipboard), BEL-terminated', raw: '\x1b]52;c;ZXZpbA==\x07x', line: '\\x1b]52;c;ZXZpbA==\\x07x' },
  { what: 'OSC 52 (clipboard), ST-terminated', raw: '\x1b]52;c;ZXZpbA==\x1b\\x', line: '\\x1b]52;c;ZXZpbA==\\x1b\\x' },
  { what: 'C1 CSI (8-bit)', raw: 'a\u009b1Ab', line: 'a\\x9b1Ab' },
  { what: 'C1 OSC and ST', raw: '\u009d52;c;eA==\u009c', line: '\\x9d52;c;eA==\\x9c' },
  { what: 'bidi override (Trojan Source)', raw: 'invoice\u202etxt.exe', line: 'invoice\\u202etxt.exe' },
  { what: 'bidi isolates and marks', raw: '\u2066a\u2069\u200f\u061c', line: '\\u2066a\\u2069\\u200f\\u061c' },
  { what: 'a raw carriage return', raw: 'evil();\r// fine', line: 'evil();\\r// fine' },
  { what: 'a newline', raw: 'a.js\n?? ok.js', line: 'a.js\\n?? ok.js' },
  { what: 'a tab', raw: 'a\tb', line: 'a\\tb' },
  { what: 'BEL, backspace, DEL, NUL', raw: '\x07\x08\x7f\x00', line: '\\x07\\x08\\x7f\\x00' },
];
