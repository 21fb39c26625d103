// The task view: its facts above, then one tab at a time — the agent's conversation, the diff
// with its review, the services, the log with setup and verify, the audit, the events. Every
// panel is built (the log and the conversation stream into theirs while hidden); one shows.
import { actionButtons, callAction } from './actions.js';
import {
  eventBlock,
  kv,
  landedCell,
  lastRunCell,
  portsCell,
  provisionCell,
  skeleton,
  stateCell,
  verifyCell,
} from './cells.js';
import { conflictsSection } from './conflicts.js';
import { diffView } from './diff.js';
import { age, el, table } from './dom.js';
import { page, state, taskHref, taskKey } from './state.js';
import { notify } from './toast.js';

export const TABS = [
  ['conversation', 'Conversation'],
  ['diff', 'Diff'],
  ['services', 'Services'],
  ['log', 'Log'],
  ['audit', 'Audit'],
  ['events', 'Events'],
];
const TAB_NAMES = TABS.map(([name]) => name);

/** The events shown at first; the rest behind a button. */
const EVENTS_SHOWN = 50;
/** An audit section longer than this starts folded. */
const AUDIT_OPEN_LINES = 12;

/** The tab chosen for each task while the page is open: a redraw keeps it. */
const chosen = new Map();

/** The tab to show: the one in the address, else the one chosen before, else where the action is. */
export function tabFor(project, id, routed, data) {
  if (TAB_NAMES.includes(routed)) return routed;
  const before = chosen.get(taskKey(project, id));
  if (before) return before;
  if (data && data.conversation) return 'conversation';
  if (data && data.log && data.log.running) return 'log';
  return 'diff';
}

/** Shows tab `name` of the task view on the page, and puts it in the address (without a new history entry). */
export function selectTab(project, id, name) {
  const root = document.getElementById('task');
  if (!root || !TAB_NAMES.includes(name)) return;
  chosen.set(taskKey(project, id), name);
  for (const b of root.querySelectorAll('nav.tabs [data-tab]')) {
    const on = b.getAttribute('data-tab') === name;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
  }
  for (const p of root.querySelectorAll('.tab-panel')) p.hidden = p.getAttribute('data-panel') !== name;
  const href = taskHref(project, id, name);
  if (location.hash !== href) history.replaceState(history.state, '', href);
}

function tabBar(project, id, counts, active) {
  const nav = el(
    'nav',
    { class: 'tabs', role: 'tablist', 'aria-label': 'task' },
    TABS.map(([name, label]) =>
      el(
        'button',
        {
          type: 'button',
          role: 'tab',
          class: 'tab',
          id: `tab-${name}`,
          'data-tab': name,
          'aria-controls': `panel-${name}`,
          'aria-selected': String(name === active),
          tabindex: name === active ? '0' : '-1',
          onclick: () => selectTab(project, id, name),
        },
        label,
        counts && counts[name] !== undefined && counts[name] !== null
          ? el('span', { class: `count${counts[name] === '●' ? ' live' : ''}` }, String(counts[name]))
          : null,
      ),
    ),
  );
  // Arrow keys move between tabs, as in any tab list.
  nav.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowRight' && ev.key !== 'ArrowLeft') return;
    const i = TAB_NAMES.indexOf(document.activeElement?.getAttribute('data-tab'));
    if (i < 0) return;
    const next = TAB_NAMES[(i + (ev.key === 'ArrowRight' ? 1 : TAB_NAMES.length - 1)) % TAB_NAMES.length];
    selectTab(project, id, next);
    nav.querySelector(`[data-tab="${next}"]`).focus();
  });
  return nav;
}

function panel(name, active, ...children) {
  return el(
    'section',
    {
      class: 'tab-panel',
      id: `panel-${name}`,
      role: 'tabpanel',
      'data-panel': name,
      'aria-labelledby': `tab-${name}`,
      ...(name === active ? {} : { hidden: '' }),
    },
    ...children,
  );
}

/**
 * What the page shows while /api/task is read: the task's facts as the fleet had them (when it
 * had them), and the tabs, greyed.
 */
export function taskSkeleton(project, id, routed) {
  const row = state.fleet?.projects.find((p) => p.key === project)?.tasks.find((t) => t.id === id);
  const active = tabFor(project, id, routed, null);
  return el(
    'div',
    { id: 'task-loading', 'data-task': id, 'aria-busy': 'true' },
    el('p', {}, el('a', { href: '#/' }, '← fleet')),
    el('div', { class: 'section-head' }, el('h2', {}, id, ' ', row ? stateCell(row) : skeleton())),
    row
      ? factsOf(row, null)
      : el(
          'dl',
          { class: 'kv' },
          [0, 1, 2, 3].map(() => [el('dt', {}, skeleton()), el('dd', {}, skeleton('line'))]),
        ),
    tabBar(project, id, null, active),
    el('div', { class: 'tab-panel' }, skeleton('block'), skeleton('line'), skeleton('line')),
  );
}

/** Where the task's processes run (the task view's `runner`: show's), and what holds them. */
function runnerCell(r) {
  const where =
    r.where === 'host'
      ? [`on host ${r.name} (${r.address ?? 'not declared any more'}) in `, el('code', {}, r.remotePath ?? '?')]
      : r.where === 'cluster'
        ? [`in cluster ${r.name}, claim `, el('code', {}, r.handle ?? '?')]
        : [`here${r.handle ? `, container ${r.handle}` : ''}`];
  return el(
    'span',
    { title: r.boundary },
    el('code', {}, r.runner),
    ' ',
    ...where,
    r.pending ? el('span', { class: 'muted' }, ' (commits there not fetched yet)') : '',
  );
}

/** The task's facts: what the fleet shows of it, and where it is. */
function factsOf(t, detailed) {
  return kv([
    ['branch', el('code', {}, t.branch)],
    t.landed
      ? ['landed', landedCell(t.landed)]
      : [
          'base',
          detailed ? `${t.base} (${t.behind ?? '?'} behind, ${t.ahead ?? '?'} ahead)` : [t.base, ' ', skeleton()],
        ],
    ['path', el('code', {}, t.path)],
    ...(t.runner ? [['runs', runnerCell(t.runner)]] : []),
    ['open in', editorLinks(t)],
    ['age', age(t.createdAt)],
    ['changes', detailed ? (t.changes === null ? '?' : String(t.changes)) : skeleton()],
    ['provisioned', detailed ? provisionCell(t.provision) : skeleton()],
    ['ports', portsCell(t.ports, t.endpoints)],
    ['verify', verifyCell(t.verify, t.landed !== null)],
    ['last run', lastRunCell(t.lastRun, t.landed !== null)],
  ]);
}

/**
 * The task view from /api/task; `boxes.log` and `boxes.transcript` are where the page streams
 * the log and the conversation. `routed`: the tab the address names, if any.
 */
export function taskView(data, routed, boxes) {
  const t = data.task;
  const active = tabFor(t.project, t.id, routed, data);
  chosen.set(taskKey(t.project, t.id), active);
  const openComments = data.comments.filter((c) => c.state === 'open').length;
  const counts = {
    conversation: data.conversation ? (data.conversation.running ? '●' : null) : null,
    diff: data.diff.ok ? data.diff.value.files.length + (openComments ? ` · ${openComments} open` : '') : '?',
    services: data.services.length || null,
    log: data.log && data.log.running ? '●' : null,
    audit: null,
    events: data.events.length,
  };
  return el(
    'div',
    { id: 'task', 'data-task': t.id },
    el('p', {}, el('a', { href: '#/' }, '← fleet')),
    el(
      'div',
      { class: 'section-head' },
      el('h2', {}, t.id, ' ', stateCell(t, state.busy.get(taskKey(t.project, t.id)))),
      el('div', { class: 'actions' }, actionButtons('task', t.project, t.id, t.state)),
    ),
    factsOf(t, true),
    tabBar(t.project, t.id, counts, active),
    panel('conversation', active, boxes.transcript),
    panel(
      'diff',
      active,
      // A landed task's work is on the base as one commit: its own commits are history.
      t.landed ? null : commitsSection(t, data.commits),
      conflictsSection(t, data.conflicts),
      el('h3', {}, 'Changes against the base'),
      data.diff.ok
        ? diffView(data.diff.value, {
            taskKey: `${t.project}/${t.id}/${t.createdAt}`,
            comments: data.comments,
            onComment: async (c) =>
              (
                await callAction('comment', t.project, t.id, {
                  path: c.path,
                  line: String(c.line),
                  side: c.side,
                  body: c.body,
                })
              ).result,
            onCompose: (active) => {
              state.composing = active;
              if (!active) page.refresh(0);
            },
          })
        : el('p', { class: 'error-text' }, `Could not read the diff: ${data.diff.error}`),
      el('h3', {}, `Review comments (${openComments} open)`),
      reviewPanel(t, data),
    ),
    panel('services', active, servicesSection(data.services)),
    panel(
      'log',
      active,
      el('h3', {}, 'Log of the newest command'),
      boxes.log,
      el('h3', {}, 'Setup'),
      eventBlock(data.setup),
      el('h3', {}, 'Verify'),
      eventBlock(data.verify),
    ),
    panel('audit', active, auditSection(data.audit)),
    panel('events', active, eventsSection(data.events)),
  );
}

/** The commits on the task's branch that its base does not have. */
function commitsSection(t, commits) {
  return [
    el('h3', {}, `Commits not on ${t.base}${commits.ok ? ` (${commits.value.length})` : ''}`),
    !commits.ok
      ? el('p', { class: 'error-text' }, `Could not read the commits: ${commits.error}`)
      : commits.value.length === 0
        ? el('p', { class: 'muted' }, 'None.')
        : el(
            'ul',
            { class: 'commits' },
            commits.value.map((c) => el('li', {}, el('code', {}, c.sha.slice(0, 12)), ' ', c.subject)),
          ),
  ];
}

/**
 * The task's services: each with its state, where it is reached (a dev server's port as a
 * link, built here from the number: never an address taken from the data) and its log.
 */
function servicesSection(services) {
  if (services.length === 0)
    return el(
      'p',
      { class: 'muted' },
      'No services: warren.yaml declares none (services:), or this task predates them.',
    );
  return el(
    'div',
    { class: 'scroll-x' },
    table(
      { class: 'services' },
      ['name', 'kind', 'state', 'where', 'log'],
      services.map((s) =>
        el(
          'tr',
          { 'data-service': s.name },
          el('td', {}, s.name),
          el('td', {}, s.kind),
          el(
            'td',
            {},
            el(
              'span',
              { class: `badge ${s.state === 'running' ? 'good' : s.state === 'crashed' ? 'bad' : ''}` },
              s.state,
            ),
          ),
          el(
            'td',
            {},
            s.kind === 'run' && Number.isInteger(s.port)
              ? el(
                  'a',
                  { href: `http://127.0.0.1:${s.port}/`, target: '_blank', rel: 'noopener noreferrer' },
                  `http://127.0.0.1:${s.port}/`,
                )
              : el('code', {}, s.url ?? '—'),
            s.database ? el('span', { class: 'muted' }, ` from ${s.from}`) : '',
          ),
          el('td', {}, s.log ? el('code', {}, s.log) : '—'),
        ),
      ),
    ),
  );
}

/** Each audit section folded under its name; a short one open. */
function auditSection(audit) {
  if (audit.length === 0) return el('p', { class: 'muted' }, 'No audit sections are registered in this build.');
  return audit.map((s) =>
    el(
      'details',
      {
        class: 'audit',
        'data-section': s.name,
        ...(s.error || s.lines.length <= AUDIT_OPEN_LINES ? { open: '' } : {}),
      },
      el(
        'summary',
        {},
        el('strong', {}, s.name),
        el(
          'span',
          { class: 'muted' },
          s.error ? ' could not be read' : ` ${s.lines.length} line${s.lines.length === 1 ? '' : 's'}`,
        ),
      ),
      s.error ? el('p', { class: 'error-text' }, s.error) : el('pre', {}, s.lines.join('\n')),
    ),
  );
}

function eventItem(e) {
  return el(
    'li',
    { class: `level-${e.level}` },
    el('time', { datetime: e.at, title: e.at }, `${age(e.at)} ago`),
    el('span', { class: 'kind' }, e.kind),
    el('span', { class: 'msg' }, e.message),
  );
}

/** The events, newest first: the first EVENTS_SHOWN, and a button for the rest. */
function eventsSection(events) {
  const newest = [...events].reverse();
  const list = el('ol', { class: 'timeline' }, newest.slice(0, EVENTS_SHOWN).map(eventItem));
  if (newest.length <= EVENTS_SHOWN) return list;
  const more = el(
    'button',
    {
      type: 'button',
      class: 'show-more',
      onclick: () => {
        list.append(...newest.slice(EVENTS_SHOWN).map(eventItem));
        more.remove();
      },
    },
    `Show all ${newest.length} events (${newest.length - EVENTS_SHOWN} older)`,
  );
  return [list, more];
}

/**
 * Links that open the workspace in an editor installed on this machine (its URL scheme opens
 * the folder), and a button for the editor named in $WARREN_HOME/config.yaml (`editor:`).
 */
function editorLinks(t) {
  const editors = [
    ['VS Code', 'vscode'],
    ['Cursor', 'cursor'],
  ];
  const encoded = t.path.split('/').map(encodeURIComponent).join('/');
  const configured = state.meta && Array.isArray(state.meta.editor) ? state.meta.editor : null;
  return el(
    'span',
    { class: 'editors' },
    editors.map(([name, scheme], i) => [
      i > 0 ? ' · ' : null,
      el('a', { href: `${scheme}://file${encoded}`, 'data-editor': scheme }, name),
    ]),
    configured
      ? [
          ' · ',
          el(
            'button',
            {
              type: 'button',
              'data-action': 'open',
              title: `runs ${configured.join(' ')} ${t.path}`,
              onclick: async () => {
                try {
                  const { result: r } = await callAction('open', t.project, t.id, {});
                  notify('open', taskKey(t.project, t.id), `Opened ${r.path} with ${r.editor.join(' ')}`);
                } catch {
                  // shown by callAction
                }
              },
            },
            `Open in ${configured[0].split('/').pop()}`,
          ),
        ]
      : null,
  );
}

/** The task's review comments (open first), each resolvable, and Send to agent with the open ones. */
function reviewPanel(t, data) {
  const open = data.comments.filter((c) => c.state === 'open');
  const ordered = [...open, ...data.comments.filter((c) => c.state !== 'open')];
  const agent = el(
    'select',
    { name: 'agent', 'aria-label': 'agent' },
    data.agents.names.map((n) =>
      el('option', { value: n, ...(n === data.agents.preferred ? { selected: '' } : {}) }, n),
    ),
  );
  if (!data.agents.names.includes(data.agents.preferred))
    agent.prepend(el('option', { value: data.agents.preferred, selected: '' }, data.agents.preferred));
  const send = el(
    'button',
    { type: 'button', 'data-action': 'review', ...(open.length === 0 ? { disabled: '' } : {}) },
    `Send ${open.length} open comment${open.length === 1 ? '' : 's'} to the agent`,
  );
  send.addEventListener('click', async () => {
    send.disabled = true;
    try {
      const { result: r, toast: shown } = await callAction(
        'review',
        t.project,
        t.id,
        { agent: agent.value },
        `Sending ${open.length} comment(s) to ${agent.value}…`,
      );
      shown.done(
        `Sent ${r.comments.length} comment(s) to ${agent.value}: ${r.reason ?? `exit ${r.exitCode}`}; ${r.resolved ? 'resolved' : 'still open'}`,
        [`log ${r.log}`],
      );
    } catch {
      send.disabled = false;
    }
  });
  return el(
    'div',
    { class: 'review' },
    ordered.length === 0
      ? el(
          'p',
          { class: 'muted' },
          'None yet. Click a line of the diff above to comment on it; Send to agent then gives the open comments to the agent as its prompt.',
        )
      : el(
          'ol',
          { class: 'comments' },
          ordered.map((c) =>
            el(
              'li',
              { 'data-comment': String(c.id), 'data-state': c.state },
              el('span', { class: `badge ${c.state === 'open' ? 'running' : 'good'}` }, c.state),
              ' ',
              el('code', {}, `${c.path}:${c.line}${c.side === 'old' ? ' (removed line)' : ''}`),
              ' ',
              el('span', { class: 'body' }, c.body),
              ' ',
              el(
                'button',
                {
                  type: 'button',
                  class: 'resolve',
                  onclick: () =>
                    callAction('resolve', t.project, t.id, {
                      comment: String(c.id),
                      state: c.state === 'open' ? 'resolved' : 'open',
                    }).catch(() => undefined),
                },
                c.state === 'open' ? 'Resolve' : 'Reopen',
              ),
              el(
                'details',
                { class: 'hunk' },
                el('summary', {}, 'the diff it was made on'),
                el('pre', { class: 'diff' }, c.hunk),
              ),
            ),
          ),
        ),
    el('div', { class: 'send' }, el('label', {}, 'Agent ', agent), ' ', send),
  );
}
