// The fleet view: every task of a repository (or of all of them) in one table, newest first, with
// a row at the top for each task being made; what needs git and a walk of the workspace (drift,
// changes, provisioned paths, strays) filled in when /api/fleet/details answers.
import { actionButtons, actionMenu, trustButton } from './actions.js';
import {
  driftCell,
  landedCell,
  lastRunCell,
  portsCell,
  provisionCell,
  skeleton,
  stateCell,
  verifyCell,
} from './cells.js';
import { age, el, table } from './dom.js';
import { openLog } from './log.js';
import { state, taskHref, taskKey } from './state.js';

/** The table's columns: `data-col` of each cell, and its heading (also the label of a cell on a phone). */
const COLUMNS = [
  ['id', 'ID'],
  ['type', 'type'],
  ['state', 'state'],
  ['branch', 'branch'],
  ['age', 'age'],
  ['drift', 'base drift'],
  ['changes', 'changes'],
  ['provision', 'provisioned'],
  ['ports', 'ports'],
  ['verify', 'verify'],
  ['run', 'last run'],
  ['menu', ''],
];
const HEADING = Object.fromEntries(COLUMNS);

function cell(col, attrs, ...children) {
  return el('td', { 'data-col': col, 'data-label': HEADING[col], ...attrs }, ...children);
}

/** What the page shows before the fleet has answered: the table's shape, greyed. */
export function fleetSkeleton() {
  return el(
    'div',
    { id: 'fleet-loading', 'aria-busy': 'true' },
    el(
      'section',
      { class: 'project' },
      el('div', { class: 'section-head' }, el('h2', {}, 'Tasks'), skeleton('button')),
      table(
        { class: 'fleet' },
        COLUMNS.map(([col, h]) => el('th', { 'data-col': col }, h)),
        [0, 1, 2].map(() =>
          el(
            'tr',
            { class: 'skeleton-row' },
            COLUMNS.map(([col]) => cell(col, {}, col === 'menu' ? null : skeleton())),
          ),
        ),
      ),
    ),
  );
}

export function fleetView() {
  const fleet = state.fleet;
  const many = document.getElementById('all-repos').checked;
  return el(
    'div',
    { id: 'fleet' },
    fleet.projects.length === 0
      ? el('p', { class: 'muted' }, 'No repositories yet.')
      : fleet.projects.map((p) => projectSection(p, many)),
  );
}

function taskRow(t, details) {
  const href = taskHref(t.project, t.id);
  const key = taskKey(t.project, t.id);
  const known = details !== undefined;
  return el(
    'tr',
    { 'data-task': t.id, class: state.busy.has(key) ? 'busy' : '', onclick: () => (location.hash = href) },
    cell('id', {}, el('a', { href, class: 'task-link' }, t.id)),
    cell('type', {}, t.type),
    cell('state', {}, stateCell(t, state.busy.get(key))),
    cell('branch', {}, el('code', {}, t.branch)),
    cell('age', { 'data-age': t.createdAt }, age(t.createdAt)),
    cell('drift', {}, t.landed ? landedCell(t.landed) : known ? driftCell(details) : skeleton()),
    cell(
      'changes',
      {},
      !known ? skeleton() : details.changes === null ? el('span', { class: 'muted' }, '?') : String(details.changes),
    ),
    cell('provision', {}, known ? provisionCell(details.provision) : skeleton()),
    cell('ports', { onclick: (ev) => ev.stopPropagation() }, portsCell(t.ports, t.endpoints)),
    cell('verify', {}, verifyCell(t.verify, t.landed !== null)),
    cell('run', {}, lastRunCell(t.lastRun, t.landed !== null)),
    cell('menu', { class: 'actions', onclick: (ev) => ev.stopPropagation() }, actionMenu(t.project, t.id, t.state)),
  );
}

/** A task asked for and not listed yet: shown at once, where the user looks (the top). */
function pendingRow(p) {
  const key = taskKey(p.project, p.id);
  return el(
    'tr',
    { 'data-task': p.id, 'data-pending': key, class: 'pending' },
    cell('id', {}, el('strong', {}, p.id)),
    cell('type', {}, p.type),
    cell(
      'state',
      {},
      el(
        'span',
        { class: 'badge busy' },
        el('span', { class: 'spinner', 'aria-hidden': 'true' }),
        p.label === 'Start agent' ? 'creating, then starting the agent…' : 'creating…',
      ),
    ),
    cell('branch', {}, p.type ? el('code', { class: 'muted' }, `${p.type}/${p.id}`) : null),
    COLUMNS.slice(4).map(([col]) => cell(col, {})),
  );
}

/** The merge queue: entries in order, each one's state and since when; the gate's live log while it runs. */
function queuePanel(p) {
  const entries = p.queue ? p.queue.entries : [];
  const logBox = el('div', { class: 'queue-log' });
  const testing = entries.find((e) => e.state === 'testing' && e.gateTask);
  const panel = el(
    'div',
    { class: 'queue', 'data-queue': p.key },
    el(
      'h3',
      {},
      `Merge queue (${entries.filter((e) => e.state === 'queued' || e.state === 'testing').length} waiting)`,
      p.queue && p.queue.processor ? el('span', { class: 'muted' }, `  worked by pid ${p.queue.processor.pid}`) : null,
    ),
    entries.length === 0
      ? el('p', { class: 'muted' }, 'Empty. Land a task to join it.')
      : el(
          'div',
          { class: 'scroll-x' },
          table(
            { class: 'queue-entries' },
            ['#', 'task', 'state', 'since', 'detail'],
            entries.map((e) =>
              el(
                'tr',
                { 'data-entry': String(e.entry), 'data-state': e.state },
                el('td', {}, e.position === null ? '' : String(e.position)),
                el('td', {}, e.id),
                el(
                  'td',
                  {},
                  el(
                    'span',
                    {
                      class: `badge ${e.state === 'landed' ? 'good' : e.state === 'bounced' ? 'bad' : e.state === 'testing' ? 'running' : ''}`,
                    },
                    e.state,
                  ),
                ),
                el('td', { title: e.since }, `${age(e.since)} ago`),
                el(
                  'td',
                  { class: 'detail' },
                  e.state === 'landed'
                    ? el('code', {}, (e.commit ?? '').slice(0, 12))
                    : e.state === 'bounced'
                      ? `${e.code ?? ''}: ${e.reason ?? ''}${e.log ? ` (log ${e.log})` : ''}`
                      : '',
                ),
              ),
            ),
          ),
        ),
    testing ? el('h4', {}, `Gate log (${testing.id})`) : null,
    testing ? logBox : null,
  );
  if (testing) openLog(p.key, testing.gateTask, { startedSeq: 0, running: true }, logBox);
  return panel;
}

function straysSection(details) {
  if (details === undefined) return [el('h3', {}, 'Strays'), el('p', { class: 'muted' }, skeleton('line'))];
  const strays = details.strays;
  return [
    el('h3', {}, `Strays (${strays.length})`),
    strays.length === 0
      ? el('p', { class: 'muted' }, 'None: the database, git and the disk agree.')
      : el(
          'div',
          { class: 'scroll-x' },
          table(
            { class: 'strays' },
            ['kind', 'path / branch', 'ID', 'why'],
            strays.map((s) =>
              el(
                'tr',
                { 'data-stray': s.kind },
                el('td', {}, s.kind),
                el('td', {}, el('code', {}, s.path ?? s.branch ?? '')),
                el('td', {}, s.id ?? ''),
                el('td', {}, s.reason),
              ),
            ),
          ),
        ),
  ];
}

function projectSection(p, showTitle) {
  const details = state.details.get(p.key);
  const byId = new Map((details ? details.tasks : []).map((d) => [d.id, d]));
  const listed = new Set(p.tasks.map((t) => t.id));
  const pending = [...state.pending.values()].filter((x) => x.project === p.key && !listed.has(x.id));
  // Newest first: a task just made is where the user looks.
  const tasks = [...p.tasks].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return el(
    'section',
    { class: 'project', 'data-project': p.key },
    el(
      'div',
      { class: 'section-head' },
      showTitle ? el('h2', {}, p.name, el('span', { class: 'muted root' }, `  ${p.root}`)) : el('h2', {}, 'Tasks'),
      el(
        'div',
        { class: 'actions' },
        trustButton(p),
        actionButtons('project', p.key),
        el('a', { class: 'button', href: `#/disk/${encodeURIComponent(p.key)}`, 'data-view': 'disk' }, 'Disk and age'),
      ),
    ),
    p.error ? el('p', { class: 'error-text' }, p.error) : null,
    p.trust && !p.trust.trusted
      ? el(
          'p',
          { class: 'warn', 'data-untrusted': p.key },
          `warren.yaml's commands are not trusted${p.trust.trustedAt ? ' since they changed' : ' yet'}: setup, verify and its agents will not run until you trust them (Trust commands…, or \`warren trust\`).`,
        )
      : null,
    tasks.length === 0 && pending.length === 0 && !p.error
      ? el('p', { class: 'muted empty' }, 'No tasks. Create one with New task, or `warren new feat ID`.')
      : table(
          { class: 'fleet' },
          COLUMNS.map(([col, h]) => el('th', { 'data-col': col }, h)),
          [pending.map(pendingRow), tasks.map((t) => taskRow(t, byId.get(t.id)))],
        ),
    queuePanel(p),
    p.error ? null : straysSection(details),
  );
}
