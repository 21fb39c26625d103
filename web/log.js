// The live log of a task's newest command: a server-sent stream appended as text nodes.
import { ansiParser } from './ansi.js';
import { TOKEN, el } from './dom.js';

// The page keeps the last part of a long log, not all of it: the log file has everything.
const MAX_SHOWN_CHARS = 2_000_000;
// Chunks are appended together, a few times a second: one layout per batch, not one per chunk.
const FLUSH_MS = 50;

let logStream = null; // { key, es, pre, status, empty }

export function openLog(project, id, source, container) {
  const key = `${project}/${id}/${source.startedSeq}`;
  if (logStream && logStream.key === key) {
    container.replaceChildren(logStream.status, logStream.pre, logStream.empty);
    return;
  }
  closeLog();
  // Hidden until the command prints something: an empty box says nothing.
  const pre = el('pre', { class: 'log', id: 'log', hidden: '' });
  const status = el('p', { class: 'muted', id: 'log-status' }, source.running ? 'running…' : 'finished');
  const empty = el('p', { class: 'muted', id: 'log-empty', hidden: '' }, 'It printed nothing.');
  container.replaceChildren(status, pre, empty);
  const es = new EventSource(
    `/api/log?project=${encodeURIComponent(project)}&id=${encodeURIComponent(id)}&token=${encodeURIComponent(TOKEN)}`,
  );
  logStream = { key, es, pre, status, empty };
  let logPath = null;
  const whole = () => (logPath ? `; the whole output is in ${logPath}` : '');

  let pending = [];
  let timer = null;
  let shown = 0;
  let trimmed = null; // the note that stands for the text removed from the top
  const flush = () => {
    clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.hidden = false;
    pre.append(...pending);
    pending = [];
    trim();
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  };
  const trim = () => {
    while (shown > MAX_SHOWN_CHARS) {
      const oldest = trimmed ? trimmed.nextSibling : pre.firstChild;
      if (!oldest || oldest === pre.lastChild) return; // the newest stays
      shown -= oldest.textContent.length;
      oldest.remove();
      if (!trimmed) {
        trimmed = el('span', { class: 'log-skip' }, `[earlier output is no longer shown here${whole()}]\n`);
        pre.prepend(trimmed);
      }
    }
  };
  const show = (node) => {
    shown += node.textContent.length;
    pending.push(node);
    timer ??= setTimeout(flush, FLUSH_MS);
  };

  es.addEventListener('meta', (ev) => (logPath = JSON.parse(ev.data).path));
  es.addEventListener('start', (ev) => {
    const info = JSON.parse(ev.data);
    if (info.skipped > 0) status.textContent = `showing the last part (${info.skipped} bytes left out)`;
  });
  // This page read slower than the command wrote: the server left the middle out and says how much.
  es.addEventListener('skip', (ev) => {
    const { skipped } = JSON.parse(ev.data);
    show(
      el(
        'span',
        { class: 'log-skip' },
        `\n[… ${skipped.toLocaleString('en')} bytes skipped: this page fell behind the command${whole()}]\n`,
      ),
    );
  });
  // Colours are drawn, other escape codes dropped: the text never shows them raw.
  const parse = ansiParser();
  es.addEventListener('chunk', (ev) => parse(JSON.parse(ev.data).text).forEach(show));
  es.addEventListener('end', (ev) => {
    flush();
    const info = JSON.parse(ev.data);
    const f = info.finished;
    const d = f && f.data ? f.data : {};
    status.textContent = info.missing
      ? 'finished; the log file was never written'
      : `finished${typeof d.exitCode === 'number' ? `: exit ${d.exitCode}` : ''}${d.timedOut ? ' (timed out)' : ''}`;
    empty.hidden = !pre.hidden;
    es.close();
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) status.textContent = 'log unavailable';
  };
}

export function closeLog() {
  if (logStream) logStream.es.close();
  logStream = null;
}
