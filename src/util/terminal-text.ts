/**
 * Text an agent controls — file names, branch names, commit messages, event messages that quote
 * them, logs, transcripts — made safe to print on a terminal, and shown as it is rather than
 * dropped. A control character becomes a visible escape in the notation of a JavaScript (and
 * JSON) string: `\n`, `\r`, `\t`, `\xHH` for the rest of C0, DEL and C1, `\uHHHH` for a bidi
 * control. It is the notation `--json` prints for the same text (`\u001b` there, `\x1b` here),
 * that `printf '\x1b'` and every language's string literals read, and one glance tells it is
 * not the character itself. A backslash stays as it is: the common case (a Windows path in a
 * message, a regex in a commit subject) reads unchanged, and the exact text is in `--json`.
 *
 * Dependency-free on purpose: the dashboard's page imports the same code (scripts/bundle.js
 * builds it for the browser), so the page and the terminal show a name the same way.
 */

/**
 * What a text keeps as it is:
 * - `line`: nothing. One value on one line (a file name, a branch, a subject): a newline in it
 *   cannot forge another line, a tab another column.
 * - `block`: `\n` and `\t` (a commit message's body, a log tail, a patch).
 * - `stream`: `\n`, `\t` and `\r` (a command's output, where `\r` draws progress bars);
 *   `terminalStream` also keeps colours.
 */
export type TerminalLayout = 'line' | 'block' | 'stream';

// C0 (U+0000–U+001F, ESC among them), DEL, C1 (U+0080–U+009F: U+009B is CSI, U+009D OSC on a
// terminal that reads 8-bit controls) and Unicode's Bidi_Control characters (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069: "Trojan Source", text shown in another order than it is).
/* eslint-disable no-control-regex */
const UNSAFE: Record<TerminalLayout, RegExp> = {
  line: /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
  block: /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
  stream: /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
};

/** The parameters of a colour (SGR) sequence are at most this long: a longer one is shown, not obeyed. */
const SGR_PARAMS = 64;
/** `ESC [ digits ; … m`: colours, bold, underline; nothing that moves the cursor, erases or talks back. */
const SGR = `\\x1b\\[[0-9;:]{0,${SGR_PARAMS}}m`;
/** In a stream: a colour sequence kept whole, or one character to show as an escape. */
const STREAM_TOKEN = new RegExp(`(${SGR})|${UNSAFE.stream.source}`, 'g');
/** What may still become a colour sequence when the next chunk comes: held back until then. */
const SGR_START = new RegExp(`\\x1b(?:\\[[0-9;:]{0,${SGR_PARAMS}})?$`);
/** A sequence that ends every colour (`ESC [ m`, `ESC [ 0 m`). */
const SGR_RESET = /^\x1b\[0*m$/;
/* eslint-enable no-control-regex */

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One character as the escape that names it. */
function visible(c: string): string {
  const short = SHORT[c];
  if (short !== undefined) return short;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` safe to print: every control character but the ones `layout` keeps is shown as an
 * escape. The one function every printed piece of task-controlled text goes through.
 */
export function terminalText(text: string, layout: TerminalLayout = 'line'): string {
  return text.replace(UNSAFE[layout], visible);
}

/** A command's output, chunk by chunk, safe to print as it comes (see `terminalStream`). */
export interface TerminalStream {
  /** What of `chunk` can be printed now; the start of a colour sequence cut at its end waits for the next. */
  write(chunk: string): string;
  /**
   * What was held back, shown as escapes, and a reset of the colours the output left on: before
   * warren prints its own words after it, and at its end. The stream can go on afterwards.
   */
  flush(): string;
}

/**
 * For live output (a command's, a service log followed): `\n`, `\t`, `\r` and colour sequences
 * (`ESC [ digits;… m`) pass; every other escape sequence — OSC (52 sets the clipboard), cursor
 * movement, erasing, DCS, C1 — has its ESC (or C1 character) shown as an escape, so the rest of
 * it is plain text. A sequence cut across chunks is judged whole.
 */
export function terminalStream(): TerminalStream {
  let held = '';
  let coloured = false;
  return {
    write(chunk) {
      let text = held + chunk;
      const cut = SGR_START.exec(text);
      held = cut ? text.slice(cut.index) : '';
      if (cut) text = text.slice(0, cut.index);
      return text.replace(STREAM_TOKEN, (token: string, sgr: string | undefined) => {
        if (sgr === undefined) return visible(token);
        coloured = !SGR_RESET.test(sgr);
        return sgr;
      });
    },
    flush() {
      const rest = terminalText(held, 'stream') + (coloured ? '\x1b[0m' : '');
      held = '';
      coloured = false;
      return rest;
    },
  };
}
