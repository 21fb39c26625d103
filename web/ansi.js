// Terminal colours in a log: SGR sequences (ESC [ … m) become classes on spans; every other
// escape sequence (cursor moves, erasing, window titles) is dropped. The text itself reaches the
// page only as text nodes, its other control characters shown as escapes the way the terminal
// shows a followed log (terminalText's `stream`: newlines, tabs and carriage returns kept). Hand-written rather than a library: the page has no build step
// and fetches nothing from elsewhere, and the part of SGR that test runners and compilers print
// (16 colours, bright ones, bold, dim, italic, underline, resets) is this small.
import { el, terminalText } from './dom.js';

// CSI (ESC [ params final), OSC (ESC ] … BEL or ESC \), or a two-byte escape.
// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b(?:\[([0-9;?]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// An escape sequence cut at the end of a chunk: kept for the next one.
// eslint-disable-next-line no-control-regex
const UNFINISHED = /\x1b(?:\[[0-9;?]*|\][^\x07\x1b]*|)$/;

/** A parser per stream: it keeps the current style and an unfinished sequence between chunks. */
export function ansiParser() {
  let style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };
  let carry = '';

  const apply = (params) => {
    const codes = params === '' ? [0] : params.split(';').map((p) => Number(p || 0));
    for (let i = 0; i < codes.length; i++) {
      const c = codes[i];
      if (c === 0) style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };
      else if (c === 1) style.bold = true;
      else if (c === 2) style.dim = true;
      else if (c === 3) style.italic = true;
      else if (c === 4) style.underline = true;
      else if (c === 22) style.bold = style.dim = false;
      else if (c === 23) style.italic = false;
      else if (c === 24) style.underline = false;
      else if (c >= 30 && c <= 37) style.fg = c - 30;
      else if (c >= 90 && c <= 97) style.fg = c - 90 + 8;
      else if (c === 39) style.fg = null;
      else if (c >= 40 && c <= 47) style.bg = c - 40;
      else if (c >= 100 && c <= 107) style.bg = c - 100 + 8;
      else if (c === 49) style.bg = null;
      else if (c === 38 || c === 48) {
        // 256-colour and true-colour forms: the first 16 are mapped, others drawn plain.
        const mode = codes[i + 1];
        const n = codes[i + 2];
        const slot = c === 38 ? 'fg' : 'bg';
        if (mode === 5) style[slot] = n < 16 ? n : null;
        else style[slot] = null;
        i += mode === 5 ? 2 : mode === 2 ? 4 : 1;
      }
    }
  };

  const classes = () =>
    [
      style.fg === null ? '' : `ansi-fg${style.fg}`,
      style.bg === null ? '' : `ansi-bg${style.bg}`,
      style.bold ? 'ansi-bold' : '',
      style.dim ? 'ansi-dim' : '',
      style.italic ? 'ansi-italic' : '',
      style.underline ? 'ansi-underline' : '',
    ]
      .filter(Boolean)
      .join(' ');

  /** The chunk as nodes: plain text as text nodes, styled text as spans; escape codes never shown. */
  return function nodes(chunk) {
    let text = carry + chunk;
    carry = '';
    const cut = UNFINISHED.exec(text);
    if (cut && cut[0].length < 256) {
      carry = cut[0];
      text = text.slice(0, cut.index);
    }
    const out = [];
    const push = (raw) => {
      if (raw === '') return;
      const cls = classes();
      const s = document.createTextNode(terminalText(raw, 'stream'));
      out.push(cls ? el('span', { class: cls }, s) : s);
    };
    let last = 0;
    for (const m of text.matchAll(ESCAPE)) {
      push(text.slice(last, m.index));
      last = m.index + m[0].length;
      if (m[2] === 'm') apply(m[1]);
    }
    push(text.slice(last));
    return out;
  };
}
