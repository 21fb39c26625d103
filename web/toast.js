// Toasts: what an action is doing, shown the moment it is asked for, turning into its result or
// its refusal when the server answers. One toast per action and target: asking again replaces it.
import { el } from './dom.js';

/** At most this many at once: the oldest settled ones give way. */
const MAX_TOASTS = 3;

const region = () => document.getElementById('toasts');

function closeButton(node) {
  return el('button', { type: 'button', class: 'close', 'aria-label': 'close', onclick: () => node.remove() }, '×');
}

/**
 * A pending toast for `action` on `target` ("New task from-page…"), with a spinner; returns
 * `done(title, lines)` and `fail(err)`, which turn it into the result or the refusal.
 */
export function toast(action, target, text) {
  const key = `${action} ${target ?? ''}`;
  for (const old of region().querySelectorAll('.toast')) if (old.getAttribute('data-key') === key) old.remove();
  const node = el('div', { class: 'toast pending', 'data-action': action, 'data-key': key, role: 'status' });
  node.append(el('span', { class: 'spinner', 'aria-hidden': 'true' }), el('span', { class: 'msg' }, text));
  region().append(node);
  const settled = [...region().querySelectorAll('.toast:not(.pending)')];
  const extra = region().querySelectorAll('.toast').length - MAX_TOASTS;
  for (const old of settled.slice(0, Math.max(0, extra))) old.remove();
  return {
    done(title, lines = []) {
      node.className = 'toast info';
      node.replaceChildren(
        ...[
          el('span', { class: 'msg' }, title),
          lines.length
            ? el(
                'ul',
                { class: 'details' },
                lines.map((l) => el('li', {}, l)),
              )
            : null,
          closeButton(node),
        ].filter(Boolean),
      );
    },
    /** A refusal exactly as the library worded it: code, message, hint. */
    fail(err) {
      if (err && err.locked) return node.remove();
      const info = err.info || { code: 'ERROR', message: String(err.message || err) };
      node.className = 'toast error';
      node.setAttribute('role', 'alert');
      node.replaceChildren(
        ...[
          el('strong', {}, info.code),
          el('span', { class: 'msg' }, info.message),
          info.hint ? el('span', { class: 'hint' }, `hint: ${info.hint}`) : null,
          closeButton(node),
        ].filter(Boolean),
      );
    },
  };
}

/** A result with nothing pending before it (an editor opened). */
export function notify(action, target, title, lines = []) {
  toast(action, target, title).done(title, lines);
}

/** Leaving a page, or asking `action` again: the refusals (of that action) no longer apply; results stay until closed. */
export function clearErrorToasts(action) {
  for (const node of region().querySelectorAll('.toast.error'))
    if (action === undefined || node.getAttribute('data-action') === action) node.remove();
}
