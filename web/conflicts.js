// The task page's conflicts (the conflict map's pairs of this task): each conflicting hunk, this
// task's side and the other's side by side. Text only: every line goes in through el().
import { el } from './dom.js';

/** The pairs of this task that would not merge, each conflicting hunk with this task's side and the other's side by side. */
export function conflictsSection(t, conflicts) {
  if (!conflicts) return null;
  if (!conflicts.ok) return el('p', { class: 'error-text' }, `Could not compute the conflicts: ${conflicts.error}`);
  if (conflicts.value.length === 0) return null;
  const name = (o) => (o === '@base' ? `the base (${t.base})` : o);
  return [
    el('h3', {}, `Conflicts (${conflicts.value.length})`),
    ...conflicts.value.map((p) => {
      const mine = p.a === t.id;
      const other = mine ? p.b : p.a;
      return el(
        'div',
        { class: 'conflict-pair', 'data-other': other },
        el('h4', {}, `with ${name(other)}`),
        ...p.files.map((f) =>
          el(
            'div',
            { class: 'conflict-file' },
            el('p', {}, el('code', {}, f.path), ' ', el('span', { class: 'muted' }, f.type)),
            f.hunks.length === 0
              ? el('p', { class: 'muted' }, f.message)
              : f.hunks.map((h) =>
                  el(
                    'div',
                    { class: 'conflict-hunk' },
                    el(
                      'div',
                      {},
                      el('div', { class: 'muted' }, `${t.id} (line ${h.line})`),
                      el('pre', {}, (mine ? h.ours : h.theirs).join('\n')),
                    ),
                    el(
                      'div',
                      {},
                      el('div', { class: 'muted' }, name(other)),
                      el('pre', {}, (mine ? h.theirs : h.ours).join('\n')),
                    ),
                  ),
                ),
          ),
        ),
      );
    }),
  ];
}
