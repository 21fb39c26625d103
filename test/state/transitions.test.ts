import { describe, expect, it, onTestFinished } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { openStore } from '../../src/composition.js';
import type { Store } from '../../src/state/store.js';
import { canMove } from '../../src/state/transitions.js';
import type { TASK_STATES } from '../../src/state/types.js';
import { tmpDir } from '../helpers/repo.js';

/** The task state machine: one table, enforced by the store's one way of moving a task. */

function storeWithTask(state: (typeof TASK_STATES)[number]): Store {
  const store = openStore(tmpDir());
  onTestFinished(() => store.close());
  store.upsertProject('p', '/r', '/r/.git');
  store.insertTask({
    project: 'p',
    id: 't',
    type: 'feat',
    branch: 'feat/t',
    path: '/w/t',
    base: 'main',
    baseCommit: 'c',
    state,
    data: {},
  });
  return store;
}

describe('task state machine', () => {
  // That every state has an entry and every target is a state, `satisfies` checks when it compiles.
  it.each([
    ['creating', 'ready', true],
    ['creating', 'landed', false],
    ['ready', 'landed', true],
    ['landed', 'ready', false],
    ['removing', 'ready', true],
    ['remove_failed', 'ready', false],
  ] as const)('%s → %s allowed: %s', (from, to, allowed) => {
    expect(canMove(from, to)).toBe(allowed);
  });

  it('moves a task only from the state it is in (compare-and-set), and refuses otherwise with TASK_STATE', () => {
    const store = storeWithTask('ready');
    store.transition('p', 't', 'ready', 'landed');
    expect(store.getTask('p', 't')?.state).toBe('landed');
    const err = (() => {
      try {
        store.transition('p', 't', 'ready', 'removing');
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(isWarrenError(err, 'TASK_STATE')).toBe(true);
    expect(store.getTask('p', 't')?.state).toBe('landed');
  });

  it('a move the machine does not make is a bug, refused before the row is touched', () => {
    const store = storeWithTask('remove_failed');
    expect(() => store.transition('p', 't', 'remove_failed', 'ready')).toThrow(/not a move a task makes/);
    expect(store.getTask('p', 't')?.state).toBe('remove_failed');
  });
});
