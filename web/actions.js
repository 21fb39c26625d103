// The page's actions: the dialogs that ask for their options, the call to the server, and what
// the page shows at once while it answers (a toast, a pending row for a new task, a busy row).
import { api, el } from './dom.js';
import { resultLines } from './results.js';
import { page, repoName, state, taskHref, taskKey } from './state.js';
import { clearErrorToasts, toast } from './toast.js';

/** A field of the dialog for one declared option: checkbox, text box or list. */
function optionField(o) {
  if (o.type === 'boolean') {
    const input = el('input', { type: 'checkbox', name: o.name });
    return { label: el('label', {}, input, ` ${o.label}`), value: () => input.checked };
  }
  if (o.type === 'text' && o.multiline) {
    const area = el('textarea', {
      name: o.name,
      rows: '5',
      spellcheck: 'false',
      ...(o.required ? { required: '' } : {}),
    });
    return { label: el('label', { class: 'field wide' }, `${o.label} `, area), value: () => area.value };
  }
  const input =
    o.type === 'choice'
      ? el(
          'select',
          { name: o.name },
          o.choices.map((c) => el('option', { value: c }, c === '' ? '(as warren.yaml says)' : c)),
        )
      : el('input', {
          type: 'text',
          name: o.name,
          autocomplete: 'off',
          spellcheck: 'false',
          ...(o.required ? { required: '' } : {}),
        });
  return { label: el('label', { class: 'field' }, `${o.label} `, input), value: () => input.value };
}

/**
 * The confirmation dialog with `text`, `body` (nodes) and an OK button labelled `ok`; resolves
 * with `value()` on OK, or null on Cancel or Escape.
 */
export function ask({ text, body = [], ok: okLabel, danger, value = () => true }) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-options').replaceChildren(...body);
  const ok = document.getElementById('confirm-ok');
  ok.textContent = okLabel;
  ok.className = danger ? 'danger' : '';
  return new Promise((resolve) => {
    const cancel = document.getElementById('confirm-cancel');
    const finish = (v) => {
      ok.onclick = cancel.onclick = dialog.oncancel = null;
      dialog.close();
      resolve(v);
    };
    ok.onclick = () => finish(value());
    cancel.onclick = () => finish(null);
    dialog.oncancel = () => finish(null);
    dialog.showModal();
    dialog.querySelector('input[type="text"], select, textarea')?.focus();
  });
}

/** Asks before a destructive action, and for the fields of an action that needs input. */
function askAction(action, target) {
  const fields = action.options.map(optionField);
  return ask({
    text: action.destructive ? `${action.label}: ${target}?` : `${action.label} in ${target}`,
    body: fields.map((f) => f.label),
    ok: action.destructive ? 'Confirm' : action.label,
    danger: action.destructive,
    value: () => Object.fromEntries(action.options.map((o, i) => [o.name, fields[i].value()])),
  });
}

/** What the toast says while the server works. */
function pendingText(action, target) {
  return `${action.label}: ${target}…`;
}

/**
 * Runs an action from its button: asks what it needs, then shows at once that it runs (a toast;
 * for a new task a row at the top of the fleet; for a task, its row marked busy), and turns the
 * toast into the result or the refusal when the server answers.
 */
export async function runAction(action, project, id) {
  // Asked again: the last refusal of this action is answered by this attempt.
  clearErrorToasts(action.name);
  let options = {};
  // Destructive actions ask first; an action with text or choice fields asks for them.
  if (action.destructive || action.options.some((o) => o.type !== 'boolean')) {
    options = await askAction(action, id ? `task ${id}` : `repository ${repoName(project)}`);
    if (options === null) return;
  }
  const newId = !id && typeof options.id === 'string' ? options.id.trim() : '';
  const key = id ? taskKey(project, id) : newId ? taskKey(project, newId) : null;
  const shown = toast(action.name, key ?? project, pendingText(action, id ?? (newId || repoName(project))));
  if (!id && newId) {
    state.pending.set(key, { project, id: newId, type: options.type ?? '', label: action.label, answeredAt: null });
    page.render();
    [...document.querySelectorAll('tr[data-pending]')]
      .find((row) => row.getAttribute('data-pending') === key)
      ?.scrollIntoView({ block: 'nearest' });
  } else if (id) {
    state.busy.set(key, action.label);
    page.render();
  }
  try {
    const body = await api(`/api/actions/${encodeURIComponent(action.name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project, ...(id ? { id } : {}), options }),
    });
    shown.done(`${action.label}: done`, resultLines(body.result));
    // The row stays pending until a read of the fleet that starts after this answer.
    if (!id && newId && state.pending.has(key)) state.pending.get(key).answeredAt = page.reads();
    if (id && action.removesTask) location.hash = '#/';
    // An agent started in a new task: follow it there.
    if (!id && body.result && body.result.run) location.hash = taskHref(project, body.result.id);
  } catch (err) {
    shown.fail(err);
    if (!id && newId) state.pending.delete(key);
  } finally {
    if (id) state.busy.delete(key);
    page.render();
    page.refresh(0);
  }
}

/**
 * One call of an action without a dialog (a comment, Send to agent, Trust): its result and the
 * toast that said `text` while it ran (none without `text`), or a throw after a toast showed the
 * refusal.
 */
export async function callAction(name, project, id, options, text) {
  const target = id ? taskKey(project, id) : project;
  const shown = text ? toast(name, target, text) : null;
  try {
    const body = await api(`/api/actions/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project, ...(id ? { id } : {}), options }),
    });
    return { result: body.result, toast: shown };
  } catch (err) {
    (shown ?? toast(name, target, '')).fail(err);
    throw err;
  } finally {
    page.refresh(0);
  }
}

/** The actions of a task (in its state) or a project; those the page calls from elsewhere (inline) are not among them. */
function actionsFor(scope, taskState) {
  return (state.meta ? state.meta.actions : []).filter(
    (a) => a.scope === scope && !a.inline && (!a.states || taskState === undefined || a.states.includes(taskState)),
  );
}

/** The buttons of a task or a project, side by side (the task page, a repository's heading). */
export function actionButtons(scope, project, id, taskState) {
  return actionsFor(scope, taskState).map((a) =>
    el(
      'button',
      {
        type: 'button',
        class: a.destructive ? 'danger' : '',
        'data-action': a.name,
        onclick: (ev) => (ev.stopPropagation(), runAction(a, project, id)),
      },
      a.label,
    ),
  );
}

/** A row's actions in one menu (⋯): the row stays one line high, and narrow screens keep it. */
export function actionMenu(project, id, taskState) {
  const key = taskKey(project, id);
  const menu = el(
    'details',
    { class: 'menu', 'data-menu': key, ...(state.openMenu === key ? { open: '' } : {}) },
    el('summary', { title: 'Actions', 'aria-label': `Actions for ${id}` }, '⋯'),
    el(
      'div',
      { class: 'menu-items', role: 'menu' },
      actionsFor('task', taskState).map((a) =>
        el(
          'button',
          {
            type: 'button',
            role: 'menuitem',
            class: a.destructive ? 'danger' : '',
            'data-action': a.name,
            onclick: (ev) => {
              ev.stopPropagation();
              closeMenus();
              runAction(a, project, id);
            },
          },
          a.label,
        ),
      ),
    ),
  );
  menu.addEventListener('toggle', () => {
    if (menu.open) {
      state.openMenu = key;
      for (const other of document.querySelectorAll('details.menu[open]')) if (other !== menu) other.open = false;
    } else if (state.openMenu === key) state.openMenu = null;
  });
  return menu;
}

export function closeMenus() {
  state.openMenu = null;
  for (const m of document.querySelectorAll('details.menu[open]')) m.open = false;
}

// A click elsewhere, or Escape, closes an open menu.
document.addEventListener('click', (ev) => {
  if (!(ev.target instanceof Node) || !ev.target.parentElement?.closest('details.menu')) closeMenus();
});
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') closeMenus();
});

/** The Trust button, shown while warren.yaml's commands are not trusted: it shows the set first, as `warren trust` does. */
export function trustButton(p) {
  if (!p.trust || p.trust.trusted) return null;
  return el(
    'button',
    {
      type: 'button',
      class: 'danger',
      'data-action': 'trust',
      onclick: async (ev) => {
        ev.stopPropagation();
        if (!(await askTrust(p))) return;
        try {
          const { result, toast: shown } = await callAction(
            'trust',
            p.key,
            undefined,
            { hash: p.trust.hash },
            `Trust: ${repoName(p.key)}…`,
          );
          shown.done('Trust: done', resultLines(result));
        } catch {
          // shown by callAction
        }
      },
    },
    'Trust commands…',
  );
}

/** The set as `warren trust` lists it, `*` marking what is new or changed since an earlier trust; resolves true to trust it. */
function askTrust(p) {
  const t = p.trust;
  const marked = t.trustedAt !== null;
  return ask({
    text: `${repoName(p.key)}'s warren.yaml asks warren to run these commands (sha256 ${t.hash.slice(0, 12)})${marked ? '; * new or changed since you trusted an earlier set' : ''}. warren runs none of them until you trust this set:`,
    body: [
      el(
        'pre',
        { class: 'data trust-set' },
        t.commands.map((c) => `${marked && t.changed.includes(c) ? '* ' : marked ? '  ' : ''}${c}\n`),
      ),
      t.settingsChanged.length
        ? el('p', { class: 'warn' }, `security settings changed: ${t.settingsChanged.join('; ')}`)
        : null,
    ].filter(Boolean),
    ok: 'Trust these commands',
    danger: true,
  });
}
