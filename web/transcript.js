// The conversation of the task's newest agent run, from its CLI's transcript: prompts, the
// agent's text, its tool calls and their results, streamed as the agent writes them.
import { TOKEN, el, terminalText } from './dom.js';

// The page keeps the newest items of a long conversation; the transcript file has them all.
const MAX_SHOWN_ITEMS = 1000;

let stream = null; // { key, es, box }

function itemNode(item) {
  if (item.kind === 'prompt' || item.kind === 'text') {
    return el(
      'div',
      { class: `turn ${item.kind}`, 'data-kind': item.kind },
      el('span', { class: 'who' }, item.kind === 'prompt' ? 'prompt' : 'agent'),
      el('div', { class: 'said' }, item.text),
    );
  }
  if (item.kind === 'tool') {
    return el(
      'div',
      { class: 'turn tool', 'data-kind': 'tool', 'data-call': item.callId },
      el('span', { class: 'who' }, item.name),
      el('code', { class: 'input' }, item.input),
    );
  }
  const long = item.output.split('\n').length > 6 || item.output.length > 600;
  const body = el('pre', { class: 'output' }, item.output === '' ? '(no output)' : item.output);
  return el(
    'div',
    { class: `turn result${item.error ? ' error' : ''}`, 'data-kind': 'result', 'data-call': item.callId },
    long ? el('details', {}, el('summary', {}, item.error ? 'error' : 'result'), body) : body,
  );
}

/** Follows the conversation of `conversation` (from /api/task) in `container`; a refresh of the same run keeps its stream. */
export function openTranscript(project, id, conversation, container) {
  const key = `${project}/${id}/${conversation.runId}`;
  if (stream && stream.key === key) {
    container.replaceChildren(stream.status, stream.box);
    return;
  }
  closeTranscript();
  const box = el('div', { class: 'transcript', id: 'transcript' });
  const status = el(
    'p',
    { class: 'muted', id: 'transcript-status' },
    `${conversation.agent}${conversation.session ? ` · session ${conversation.session}` : ''} · ${conversation.running ? 'running…' : 'finished'}`,
  );
  container.replaceChildren(status, box);
  const es = new EventSource(
    `/api/transcript?project=${encodeURIComponent(project)}&id=${encodeURIComponent(id)}&token=${encodeURIComponent(TOKEN)}`,
  );
  stream = { key, es, box, status };
  const nodes = new Map();
  const lastOfCall = new Map(); // callId → the node its next result goes after

  es.addEventListener('meta', (ev) => {
    const m = JSON.parse(ev.data);
    status.textContent = terminalText(
      `${m.agent}${m.session ? ` · session ${m.session}` : ''} · ${m.running ? 'running…' : 'finished'}${m.file ? '' : ' · waiting for its transcript'}`,
    );
  });
  es.addEventListener('items', (ev) => {
    const { items, skipped } = JSON.parse(ev.data);
    const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    if (skipped > 0) box.append(el('p', { class: 'muted' }, `[${skipped} earlier item(s) are in the transcript file]`));
    for (const item of items) {
      const node = itemNode(item);
      const old = nodes.get(item.key);
      const after = item.kind === 'result' && item.callId ? lastOfCall.get(item.callId) : undefined;
      if (old) old.replaceWith(node);
      // A result goes under its call (an agent may call two tools before either answers).
      else if (after && after.isConnected) after.after(node);
      else box.append(node);
      nodes.set(item.key, node);
      if (!item.callId) continue;
      if (item.kind === 'tool') lastOfCall.set(item.callId, node);
      else if (item.kind === 'result' && (!old || lastOfCall.get(item.callId) === old))
        lastOfCall.set(item.callId, node);
    }
    while (nodes.size > MAX_SHOWN_ITEMS) {
      const [oldest, node] = nodes.entries().next().value;
      node.remove();
      nodes.delete(oldest);
    }
    if (atBottom) box.scrollTop = box.scrollHeight;
  });
  es.addEventListener('end', (ev) => {
    const info = JSON.parse(ev.data);
    status.textContent = terminalText(
      `${conversation.agent}${conversation.session ? ` · session ${conversation.session}` : ''} · ${
        info.replaced
          ? 'a newer run took its place'
          : info.missing
            ? 'finished; its CLI wrote no transcript'
            : 'finished'
      }`,
    );
    if (nodes.size === 0 && !info.missing) box.append(el('p', { class: 'muted' }, 'The transcript holds no turns.'));
    es.close();
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) status.textContent = 'transcript unavailable';
  };
}

export function closeTranscript() {
  if (stream) stream.es.close();
  stream = null;
}
