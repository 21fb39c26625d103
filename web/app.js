// warren dashboard client. Plain JS modules, no bundler, no dependencies.
// Every piece of data (branch names, file names, log lines, commit messages, event messages) is
// hostile text: it reaches the page only through text nodes (el() in dom.js), never as HTML.
//
// The page answers at once: a view shows its shape (skeletons) until the server answers, an
// action shows a toast (and a new task its row) before the server has done it, and the fleet
// draws from the database's answer first, filling in what needs git when that comes.

import { ask, callAction } from './actions.js';
import { TOKEN, age, api, clearNotice, el, showError, showLocked } from './dom.js';
import { diskView } from './disk.js';
import { fleetSkeleton, fleetView } from './fleet.js';
import { closeLog, openLog } from './log.js';
import { resultLines } from './results.js';
import { page, state, taskHref, taskKey } from './state.js';
import { selectTab, taskSkeleton, taskView } from './task.js';
import { clearErrorToasts } from './toast.js';
import { closeTranscript, openTranscript } from './transcript.js';

const view = document.getElementById('view');
const live = document.getElementById('live');
const allRepos = document.getElementById('all-repos');

// ---- routing --------------------------------------------------------------------------------

function route() {
  const m = /^#\/task\/([^/]+)\/([^/]+)(?:\/([a-z]+))?$/.exec(location.hash);
  if (m) return { name: 'task', project: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]), tab: m[3] ?? null };
  const d = /^#\/disk\/([^/]+)$/.exec(location.hash);
  return d ? { name: 'disk', project: decodeURIComponent(d[1]) } : { name: 'fleet' };
}

/** Which page a route is, tabs aside: moving between a task's tabs is not another page. */
function pageOf(r) {
  return r.name === 'task' ? `task ${taskKey(r.project, r.id)}` : r.name === 'disk' ? `disk ${r.project}` : 'fleet';
}

let shownPage = null;

/** Draws the current view from what the page has, or its skeleton while it has nothing yet. */
function render() {
  const r = route();
  if (r.name === 'fleet') {
    if (!state.fleet) return view.replaceChildren(fleetSkeleton());
    return view.replaceChildren(fleetView());
  }
  // The task and disk views are drawn when their data comes; until then, their skeleton.
  if (pageOf(r) !== shownPage) {
    if (r.name === 'task') view.replaceChildren(taskSkeleton(r.project, r.id, r.tab));
    else
      view.replaceChildren(
        el('div', { id: 'disk-loading', 'aria-busy': 'true' }, el('p', { class: 'muted' }, 'Counting each workspace…')),
      );
  }
}

// ---- fleet ----------------------------------------------------------------------------------

/** How many fleet reads have started: a pending task answered before a read began is listed by it, or gone. */
let fleetReads = 0;

async function loadFleet() {
  const read = ++fleetReads;
  state.fleet = await api(`/api/fleet${allRepos.checked ? '?all=1' : ''}`);
  // A pending task the fleet lists now: its row takes the pending one's place (and one removed meanwhile goes).
  for (const [key, p] of state.pending) if (p.answeredAt !== null && p.answeredAt < read) state.pending.delete(key);
  if (route().name !== 'fleet') return;
  render();
  shownPage = 'fleet';
  for (const p of state.fleet.projects) if (!p.error) void loadDetails(p.key);
}

const detailsReading = new Map(); // project → { again: boolean }

/** Drift, changes, provisioned paths and strays of a repository's tasks: one read at a time, and one more if asked meanwhile. */
async function loadDetails(project) {
  const reading = detailsReading.get(project);
  if (reading) {
    reading.again = true;
    return;
  }
  const mark = { again: false };
  detailsReading.set(project, mark);
  try {
    state.details.set(project, await api(`/api/fleet/details?project=${encodeURIComponent(project)}`));
    if (route().name === 'fleet') render();
  } catch (err) {
    if (route().name === 'fleet') showError(err);
  } finally {
    detailsReading.delete(project);
    if (mark.again) void loadDetails(project);
  }
}

// ---- disk and age ---------------------------------------------------------------------------

async function loadDisk(project) {
  const data = await api(`/api/disk?project=${encodeURIComponent(project)}`);
  const r = route();
  if (r.name !== 'disk' || r.project !== project) return;
  view.replaceChildren(diskView(data, data.name, taskHref, (ids) => removeLanded(project, ids, data.name)));
  shownPage = pageOf(r);
}

/** Asks first, naming the tasks and where their work is kept, then removes them through `rm --discard`. */
async function removeLanded(project, ids, name) {
  const action = (state.meta ? state.meta.actions : []).find((a) => a.name === 'rm-landed');
  if (!action || ids.length === 0) return;
  const yes = await ask({
    text: `Remove ${ids.length} landed task(s) of ${name}: ${ids.join(', ')}? Each is saved under refs/warren/archive/ID/ first (\`warren restore ID\` brings it back).`,
    ok: 'Remove',
    danger: true,
  });
  if (!yes) return;
  try {
    const { result, toast } = await callAction('rm-landed', project, undefined, {}, `${action.label}: ${name}…`);
    toast.done(`${action.label}: done`, resultLines(result));
  } catch {
    // shown by callAction
  }
}

// ---- task -----------------------------------------------------------------------------------

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
      shownPage = pageOf(route());
      return;
    }
    throw err;
  }
  const r = route();
  if (r.name !== 'task' || r.id !== id || r.project !== project) return;
  const t = data.task;
  const boxes = { log: el('div', { id: 'log-box' }), transcript: el('div', { id: 'transcript-box' }) };
  view.replaceChildren(taskView(data, r.tab, boxes));
  shownPage = pageOf(r);
  if (data.conversation) openTranscript(t.project, t.id, data.conversation, boxes.transcript);
  else {
    closeTranscript();
    boxes.transcript.replaceChildren(
      el('p', { class: 'muted' }, 'No agent has run in this task yet (Run agent starts one).'),
    );
  }
  if (data.log) openLog(t.project, t.id, data.log, boxes.log);
  else {
    closeLog();
    boxes.log.replaceChildren(el('p', { class: 'muted' }, 'No command has run yet.'));
  }
}

// ---- refresh and live updates ---------------------------------------------------------------

let refreshing = false;
let refreshAgain = false;
let refreshTimer = null;

/** One refresh at a time; changes that arrive meanwhile cause exactly one more. */
async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  try {
    const r = route();
    if (r.name === 'task' && state.composing && document.querySelector('tr.comment-form')) return;
    state.composing = false;
    if (r.name === 'task') await loadTask(r.project, r.id);
    else {
      closeLog();
      closeTranscript();
      if (r.name === 'disk') await loadDisk(r.project);
      else await loadFleet();
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

page.render = render;
page.refresh = scheduleRefresh;
page.reads = () => fleetReads;

/** A new address: another page, or another tab of the same task. */
function navigated() {
  const r = route();
  if (r.name === 'task' && pageOf(r) === shownPage && document.getElementById('task')) {
    if (r.tab) selectTab(r.project, r.id, r.tab);
    return;
  }
  // What went wrong on the last page does not belong on this one.
  clearNotice();
  clearErrorToasts();
  state.openMenu = null;
  render();
  scheduleRefresh(0);
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
  // The page's shape at once; the data as it comes.
  render();
  state.meta = await api('/api/meta');
  document.getElementById('scope').textContent = state.meta.root;
  allRepos.addEventListener('change', () => scheduleRefresh(0));
  window.addEventListener('hashchange', navigated);
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
