// warren dashboard client. Plain JS modules, no bundler, no dependencies.
// Every piece of data (branch names, file names, log lines, commit messages, event messages) is
// hostile text: it reaches the page only through text nodes (el() in dom.js), never as HTML.

import { TOKEN, age, api, el, showError, showInfo, showLocked } from './dom.js';
import { driftCell, eventBlock, kv, lastRunCell, portsCell, provisionCell, stateBadge, verifyCell } from './cells.js';
import { diffView } from './diff.js';
import { diskView } from './disk.js';
import { closeLog, openLog } from './log.js';
import { resultLines } from './results.js';
import { closeTranscript, openTranscript } from './transcript.js';

const view = document.getElementById('view');
const live = document.getElementById('live');
const allRepos = document.getElementById('all-repos');

let meta = null;
let fleet = null;
let refreshTimer = null;
/** A comment is being written: the task view is not redrawn under it (it is once the form closes). */
let composing = false;

// ---- actions --------------------------------------------------------------------------------

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

/** Asks before a destructive action, and for the fields of an action that needs input. */
function askAction(action, target) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = action.destructive
    ? `${action.label}: ${target}?`
    : `${action.label} in ${target}`;
  const fields = action.options.map(optionField);
  document.getElementById('confirm-options').replaceChildren(...fields.map((f) => f.label));
  const ok = document.getElementById('confirm-ok');
  ok.textContent = action.destructive ? 'Confirm' : action.label;
  ok.className = action.destructive ? 'danger' : '';
  return new Promise((resolve) => {
    const cancel = document.getElementById('confirm-cancel');
    const finish = (value) => {
      ok.onclick = cancel.onclick = dialog.oncancel = null;
      dialog.close();
      resolve(value);
    };
    ok.onclick = () => finish(Object.fromEntries(action.options.map((o, i) => [o.name, fields[i].value()])));
    cancel.onclick = () => finish(null);
    dialog.oncancel = () => finish(null);
    dialog.showModal();
    dialog.querySelector('input[type="text"], select, textarea')?.focus();
  });
}

/** What people call a repository (its folder's name), not warren's internal key. */
function repoName(project) {
  const p = fleet && fleet.projects.find((x) => x.key === project);
  return p ? p.name : meta && meta.project === project ? meta.name : project;
}

async function runAction(action, project, id) {
  let options = {};
  // Destructive actions ask first; an action with text or choice fields asks for them.
  if (action.destructive || action.options.some((o) => o.type !== 'boolean')) {
    options = await askAction(action, id ? `task ${id}` : `repository ${repoName(project)}`);
    if (options === null) return;
  }
  try {
    const body = await api(`/api/actions/${encodeURIComponent(action.name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project, ...(id ? { id } : {}), options }),
    });
    showInfo(`${action.label}: done`, resultLines(body.result));
    if (id && action.removesTask) location.hash = '#/';
    // An agent started in a new task: follow it there.
    if (!id && body.result && body.result.run) location.hash = taskHref(project, body.result.id);
    scheduleRefresh(0);
  } catch (err) {
    showError(err);
    scheduleRefresh(0);
  }
}

/**
 * The task's services: each with its state, where it is reached (a dev server's port as a
 * link, built here from the number: never an address taken from the data) and its log.
 */
function servicesSection(services) {
  if (services.length === 0) return [];
  return [
    el('h3', {}, 'Services'),
    el(
      'table',
      { class: 'services' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['name', 'kind', 'state', 'where', 'log'].map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
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
                {
                  class: `badge ${s.state === 'running' ? 'good' : s.state === 'crashed' ? 'bad' : ''}`,
                },
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
    ),
  ];
}

/** One call of an action without a dialog (a comment, Send to agent): its result, or null after showing the refusal. */
async function callAction(name, project, id, options) {
  try {
    const body = await api(`/api/actions/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project, id, options }),
    });
    return body.result;
  } catch (err) {
    showError(err);
    throw err;
  } finally {
    scheduleRefresh(0);
  }
}

/** The buttons of a task (in its state) or a project; actions the page calls from elsewhere (inline) are not among them. */
function actionButtons(scope, project, id, state) {
  return (meta ? meta.actions : [])
    .filter((a) => a.scope === scope && !a.inline && (!a.states || state === undefined || a.states.includes(state)))
    .map((a) =>
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

// ---- fleet view -----------------------------------------------------------------------------

function taskHref(project, id) {
  return `#/task/${encodeURIComponent(project)}/${encodeURIComponent(id)}`;
}

function taskRow(t) {
  const href = taskHref(t.project, t.id);
  return el(
    'tr',
    { 'data-task': t.id, onclick: () => (location.hash = href) },
    el('td', {}, el('a', { href, class: 'task-link' }, t.id)),
    el('td', {}, t.type),
    el('td', {}, stateBadge(t.state), queueBadge(t.queue)),
    el('td', {}, el('code', {}, t.branch)),
    el('td', { 'data-age': t.createdAt }, age(t.createdAt)),
    el('td', {}, t.landed ? landedCell(t.landed) : driftCell(t)),
    el('td', {}, t.changes === null ? el('span', { class: 'muted' }, '?') : String(t.changes)),
    el('td', {}, provisionCell(t.provision)),
    el('td', { onclick: (ev) => ev.stopPropagation() }, portsCell(t.ports, t.endpoints)),
    el('td', {}, verifyCell(t.verify)),
    el('td', {}, lastRunCell(t.lastRun)),
    el('td', { class: 'actions' }, actionButtons('task', t.project, t.id, t.state)),
  );
}

/** A landed task: the commit its work became on the base, instead of its drift. */
function landedCell(landed) {
  return el(
    'span',
    { class: 'landed', title: `landed on ${landed.base} ${landed.at}` },
    'landed as ',
    el('code', {}, landed.commit.slice(0, 12)),
  );
}

/** The Trust button, shown while warren.yaml's commands are not trusted: it shows the set first, as `warren trust` does. */
function trustButton(p) {
  if (!p.trust || p.trust.trusted) return null;
  return el(
    'button',
    {
      type: 'button',
      class: 'danger',
      'data-action': 'trust',
      onclick: async (ev) => {
        ev.stopPropagation();
        const ok = await askTrust(p);
        if (!ok) return;
        try {
          const result = await callAction('trust', p.key, undefined, { hash: p.trust.hash });
          showInfo('Trust: done', resultLines(result));
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
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent =
    `${repoName(p.key)}'s warren.yaml asks warren to run these commands (sha256 ${t.hash.slice(0, 12)})${marked ? '; * new or changed since you trusted an earlier set' : ''}. warren runs none of them until you trust this set:`;
  document.getElementById('confirm-options').replaceChildren(
    ...[
      el(
        'pre',
        { class: 'data trust-set' },
        t.commands.map((c) => `${marked && t.changed.includes(c) ? '* ' : marked ? '  ' : ''}${c}\n`),
      ),
      t.settingsChanged.length
        ? el('p', { class: 'warn' }, `security settings changed: ${t.settingsChanged.join('; ')}`)
        : null,
    ].filter(Boolean),
  );
  const ok = document.getElementById('confirm-ok');
  ok.textContent = 'Trust these commands';
  ok.className = 'danger';
  return new Promise((resolve) => {
    const cancel = document.getElementById('confirm-cancel');
    const finish = (value) => {
      ok.onclick = cancel.onclick = dialog.oncancel = null;
      dialog.close();
      resolve(value);
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dialog.oncancel = () => finish(false);
    dialog.showModal();
  });
}

/** The task's place in the merge queue, or why it bounced from it. */
function queueBadge(q) {
  if (!q || q.state === 'landed' || q.state === 'removed') return null;
  if (q.state === 'bounced')
    return el('span', { class: 'badge bad', title: q.reason ?? '' }, `bounced: ${q.code ?? ''}`);
  return el('span', { class: 'badge running' }, q.state === 'testing' ? 'queue: testing' : `queue #${q.position}`);
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
          'table',
          { class: 'queue-entries' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ['#', 'task', 'state', 'since', 'detail'].map((h) => el('th', {}, h)),
            ),
          ),
          el(
            'tbody',
            {},
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

function projectSection(p, showTitle) {
  const head = [
    'ID',
    'type',
    'state',
    'branch',
    'age',
    'base drift',
    'changes',
    'provisioned',
    'ports',
    'verify',
    'last run',
    '',
  ];
  return el(
    'section',
    { class: 'project', 'data-project': p.key },
    el(
      'div',
      { class: 'section-head' },
      showTitle ? el('h2', {}, p.name, el('span', { class: 'muted' }, `  ${p.root}`)) : el('h2', {}, 'Tasks'),
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
    p.tasks.length === 0 && !p.error
      ? el('p', { class: 'muted empty' }, 'No tasks. Create one with New task, or `warren new feat ID`.')
      : el(
          'table',
          { class: 'fleet' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              head.map((h) => el('th', {}, h)),
            ),
          ),
          el('tbody', {}, p.tasks.map(taskRow)),
        ),
    queuePanel(p),
    el('h3', {}, `Strays (${p.strays.length})`),
    p.strays.length === 0
      ? el('p', { class: 'muted' }, 'None: the database, git and the disk agree.')
      : el(
          'table',
          { class: 'strays' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ['kind', 'path / branch', 'ID', 'why'].map((h) => el('th', {}, h)),
            ),
          ),
          el(
            'tbody',
            {},
            p.strays.map((s) =>
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
  );
}

function renderFleet() {
  if (!fleet) return;
  const many = allRepos.checked;
  view.replaceChildren(
    el(
      'div',
      { id: 'fleet' },
      fleet.projects.length === 0
        ? el('p', { class: 'muted' }, 'No repositories yet.')
        : fleet.projects.map((p) => projectSection(p, many)),
    ),
  );
}

async function loadFleet() {
  fleet = await api(`/api/fleet${allRepos.checked ? '?all=1' : ''}`);
  if (route().name === 'fleet') renderFleet();
}

// ---- disk and age view ----------------------------------------------------------------------

async function loadDisk(project) {
  const data = await api(`/api/disk?project=${encodeURIComponent(project)}`);
  const r = route();
  if (r.name !== 'disk' || r.project !== project) return;
  view.replaceChildren(diskView(data, data.name, taskHref, (ids) => removeLanded(project, ids, data.name)));
}

/** Asks first, naming the tasks and where their work is kept, then removes them through `rm --discard`. */
async function removeLanded(project, ids, name) {
  const action = (meta ? meta.actions : []).find((a) => a.name === 'rm-landed');
  if (!action || ids.length === 0) return;
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent =
    `Remove ${ids.length} landed task(s) of ${name}: ${ids.join(', ')}? Each is saved under refs/warren/archive/ID/ first (\`warren restore ID\` brings it back).`;
  document.getElementById('confirm-options').replaceChildren();
  const ok = document.getElementById('confirm-ok');
  ok.textContent = 'Remove';
  ok.className = 'danger';
  const yes = await new Promise((resolve) => {
    const cancel = document.getElementById('confirm-cancel');
    const finish = (value) => {
      ok.onclick = cancel.onclick = dialog.oncancel = null;
      dialog.close();
      resolve(value);
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dialog.oncancel = () => finish(false);
    dialog.showModal();
  });
  if (!yes) return;
  try {
    const result = await callAction('rm-landed', project, undefined, {});
    showInfo(`${action.label}: done`, resultLines(result));
  } catch {
    // shown by callAction
  }
}

// ---- task view ------------------------------------------------------------------------------

async function loadTask(project, id) {
  let data;
  try {
    data = await api(`/api/task?project=${encodeURIComponent(project)}&id=${encodeURIComponent(id)}`);
  } catch (err) {
    if (err.info && err.info.code === 'TASK_NOT_FOUND') {
      closeLog();
      closeTranscript();
      view.replaceChildren(
        el('p', { class: 'muted' }, `Task ${id} is gone. `, el('a', { href: '#/' }, 'Back to the fleet')),
      );
      return;
    }
    throw err;
  }
  const r = route();
  if (r.name !== 'task' || r.id !== id || r.project !== project) return;
  const t = data.task;
  const logBox = el('div', { id: 'log-box' });
  const transcriptBox = el('div', { id: 'transcript-box' });
  view.replaceChildren(
    el(
      'div',
      { id: 'task', 'data-task': t.id },
      el('p', {}, el('a', { href: '#/' }, '← fleet')),
      el(
        'div',
        { class: 'section-head' },
        el('h2', {}, t.id, ' ', stateBadge(t.state)),
        el('div', { class: 'actions' }, actionButtons('task', t.project, t.id, t.state)),
      ),
      kv([
        ['branch', el('code', {}, t.branch)],
        t.landed
          ? ['landed', landedCell(t.landed)]
          : ['base', `${t.base} (${t.behind ?? '?'} behind, ${t.ahead ?? '?'} ahead)`],
        ['path', el('code', {}, t.path)],
        ['open in', editorLinks(t)],
        ['age', age(t.createdAt)],
        ['changes', t.changes === null ? '?' : String(t.changes)],
        ['provisioned', provisionCell(t.provision)],
        ['ports', portsCell(t.ports, t.endpoints)],
        ['verify', verifyCell(t.verify)],
        ['last run', lastRunCell(t.lastRun)],
      ]),
      el('h3', {}, 'Conversation'),
      transcriptBox,
      ...servicesSection(data.services ?? []),
      el('h3', {}, 'Live log'),
      logBox,
      el('h3', {}, 'Setup'),
      eventBlock(data.setup),
      el('h3', {}, 'Verify'),
      eventBlock(data.verify),
      // A landed task's work is on the base as one commit: its own commits are history.
      t.landed ? null : commitsSection(t, data.commits),
      el('h3', {}, 'Changes against the base'),
      data.diff.ok
        ? diffView(data.diff.value, {
            taskKey: `${t.project}/${t.id}/${t.createdAt}`,
            comments: data.comments,
            onComment: (c) =>
              callAction('comment', t.project, t.id, {
                path: c.path,
                line: String(c.line),
                side: c.side,
                body: c.body,
              }),
            onCompose: (active) => {
              composing = active;
              if (!active) scheduleRefresh(0);
            },
          })
        : el('p', { class: 'error-text' }, `Could not read the diff: ${data.diff.error}`),
      el('h3', {}, `Review comments (${data.comments.filter((c) => c.state === 'open').length} open)`),
      reviewPanel(t, data),
      el('h3', {}, 'Audit'),
      data.audit.length === 0
        ? el('p', { class: 'muted' }, 'No audit sections are registered in this build.')
        : data.audit.map((s) =>
            el(
              'div',
              { class: 'audit' },
              el('h4', {}, s.name),
              s.error ? el('p', { class: 'error-text' }, s.error) : el('pre', {}, s.lines.join('\n')),
            ),
          ),
      el('h3', {}, 'Events'),
      el(
        'ol',
        { class: 'timeline' },
        [...data.events]
          .reverse()
          .map((e) =>
            el(
              'li',
              { class: `level-${e.level}` },
              el('time', { datetime: e.at, title: e.at }, `${age(e.at)} ago`),
              el('span', { class: 'kind' }, e.kind),
              el('span', { class: 'msg' }, e.message),
            ),
          ),
      ),
    ),
  );
  if (data.conversation) openTranscript(t.project, t.id, data.conversation, transcriptBox);
  else {
    closeTranscript();
    transcriptBox.replaceChildren(
      el('p', { class: 'muted' }, 'No agent has run in this task yet (Run agent starts one).'),
    );
  }
  if (data.log) openLog(t.project, t.id, data.log, logBox);
  else {
    closeLog();
    logBox.replaceChildren(el('p', { class: 'muted' }, 'No command has run yet.'));
  }
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
 * Links that open the workspace in an editor installed on this machine (its URL scheme opens
 * the folder), and a button for the editor named in $WARREN_HOME/config.yaml (`editor:`).
 */
function editorLinks(t) {
  const editors = [
    ['VS Code', 'vscode'],
    ['Cursor', 'cursor'],
  ];
  const encoded = t.path.split('/').map(encodeURIComponent).join('/');
  const configured = meta && Array.isArray(meta.editor) ? meta.editor : null;
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
                  const r = await callAction('open', t.project, t.id, {});
                  showInfo(`Opened ${r.path} with ${r.editor.join(' ')}`);
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
      const r = await callAction('review', t.project, t.id, { agent: agent.value });
      showInfo(
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

// ---- routing and live updates ---------------------------------------------------------------

function route() {
  const m = /^#\/task\/([^/]+)\/([^/]+)$/.exec(location.hash);
  if (m) return { name: 'task', project: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]) };
  const d = /^#\/disk\/([^/]+)$/.exec(location.hash);
  return d ? { name: 'disk', project: decodeURIComponent(d[1]) } : { name: 'fleet' };
}

let refreshing = false;
let refreshAgain = false;

/** One refresh at a time; changes that arrive meanwhile cause exactly one more. */
async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  try {
    const r = route();
    if (r.name === 'task' && composing && document.querySelector('tr.comment-form')) return;
    composing = false;
    if (r.name === 'task') await loadTask(r.project, r.id);
    else if (r.name === 'disk') {
      closeLog();
      closeTranscript();
      await loadDisk(r.project);
    } else {
      closeLog();
      closeTranscript();
      await loadFleet();
    }
  } catch (err) {
    showError(err);
  } finally {
    refreshing = false;
    if (refreshAgain) {
      refreshAgain = false;
      scheduleRefresh(0);
    }
  }
}

function scheduleRefresh(ms = 150) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, ms);
}

function connect() {
  const es = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`);
  es.addEventListener('hello', () => {
    live.textContent = 'live';
    live.className = 'live on';
  });
  es.addEventListener('change', (ev) => {
    const change = JSON.parse(ev.data);
    const r = route();
    if (
      r.name === 'fleet' ||
      (r.name === 'disk' && change.project === r.project) ||
      (change.project === r.project && change.taskId === r.id)
    )
      scheduleRefresh();
  });
  // The server dropped events while this page was not reading: re-read everything.
  es.addEventListener('missed', () => scheduleRefresh(0));
  es.onerror = () => {
    // CLOSED: the server refused (its token was replaced since this page took it) — only a reload helps.
    const closed = es.readyState === EventSource.CLOSED;
    live.textContent = closed ? 'disconnected: reload the page' : 'reconnecting…';
    live.className = 'live off';
  };
}

async function start() {
  if (!TOKEN) return showLocked();
  meta = await api('/api/meta');
  document.getElementById('scope').textContent = meta.root;
  allRepos.addEventListener('change', () => scheduleRefresh(0));
  window.addEventListener('hashchange', () => scheduleRefresh(0));
  setInterval(
    () => document.querySelectorAll('[data-age]').forEach((n) => (n.textContent = age(n.getAttribute('data-age')))),
    5000,
  );
  connect();
  // Edits inside a workspace record no event; re-read now and then so change counts stay true.
  setInterval(() => {
    // Not the disk view: it walks every workspace, and is read again when an event says so.
    if (document.visibilityState === 'visible' && route().name !== 'disk') scheduleRefresh(0);
  }, 15000);
  await refresh();
}

start().catch(showError);
