// warren dashboard client: the one way data enters the page (el), and calls to the server.
// Every piece of data (branch names, file names, log lines, commit messages, event messages) is
// hostile text: it reaches the page only through text nodes, never as HTML, and its control
// characters (an escape, a carriage return, a bidi override) are shown as the terminal shows
// them (`\x1b`, `\r`, `\u202e`), by the command line's own function (src/util/terminal-text.ts,
// built by scripts/bundle.js).
import { terminalText } from './terminal-text.js';

export { terminalText };

/** Where this tab keeps the token once it has taken it out of the address bar. */
const TOKEN_KEY = 'warren-token';

/**
 * The token comes in the address `warren serve` printed (`/?token=…`), never from the server:
 * the page keeps it for this tab (a reload still works) and takes it out of the address bar,
 * so that a copied link or a screen share does not carry it.
 */
function takeToken() {
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete('token');
    history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export const TOKEN = takeToken();
const notice = document.getElementById('notice');

// ---- DOM: the one way data enters the page --------------------------------------------------

/**
 * el('td', {class: 'x'}, 'text', child): strings become text nodes, newlines and tabs kept and
 * every other control character shown as an escape; attributes via setAttribute (a title, which
 * the browser shows, made safe the same way).
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : k === 'title' ? terminalText(String(v), 'block') : String(v));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(terminalText(String(child), 'block')));
  }
  return node;
}

/** A table: its header row (strings, or `th` elements made already) and its body's rows. */
export function table(attrs, heads, rows) {
  return el(
    'table',
    attrs,
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        heads.map((h) => (h instanceof Node ? h : el('th', {}, h))),
      ),
    ),
    el('tbody', {}, rows),
  );
}

export function age(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function duration(ms) {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60000)}m${Math.round((ms % 60000) / 1000)}s`;
}

// ---- server calls ---------------------------------------------------------------------------

/** A read that has not answered by then is given up (and said so), so one hung request cannot stop every later refresh. */
const READ_TIMEOUT_MS = 20_000;

export async function api(path, init = {}) {
  const read = !init.method || init.method === 'GET';
  // A timer rather than AbortSignal.timeout: the same, and a test's fake clock can run it.
  const giveUp = read ? new AbortController() : null;
  const timer = giveUp
    ? setTimeout(() => giveUp.abort(new DOMException('the read timed out', 'TimeoutError')), READ_TIMEOUT_MS)
    : null;
  let res;
  try {
    res = await fetch(path, {
      ...init,
      headers: { 'x-warren-token': TOKEN, ...(init.headers || {}) },
      ...(giveUp ? { signal: giveUp.signal } : {}),
    });
  } catch (err) {
    if (err && err.name === 'TimeoutError') {
      throw Object.assign(new Error('timeout'), {
        info: {
          code: 'TIMEOUT',
          message: `the server did not answer ${path.split('?')[0]} within ${READ_TIMEOUT_MS / 1000} s; the page will ask again on the next change.`,
        },
      });
    }
    throw err;
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
  const body = await res.json().catch(() => ({ error: { code: 'BAD_RESPONSE', message: `HTTP ${res.status}` } }));
  if (res.status === 403 && body.error && body.error.code === 'FORBIDDEN') {
    // A token the server does not take (another WARREN_HOME's, or one replaced since): forget it.
    sessionStorage.removeItem(TOKEN_KEY);
    showLocked();
    throw Object.assign(new Error('locked'), { locked: true });
  }
  if (!res.ok || body.error)
    throw Object.assign(new Error(body.error ? body.error.message : `HTTP ${res.status}`), { info: body.error });
  return body;
}

/** Without a token the page shows how to open it, and nothing else. */
export function showLocked() {
  document.body.classList.add('locked');
  document
    .getElementById('view')
    .replaceChildren(
      el(
        'section',
        { id: 'locked' },
        el('h2', {}, 'This dashboard needs its token'),
        el(
          'p',
          {},
          'Open the address ',
          el('code', {}, 'warren serve'),
          ' printed: it ends in ',
          el('code', {}, '?token=…'),
          '. Or add ',
          el('code', {}, '?token='),
          ' and the contents of ',
          el('code', {}, '$WARREN_HOME/dashboard/token'),
          ' (by default ',
          el('code', {}, '~/.warren/dashboard/token'),
          ') to this address.',
        ),
      ),
    );
  notice.hidden = true;
}

/** Shows why the page could not be read, exactly as the server worded it: code, message, hint. */
export function showError(err) {
  if (err && err.locked) return;
  const info = err.info || { code: 'ERROR', message: String(err.message || err) };
  // replaceChildren would write a null as the text "null": absent parts are left out.
  notice.replaceChildren(
    ...[
      el('strong', {}, info.code),
      el('span', { class: 'msg' }, info.message),
      info.hint ? el('span', { class: 'hint' }, `hint: ${info.hint}`) : null,
      el('button', { type: 'button', class: 'close', onclick: () => (notice.hidden = true) }, '×'),
    ].filter(Boolean),
  );
  notice.className = 'error';
  notice.hidden = false;
}

/** Another page: what went wrong reading the last one no longer applies. */
export function clearNotice() {
  notice.hidden = true;
  notice.replaceChildren();
}
