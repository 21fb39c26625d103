import type { TaskState } from './types.js';

/**
 * The task state machine: every move a task may make. `removing` may go back to the state it
 * came from when a guard after the first step refuses; `setup` may fail a ready task and pass a
 * failed one. Deleting the row (after `rm`, or a rolled-back `new`) is not a state.
 */
export const TRANSITIONS = {
  creating: ['ready', 'setup_failed'],
  ready: ['landed', 'setup_failed', 'removing'],
  setup_failed: ['ready', 'landed', 'removing'],
  landed: ['removing'],
  removing: ['remove_failed', 'ready', 'setup_failed', 'landed'],
  remove_failed: [],
} as const satisfies Record<TaskState, readonly TaskState[]>;

export function canMove(from: TaskState, to: TaskState): boolean {
  return (TRANSITIONS[from] as readonly TaskState[]).includes(to);
}
