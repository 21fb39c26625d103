import type { ErrorCode } from '../../errors.js';

/**
 * What the command reference needs and commander does not know: each command's `--json`
 * result, its exit statuses, the errors it raises and a real run. Keyed by the command's full
 * name (`'policy keygen'`). `npm run docs` renders docs/commands/ from this and the commander
 * definitions; test/docs.test.ts fails when a command has no entry here, or an entry no command.
 * The examples are real runs, pasted from `node scripts/doc-examples.js` (paths, hashes and
 * times are as they appeared); test/docs-examples.test.ts runs that script again and fails when
 * a `--json` example's keys, or the keys its `json` shape names, differ from the real answer's.
 */
export interface CommandReference {
  /** The `--json` result: a TypeScript-like shape, with comments. */
  json: string;
  /** Exit statuses and when each happens. */
  exit: readonly (readonly [status: number, when: string])[];
  /** The codes this command raises most often (every code: docs/errors.md). */
  errors: readonly ErrorCode[];
  /** A real run: `$ warren …`, its output (stderr, then stdout), `[exit N]`. */
  example: string;
  /** Where the behaviour is explained, relative to docs/commands/. */
  see: readonly (readonly [title: string, href: string])[];
}

/** Exit status 2 as most task commands have it. */
export const TASK_EXIT_2 = [
  2,
  'bad input (an invalid ID, no such task, an unknown option); nothing was touched',
] as const;
