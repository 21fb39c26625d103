// The disk and age view of a repository's fleet: what each workspace takes (its cow layers
// counted), how old it is, how long it has been idle, and one action to remove the landed ones.
import { age, el } from './dom.js';

export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

function sizeCell(n, part) {
  return el(
    'td',
    {
      class: 'num',
      'data-bytes': String(n),
      ...(part ? { 'data-part': part } : {}),
      title: `${n.toLocaleString('en')} bytes`,
    },
    bytes(n),
  );
}

/** `name`: the repository's name; `onRemoveLanded(ids)`: runs the removal after the page asked. */
export function diskView(data, name, taskHref, onRemoveLanded) {
  const rows = data.tasks.map((t) =>
    el(
      'tr',
      { 'data-task': t.id, class: t.landed ? 'landed-row' : '' },
      el('td', {}, el('a', { href: taskHref(data.project, t.id) }, t.id)),
      el('td', {}, t.landed ? el('span', { class: 'badge state-landed' }, 'landed') : t.state),
      el('td', { 'data-age': t.createdAt }, age(t.createdAt)),
      el('td', { title: t.lastActivity }, `${age(t.lastActivity)} ago`),
      sizeCell(t.bytes.workspace, 'workspace'),
      sizeCell(t.bytes.layers, 'layers'),
      sizeCell(t.bytes.logs, 'logs'),
      sizeCell(t.bytes.total, 'total'),
      el('td', { class: 'muted' }, t.unreadable ? `${t.unreadable} unreadable (at least this much)` : ''),
    ),
  );
  const landed = data.landed;
  return el(
    'div',
    { id: 'disk', 'data-project': data.project },
    el('p', {}, el('a', { href: '#/' }, '← fleet')),
    el(
      'div',
      { class: 'section-head' },
      el('h2', {}, `Disk and age: ${name}`),
      el(
        'div',
        { class: 'actions' },
        el(
          'button',
          {
            type: 'button',
            class: 'danger',
            'data-action': 'rm-landed',
            ...(landed.length === 0 ? { disabled: '' } : {}),
            onclick: () => onRemoveLanded(landed),
          },
          `Remove ${landed.length} landed task${landed.length === 1 ? '' : 's'}`,
        ),
      ),
    ),
    el(
      'p',
      { class: 'muted' },
      "Each workspace's own bytes on disk, as du -sx counts them: its folder (not crossing into a mount), the private upper layers of its copy-on-write paths or checkout (the snapshot below them is shared), and its logs and agent state under WARREN_HOME. Idle: since the newest thing warren recorded about it.",
    ),
    data.tasks.length === 0
      ? el('p', { class: 'muted' }, 'No tasks.')
      : el(
          'table',
          { class: 'disk' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ['task', 'state', 'age', 'idle', 'workspace', 'cow layers', 'logs', 'total', ''].map((h, i) =>
                el('th', { class: i >= 4 && i <= 7 ? 'num' : '' }, h),
              ),
            ),
          ),
          el('tbody', {}, rows),
          el(
            'tfoot',
            {},
            el(
              'tr',
              {},
              el('td', { colspan: '7' }, `${data.tasks.length} task(s)`),
              sizeCell(data.total, 'fleet-total'),
              el('td', {}),
            ),
          ),
        ),
  );
}
