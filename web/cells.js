// Rendering of single facts: every function returns nodes built by el(), never HTML.
import { duration, el, table } from './dom.js';

export function stateBadge(state) {
  return el('span', { class: `badge state-${state.replace(/[^a-z_]/g, '')}` }, state);
}

/** A grey bar where a value is still being read. */
export function skeleton(kind = 'short') {
  return el('span', { class: `skeleton ${kind}`, 'aria-hidden': 'true' });
}

/**
 * The state as the page shows it: what runs in the task now (`agent running`, `verifying`), else
 * its recorded state; beside it, its place in the merge queue, and what the page itself is
 * waiting for (`Verify…`).
 */
export function stateCell(t, busy) {
  const running = t.shownState !== t.state;
  return [
    running
      ? el(
          'span',
          { class: 'badge state-running', 'data-state': t.state },
          el('span', { class: 'spinner', 'aria-hidden': 'true' }),
          t.shownState,
        )
      : stateBadge(t.state),
    queueBadge(t.queue),
    conflictBadge(t.conflicts),
    busy
      ? el('span', { class: 'badge busy' }, el('span', { class: 'spinner', 'aria-hidden': 'true' }), `${busy}…`)
      : null,
  ];
}

/** Whom the task's work does not merge with (the conflict map as last computed), the files in its title. */
export function conflictBadge(conflicts) {
  if (!conflicts || conflicts.length === 0) return null;
  const name = (o) => (o === '@base' ? 'its base' : o);
  return el(
    'span',
    { class: 'badge bad conflict', title: conflicts.map((c) => `${name(c.other)}: ${c.paths.join(', ')}`).join('\n') },
    `conflicts: ${conflicts.map((c) => name(c.other)).join(', ')}`,
  );
}

/** The task's place in the merge queue, or why it bounced from it. */
export function queueBadge(q) {
  if (!q || q.state === 'landed' || q.state === 'removed') return null;
  if (q.state === 'bounced')
    return el('span', { class: 'badge bad', title: q.reason ?? '' }, `bounced: ${q.code ?? ''}`);
  return el('span', { class: 'badge running' }, q.state === 'testing' ? 'queue: testing' : `queue #${q.position}`);
}

/** A landed task: the commit its work became on the base, instead of its drift. */
export function landedCell(landed) {
  return el(
    'span',
    { class: 'landed', title: `landed on ${landed.base} ${landed.at}` },
    'landed as ',
    el('code', {}, landed.commit.slice(0, 12)),
  );
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

/**
 * The task's port block, and what listens on it by name: its services (`web :20048`, a link when a
 * browser can open it), then the other ports something listens on (`:20049`).
 */
export function portsCell(ports, endpoints = []) {
  if ((ports === null || ports === undefined) && endpoints.length === 0) return el('span', { class: 'muted' }, '—');
  const range =
    ports && typeof ports.first === 'number' && typeof ports.count === 'number'
      ? `${ports.first}–${ports.first + ports.count - 1}`
      : null;
  return el(
    'span',
    { class: 'ports' },
    range ? el('span', { class: 'muted range' }, range) : null,
    endpoints.map((e) => {
      const named = e.kind === 'service';
      const label = named ? [el('span', { class: 'name' }, e.name), ` :${e.port}`] : `:${e.port}`;
      const title =
        e.listening === null
          ? `${e.name}: whether something listens here cannot be told`
          : `${e.name}: ${e.listening ? 'listening' : 'not listening'}`;
      const attrs = {
        class: `endpoint${named ? ' service' : ''}${e.listening === null ? ' unknown' : e.listening ? '' : ' down'}`,
        'data-port': String(e.port),
        ...(named ? { 'data-service': e.name } : {}),
        title,
      };
      return e.url
        ? el('a', { ...attrs, href: e.url, target: '_blank', rel: 'noopener noreferrer' }, label)
        : el('span', attrs, label);
    }),
  );
}

/** The newest run; `quiet` (a landed task) shows it as history, without a red or green badge. */
export function lastRunCell(run, quiet = false) {
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
  if (quiet) for (const b of parts) if (b instanceof Node && b.nodeType === Node.ELEMENT_NODE) b.className = 'quiet';
  return el('span', { title: run.command ?? run.message, class: quiet ? 'muted' : '' }, parts);
}

/**
 * The task's latest verify: green when it passed, red naming the failed commands when a required
 * one failed. `quiet` (a landed task): history, without a red or green badge — the work landed.
 */
export function verifyCell(v, quiet = false) {
  if (!v) return el('span', { class: 'muted' }, '—');
  const failed = v.failed.map((f) => `${f.id}${f.required ? '' : ' (optional)'}`);
  return el(
    'span',
    {
      class: quiet ? 'quiet muted' : `badge ${v.passed ? 'good' : 'bad'}`,
      'data-verify': v.passed ? 'passed' : 'failed',
      title: v.at,
    },
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
    el('span', { class: 'msg' }, e.message),
    rows.length
      ? table(
          { class: 'results' },
          ['command', 'result', 'exit', 'required', 'took', 'why'],
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
        )
      : null,
    typeof e.data.log === 'string' && e.data.log !== ''
      ? el('p', { class: 'muted log-path' }, 'log ', el('code', {}, e.data.log))
      : null,
  );
}
