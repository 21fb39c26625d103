export const TASK_TYPES = ['feat', 'fix', 'refactor', 'docs', 'chore'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/**
 * creating → ready | setup_failed; ready → landed; any → removing → (row deleted) | remove_failed.
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
  /** Feature-specific facts (provisioning, fingerprints, ports…), kept as JSON. */
  data: Record<string, unknown>;
}

export type EventLevel = 'info' | 'warn' | 'error';

export interface WarrenEvent {
  seq: number;
  at: string;
  project: string | null;
  taskId: string | null;
  kind: string;
  level: EventLevel;
  message: string;
  data: Record<string, unknown>;
}

export interface NewEvent {
  project: string | null;
  taskId?: string | null;
  kind: string;
  level?: EventLevel;
  message: string;
  data?: Record<string, unknown>;
}
