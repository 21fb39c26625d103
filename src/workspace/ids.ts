import { WarrenError } from '../errors.js';
import { TASK_TYPES, type TaskType } from '../state/types.js';

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Task IDs are hostile until checked: no path separators, no leading `-`, no shell syntax. */
export function validateTaskId(id: string): string {
  if (!ID_PATTERN.test(id) || id.endsWith('.lock') || id.includes('..')) {
    throw new WarrenError(
      'ID_INVALID',
      `task ID ${JSON.stringify(id)} is not allowed: it must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (start with a letter or digit, at most 64 characters, no "..", not ending in ".lock"). Nothing was created.`,
      { hint: 'Pick an ID such as T-123 or fix-login.' },
    );
  }
  return id;
}

/** The repository's task types: warren.yaml's `types:`, which replaces the built-in five. */
export function taskTypes(config: { types?: readonly string[] | undefined }): readonly string[] {
  return config.types ?? TASK_TYPES;
}

export function validateTaskType(type: string, types: readonly string[] = TASK_TYPES): TaskType {
  if (!types.includes(type)) {
    throw new WarrenError(
      'TYPE_INVALID',
      `task type ${JSON.stringify(type)} is not one of ${types.join(', ')}. Nothing was created.`,
      {
        hint: `Use one of: ${types.join(' ')}${types === TASK_TYPES ? '' : ' (warren.yaml `types:`)'}.`,
      },
    );
  }
  return type;
}

export function branchFor(type: TaskType, id: string): string {
  return `${type}/${id}`;
}
