// warren dashboard client: the one way data enters the page (el), and calls to the server.
// Every piece of data (branch names, file names, log lines, commit messages, event messages) is
// hostile text: it reaches the page only through text nodes, never as HTML.

export const TOKEN = document.querySelector('meta[name="warren-token"]').getAttribute('content');
const notice = document.getElementById('notice');

// ---- DOM: the one way data enters the page --------------------------------------------------

/** el('td', {class: 'x'}, 'text', child): strings become text nodes; attributes via setAttribute. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
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
  let res;
  try {
    res = await fetch(path, {
      ...init,
      headers: { 'x-warren-token': TOKEN, ...(init.headers || {}) },
      ...(read ? { signal: AbortSignal.timeout(READ_TIMEOUT_MS) } : {}),
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
  }
  const body = await res.json().catch(() => ({ error: { code: 'BAD_RESPONSE', message: `HTTP ${res.status}` } }));
  if (!res.ok || body.error)
    throw Object.assign(new Error(body.error ? body.error.message : `HTTP ${res.status}`), { info: body.error });
  return body;
}

/** Shows a refusal exactly as the library worded it: code, message, hint. */
export function showError(err) {
  const info = err.info || { code: 'ERROR', message: String(err.message || err) };
  notice.replaceChildren(
    el('strong', {}, info.code),
    el('span', { class: 'msg' }, info.message),
    info.hint ? el('span', { class: 'hint' }, `hint: ${info.hint}`) : null,
    el('button', { type: 'button', class: 'close', onclick: () => (notice.hidden = true) }, '×'),
  );
  notice.className = 'error';
  notice.hidden = false;
}

export function showInfo(text, lines = []) {
  notice.replaceChildren(
    el('span', { class: 'msg' }, text),
    lines.length
      ? el(
          'ul',
          { class: 'details' },
          lines.map((l) => el('li', {}, l)),
        )
      : null,
    el('button', { type: 'button', class: 'close', onclick: () => (notice.hidden = true) }, '×'),
  );
  notice.className = 'info';
  notice.hidden = false;
}
