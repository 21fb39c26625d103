// The live log of a task's newest command: a server-sent stream appended as text nodes.
import { TOKEN, el } from './dom.js';

let logStream = null; // { key, es, pre, status }

export function openLog(project, id, source, container) {
  const key = `${project}/${id}/${source.startedSeq}`;
  if (logStream && logStream.key === key) {
    container.replaceChildren(logStream.status, logStream.pre);
    return;
  }
  closeLog();
  const pre = el('pre', { class: 'log', id: 'log' });
  const status = el('p', { class: 'muted', id: 'log-status' }, source.running ? 'running…' : 'finished');
  container.replaceChildren(status, pre);
  const es = new EventSource(`/api/log?project=${encodeURIComponent(project)}&id=${encodeURIComponent(id)}&token=${encodeURIComponent(TOKEN)}`);
  logStream = { key, es, pre, status };
  es.addEventListener('start', (ev) => {
    const info = JSON.parse(ev.data);
    if (info.skipped > 0) status.textContent = `showing the last part (${info.skipped} bytes left out)`;
  });
  es.addEventListener('chunk', (ev) => {
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.append(document.createTextNode(JSON.parse(ev.data).text));
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  });
  es.addEventListener('end', (ev) => {
    const info = JSON.parse(ev.data);
    const f = info.finished;
    const d = f && f.data ? f.data : {};
    status.textContent = info.missing ? 'finished; the log file was never written' : `finished${typeof d.exitCode === 'number' ? `: exit ${d.exitCode}` : ''}${d.timedOut ? ' (timed out)' : ''}`;
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
