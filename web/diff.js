// A task's diff, file by file: each file a collapsible block with its +/- counts, its lines
// numbered on both sides (as src/review/hunks.ts numbers them), and a comment form on any line.
// Large diffs stay fast: a file's lines are built only when it is opened, and only the first
// LINES_SHOWN of them until "show all" is pressed.
import { el } from './dom.js';

const LINES_SHOWN = 400;
/** Files open at first when the diff is small; the rest wait for a click. */
const OPEN_FILES = 8;
const OPEN_BYTES = 64 * 1024;

const STATUS_LETTER = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', 'type-changed': 'T' };

/** What survives a re-render of the task view: which files are open or shown in full. */
const viewState = { key: null, open: new Set(), full: new Set() };

/** Numbers each line of one file's patch: [{kind, text, old, new}] and hunk headers. */
export function numberLines(patch) {
  const out = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const raw of patch.split('\n')) {
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (m) {
      oldNo = Number(m[1]);
      newNo = Number(m[2]);
      inHunk = true;
      out.push({ kind: '@', text: raw, old: null, new: null });
      continue;
    }
    if (!inHunk) continue;
    const k = raw.charAt(0);
    if (k === ' ') out.push({ kind: k, text: raw.slice(1), old: oldNo++, new: newNo++ });
    else if (k === '-') out.push({ kind: k, text: raw.slice(1), old: oldNo++, new: null });
    else if (k === '+') out.push({ kind: k, text: raw.slice(1), old: null, new: newNo++ });
    else if (k === '\\') out.push({ kind: k, text: raw, old: null, new: null });
    else inHunk = false;
  }
  return out;
}

/** Where a comment on this line points: the workspace's line, or for a removed line the base's. */
function anchorOf(line) {
  return line.kind === '-' ? { side: 'old', line: line.old } : { side: 'new', line: line.new };
}

/**
 * The diff section. `comments` are shown under their lines; `onComment({path, line, side, body})`
 * saves a new one (a promise); `onCompose(active)` says when a form is open, so the page does not
 * redraw under someone typing.
 */
export function diffView(diff, { taskKey, comments, onComment, onCompose }) {
  if (viewState.key !== taskKey) Object.assign(viewState, { key: taskKey, open: new Set(), full: new Set() });
  if (diff.files.length === 0)
    return el('p', { class: 'muted' }, `No changes: ${diff.branch} has nothing ${diff.base} lacks, committed or not.`);
  const small =
    diff.files.length <= OPEN_FILES &&
    diff.files.every((f) => f.patch === null || (f.patch ?? '').length <= OPEN_BYTES);
  const files = diff.files.map((f) =>
    fileBlock(f, {
      open: viewState.open.has(f.path) || (small && !viewState.open.has(`-${f.path}`)),
      comments: comments.filter((c) => c.path === f.path || (c.side === 'old' && c.path === f.from)),
      onComment,
      onCompose,
    }),
  );
  return el(
    'div',
    { class: 'diff-view' },
    el(
      'p',
      { class: 'diff-summary' },
      `${diff.files.length} file${diff.files.length === 1 ? '' : 's'} changed, `,
      el('span', { class: 'add' }, `+${diff.added}`),
      ' ',
      el('span', { class: 'del' }, `−${diff.deleted}`),
      el(
        'span',
        { class: 'muted' },
        ` since ${diff.branch} left ${diff.base}, uncommitted work included. Click a line to comment on it.`,
      ),
    ),
    diff.truncated
      ? el(
          'p',
          { class: 'warn', 'data-truncated': '' },
          'Some files are too large to show here (over 1 MiB of diff in all); `warren diff ID` prints everything.',
        )
      : null,
    files,
  );
}

function fileBlock(f, { open, comments, onComment, onCompose }) {
  const name = f.from ? `${f.from} → ${f.path}` : f.path;
  const counts = f.binary
    ? el('span', { class: 'muted' }, 'binary')
    : [el('span', { class: 'add' }, `+${f.added}`), ' ', el('span', { class: 'del' }, `−${f.deleted}`)];
  const openComments = comments.filter((c) => c.state === 'open').length;
  const body = el('div', { class: 'file-body' });
  const details = el(
    'details',
    { class: 'file', 'data-file': f.path, 'data-status': f.status },
    el(
      'summary',
      {},
      el('span', { class: `status status-${f.status}` }, STATUS_LETTER[f.status] ?? '?'),
      ' ',
      el('code', {}, name),
      ' ',
      counts,
      openComments
        ? el('span', { class: 'badge running' }, ` ${openComments} comment${openComments === 1 ? '' : 's'}`)
        : null,
    ),
    body,
  );
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    body.replaceChildren(fileContent(f, { comments, onComment, onCompose }));
  };
  details.addEventListener('toggle', () => {
    if (details.open) {
      viewState.open.add(f.path);
      viewState.open.delete(`-${f.path}`);
      build();
    } else {
      viewState.open.delete(f.path);
      viewState.open.add(`-${f.path}`);
    }
  });
  if (open) {
    details.open = true;
    build();
  }
  return details;
}

function fileContent(f, { comments, onComment, onCompose }) {
  if (f.binary) return el('p', { class: 'muted' }, 'Binary file: no lines to show.');
  if (f.patch === null)
    return el('p', { class: 'warn' }, "This file's diff is too large to show here; `warren diff ID` prints it.");
  const lines = numberLines(f.patch ?? '');
  if (lines.length === 0)
    return el(
      'p',
      { class: 'muted' },
      f.status === 'type-changed'
        ? 'Its type changed (e.g. a file became a symbolic link).'
        : 'No content change (an empty file, or only its mode changed).',
    );
  const table = el('table', { class: 'diff-lines' });
  const tbody = el('tbody', {});
  table.append(tbody);
  const all = viewState.full.has(f.path);
  const shown = all ? lines : lines.slice(0, LINES_SHOWN);
  for (const line of shown) tbody.append(...lineRows(f, line, comments, { onComment, onCompose }));
  const more =
    shown.length < lines.length
      ? el(
          'button',
          {
            type: 'button',
            class: 'show-more',
            onclick: () => {
              viewState.full.add(f.path);
              for (const line of lines.slice(LINES_SHOWN))
                tbody.append(...lineRows(f, line, comments, { onComment, onCompose }));
              more.remove();
            },
          },
          `Show all ${lines.length} lines (${lines.length - LINES_SHOWN} more)`,
        )
      : null;
  return el('div', {}, table, more);
}

function lineRows(f, line, comments, { onComment, onCompose }) {
  if (line.kind === '@')
    return [
      el(
        'tr',
        { class: 'hunk' },
        el('td', { class: 'no' }),
        el('td', { class: 'no' }),
        el('td', { class: 'text' }, line.text),
      ),
    ];
  if (line.kind === '\\')
    return [
      el(
        'tr',
        { class: 'eof' },
        el('td', { class: 'no' }),
        el('td', { class: 'no' }),
        el('td', { class: 'text muted' }, line.text),
      ),
    ];
  const anchor = anchorOf(line);
  const cls = line.kind === '+' ? 'add' : line.kind === '-' ? 'del' : 'ctx';
  const row = el(
    'tr',
    { class: `line ${cls}`, 'data-side': anchor.side, 'data-line': String(anchor.line), title: 'Comment on this line' },
    el('td', { class: 'no' }, line.old === null ? '' : String(line.old)),
    el('td', { class: 'no' }, line.new === null ? '' : String(line.new)),
    el('td', { class: 'text' }, el('span', { class: 'sign' }, line.kind), line.text),
  );
  row.addEventListener('click', () => openForm(row, f, anchor, { onComment, onCompose }));
  const here = comments.filter((c) => c.side === anchor.side && c.line === anchor.line);
  return [row, ...here.map(commentRow)];
}

/** A comment under its line. */
function commentRow(c) {
  return el(
    'tr',
    { class: `comment-row ${c.state}`, 'data-comment': String(c.id) },
    el('td', { colspan: '3' }, el('div', { class: 'comment' }, el('strong', {}, `#${c.id}`), ` ${c.state}: `, c.body)),
  );
}

function openForm(row, f, anchor, { onComment, onCompose }) {
  if (row.nextElementSibling && row.nextElementSibling.classList.contains('comment-form')) return;
  const text = el('textarea', {
    rows: '3',
    placeholder: `Comment on ${f.path}:${anchor.line}${anchor.side === 'old' ? ' (removed line)' : ''}`,
  });
  const close = () => {
    form.remove();
    onCompose(document.querySelector('tr.comment-form') !== null);
  };
  const save = el('button', { type: 'button', class: 'save' }, 'Comment');
  const form = el(
    'tr',
    { class: 'comment-form' },
    el(
      'td',
      { colspan: '3' },
      text,
      el(
        'div',
        { class: 'actions' },
        save,
        el('button', { type: 'button', class: 'cancel', onclick: close }, 'Cancel'),
      ),
    ),
  );
  save.addEventListener('click', async () => {
    if (text.value.trim() === '') return;
    save.disabled = true;
    try {
      const saved = await onComment({
        path: anchor.side === 'old' && f.from ? f.from : f.path,
        line: anchor.line,
        side: anchor.side,
        body: text.value,
      });
      // Shown at its line now, under the line's earlier comments; the next read of the task agrees.
      let last = form;
      while (last.nextElementSibling && last.nextElementSibling.classList.contains('comment-row'))
        last = last.nextElementSibling;
      if (saved && Number.isInteger(saved.id)) last.after(commentRow(saved));
      close();
    } catch {
      save.disabled = false;
    }
  });
  row.after(form);
  onCompose(true);
  text.focus();
}
