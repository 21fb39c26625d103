import { SYSTEM_ERROR_DOCS } from './error-docs-system.js';
import { TASK_ERROR_DOCS } from './error-docs-tasks.js';
import type { ErrorCode } from './errors.js';

/**
 * What each error code means and what to do about it: the source of docs/errors.md
 * (`npm run docs`). Keyed by every code, so a new code without its entry does not compile.
 */
export interface ErrorDoc {
  /** When warren raises it, and what it left as it was. */
  meaning: string;
  /** What the user does next. */
  action: string;
}

/** Every code once, in the order docs/errors.md lists them; a code missing from both halves does not compile. */
export const ERROR_DOCS = { ...TASK_ERROR_DOCS, ...SYSTEM_ERROR_DOCS } as const satisfies Record<ErrorCode, ErrorDoc>;
