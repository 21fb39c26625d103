import type { TaskFacts } from './facts.js';

export type { EventKind, EventLevel, EventPayloads, NewEvent, WarrenEvent } from './events.js';
export type { TaskFacts } from './facts.js';

/** The task types when warren.yaml lists none under `types:`. */
export const TASK_TYPES = ['feat', 'fix', 'refactor', 'docs', 'chore'] as const;
/** One of the repository's task types (warren.yaml `types:`, default TASK_TYPES): the first part of the branch name. */
export type TaskType = string;

/**
 * creating → ready | setup_failed; ready → landed; any → removing → (row deleted) | remove_failed.
 * The allowed moves are one table (src/state/transitions.ts); the store refuses any other.
 */
export const TASK_STATES = ['creating', 'ready', 'setup_failed', 'landed', 'removing', 'remove_failed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface Task {
  project: string;
  id: string;
  type: TaskType;
  branch: string;
  /** Canonical (realpath'd) workspace path. */
  path: string;
  base: string;
  /** The base commit the branch was created from. */
  baseCommit: string;
  state: TaskState;
  createdAt: string;
  updatedAt: string;
  /** What later stages recorded (provisioning, fingerprints, ports…): one typed schema, src/state/facts.ts. */
  data: TaskFacts;
}
