// Rendering of single facts: every function returns nodes built by el(), never HTML.
import { duration, el } from './dom.js';

export function stateBadge(state) {
  return el('span', { class: `badge state-${state.replace(/[^a-z_]/g, '')}` }, state);
}

export function provisionCell(list) {
  if (!list.length) return el('span', { class: 'muted' }, '—');
  return list.map((p) =>
    el(
      'div',
      { class: 'prov' },
      el('code', {}, p.path),
      ` ${p.mode ?? '?'}`,
      p.isolated === null ? '' : p.isolated ? ' · isolated' : ' · shared',
      p.changed === null ? '' : ` · ${p.changed} changed`,
    ),
  );
}

/** The task's port block, and a link for each port something listens on (a dev server), services alike. */
export function portsCell(ports, endpoints = []) {
  if (ports === null || ports === undefined) return el('span', { class: 'muted' }, '—');
  const range =
    typeof ports.first === 'number' && typeof ports.count === 'number'
      ? `${ports.first}–${ports.first + ports.count - 1}`
      : '?';
  return el(
    'span',
    { class: 'ports' },
    el('span', { class: 'muted' }, range),
    endpoints.map((e) =>
      el(
        'a',
        {
          class: `endpoint${e.listening === null ? ' unknown' : ''}`,
          'data-port': String(e.port),
          href: e.url,
          target: '_blank',
          rel: 'noopener noreferrer',
          title: e.listening === null ? 'whether something listens here cannot be told' : `${e.name}: listening`,
        },
        `${e.kind === 'service' ? e.name : ':' + e.port}`,
      ),
    ),
  );
}

export function lastRunCell(run) {
  if (!run) return el('span', { class: 'muted' }, '—');
  const parts = [];
  if (run.running) parts.push(el('span', { class: 'badge running' }, 'running'));
  // A setup or verify command: the whole run's outcome counts, not this command's exit (an optional one may pass after a required one failed).
  else if (run.outcome)
    parts.push(
      el(
        'span',
        {
          class: `badge ${run.outcome.passed ? 'good' : 'bad'}`,
          'data-outcome': run.outcome.passed ? 'passed' : 'failed',
        },
        `${run.outcome.kind} ${run.outcome.passed ? 'passed' : `failed${run.outcome.failed.length ? `: ${run.outcome.failed.join(', ')}` : ''}`}`,
      ),
    );
  else if (run.timedOut) parts.push(el('span', { class: 'badge bad' }, 'timed out'));
  else if (typeof run.exitCode === 'number')
    parts.push(el('span', { class: `badge ${run.exitCode === 0 ? 'good' : 'bad'}` }, `exit ${run.exitCode}`));
  else parts.push(el('span', { class: 'badge' }, run.kind));
  if (typeof run.durationMs === 'number') parts.push(` ${duration(run.durationMs)}`);
  return el('span', { title: run.command ?? run.message }, parts);
}

/** The task's latest verify: green when it passed, red naming the failed commands when a required one failed. */
export function verifyCell(v) {
  if (!v) return el('span', { class: 'muted' }, '—');
  const failed = v.failed.map((f) => `${f.id}${f.required ? '' : ' (optional)'}`);
  return el(
    'span',
    { class: `badge ${v.passed ? 'good' : 'bad'}`, 'data-verify': v.passed ? 'passed' : 'failed', title: v.at },
    v.passed ? `passed${failed.length ? ` (${failed.join(', ')} failed)` : ''}` : `failed: ${failed.join(', ')}`,
  );
}

export function driftCell(t) {
  if (t.behind === null) return el('span', { class: 'muted' }, '?');
  return el(
    'span',
    { class: t.behind > 0 ? 'warn' : '' },
    `${t.behind} behind`,
    el('span', { class: 'muted' }, ` · ${t.ahead} ahead`),
  );
}

export function kv(pairs) {
  return el(
    'dl',
    { class: 'kv' },
    pairs.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]),
  );
}

/** A setup/verify event: what happened, each command as a row of a table, and where the log is. */
export function eventBlock(e) {
  if (!e) return el('span', { class: 'muted' }, 'none recorded');
  const rows = Array.isArray(e.data.results) ? e.data.results.filter((r) => r && typeof r === 'object') : [];
  const result = (r) =>
    r.timedOut ? 'timed out' : r.exitCode === 0 ? 'passed' : r.exitCode === null ? 'did not run to the end' : 'failed';
  return el(
    'div',
    { class: `event level-${e.level}` },
    el('span', { class: 'kind' }, e.kind),
    ' ',
    e.message,
    rows.length
      ? el(
          'table',
          { class: 'results' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ['command', 'result', 'exit', 'required', 'took', 'why'].map((c) => el('th', {}, c)),
            ),
          ),
          el(
            'tbody',
            {},
            rows.map((r) => {
              const bad = result(r) !== 'passed';
              return el(
                'tr',
                { class: bad ? (r.required === false ? 'optional-failed' : 'failed') : 'passed' },
                el('td', {}, String(r.id ?? '')),
                el(
                  'td',
                  {},
                  el('span', { class: `badge ${bad ? (r.required === false ? '' : 'bad') : 'good'}` }, result(r)),
                ),
                el('td', {}, r.exitCode === null || r.exitCode === undefined ? '—' : String(r.exitCode)),
                el('td', {}, r.required === false ? 'no' : 'yes'),
                el('td', {}, typeof r.durationMs === 'number' ? duration(r.durationMs) : ''),
                el('td', { class: 'muted' }, r.reason ? String(r.reason) : ''),
              );
            }),
          ),
        )
      : null,
    typeof e.data.log === 'string' && e.data.log !== ''
      ? el('p', { class: 'muted log-path' }, 'log ', el('code', {}, e.data.log))
      : null,
  );
}
