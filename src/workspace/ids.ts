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

export function validateTaskType(type: string): TaskType {
  if (!(TASK_TYPES as readonly string[]).includes(type)) {
    throw new WarrenError('TYPE_INVALID', `task type ${JSON.stringify(type)} is not one of ${TASK_TYPES.join(', ')}. Nothing was created.`, {
      hint: `Use one of: ${TASK_TYPES.join(' ')}.`,
    });
  }
  return type as TaskType;
}

export function branchFor(type: TaskType, id: string): string {
  return `${type}/${id}`;
}
