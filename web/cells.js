// Rendering of single facts: every function returns nodes built by el(), never HTML.
import { duration, el } from './dom.js';

export function stateBadge(state) {
  return el('span', { class: `badge state-${state.replace(/[^a-z_]/g, '')}` }, state);
}

export function provisionCell(list) {
  if (!list.length) return el('span', { class: 'muted' }, '—');
  return list.map((p) =>
    el('div', { class: 'prov' }, el('code', {}, p.path), ` ${p.mode ?? '?'}`, p.isolated === null ? '' : p.isolated ? ' · isolated' : ' · shared', p.changed === null ? '' : ` · ${p.changed} changed`),
  );
}

export function portsCell(ports) {
  if (ports === null || ports === undefined) return el('span', { class: 'muted' }, '—');
  if (typeof ports !== 'object') return String(ports);
  if (Array.isArray(ports)) return ports.map(String).join(', ');
  if (typeof ports.start === 'number' && typeof ports.end === 'number') return `${ports.start}–${ports.end}`;
  if (typeof ports.first === 'number' && typeof ports.count === 'number') return `${ports.first}–${ports.first + ports.count - 1}`;
  return Object.entries(ports)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(' ');
}

export function lastRunCell(run) {
  if (!run) return el('span', { class: 'muted' }, '—');
  const parts = [];
  if (run.running) parts.push(el('span', { class: 'badge running' }, 'running'));
  else if (run.timedOut) parts.push(el('span', { class: 'badge bad' }, 'timed out'));
  else if (typeof run.exitCode === 'number') parts.push(el('span', { class: `badge ${run.exitCode === 0 ? 'good' : 'bad'}` }, `exit ${run.exitCode}`));
  else parts.push(el('span', { class: 'badge' }, run.kind));
  if (typeof run.durationMs === 'number') parts.push(` ${duration(run.durationMs)}`);
  return el('span', { title: run.command ?? run.message }, parts);
}

export function driftCell(t) {
  if (t.behind === null) return el('span', { class: 'muted' }, '?');
  return el('span', { class: t.behind > 0 ? 'warn' : '' }, `${t.behind} behind`, el('span', { class: 'muted' }, ` · ${t.ahead} ahead`));
}

export function kv(pairs) {
  return el('dl', { class: 'kv' }, pairs.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

/** A setup/verify event: its `results` (if it has a list of them) as a table, the rest as JSON. */
export function eventBlock(e) {
  if (!e) return el('span', { class: 'muted' }, 'none recorded');
  const { results, ...rest } = e.data;
  const rows = Array.isArray(results) ? results.filter((r) => r && typeof r === 'object') : [];
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return el(
    'div',
    { class: `event level-${e.level}` },
    el('span', { class: 'kind' }, e.kind),
    ' ',
    e.message,
    rows.length
      ? el('table', { class: 'results' }, el('thead', {}, el('tr', {}, cols.map((c) => el('th', {}, c)))), el('tbody', {}, rows.map((r) => el('tr', {}, cols.map((c) => el('td', {}, r[c] === null || r[c] === undefined ? '' : typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c])))))))
      : null,
    Object.keys(rest).length ? el('pre', { class: 'data' }, JSON.stringify(rest, null, 2)) : null,
  );
}

export function diffBlock(diff) {
  if (!diff) return el('p', { class: 'muted' }, 'No diff (the branch or the base is gone).');
  if (diff.files.length === 0) return el('p', { class: 'muted' }, `No committed changes on ${diff.branch} since it left ${diff.base}.`);
  const pre = el('pre', { class: 'diff' });
  for (const line of diff.patch.split('\n')) {
    const cls = line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') ? 'file' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
    pre.append(el('span', { class: cls }, `${line}\n`));
  }
  return el(
    'div',
    {},
    el('ul', { class: 'files' }, diff.files.map((f) => el('li', {}, el('code', {}, f.path), ' ', el('span', { class: 'add' }, `+${f.added ?? 'bin'}`), ' ', el('span', { class: 'del' }, `-${f.deleted ?? 'bin'}`)))),
    pre,
    diff.truncated ? el('p', { class: 'warn' }, 'Diff truncated at 512 KiB.') : null,
  );
}
