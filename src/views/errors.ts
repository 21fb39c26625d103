import { WarrenError, type ErrorCode } from '../errors.js';
import { environmentError } from '../state/faults.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * How every front end (the CLI's `--json`, an MCP tool's error, the dashboard's answer) says
 * a refusal, and records it: one document, `{"error": WarrenError.toJSON()}`, and one `refused`
 * event. A front end only chooses how to deliver them (stdout and an exit code, a tool error,
 * an HTTP status).
 */

export interface ErrorDocument {
  error: { code: ErrorCode | 'INTERNAL'; message: string; hint?: string; details?: Record<string, unknown> };
}

/** What was thrown, as the WarrenError a user is shown: a full disk or a read-only file system is the machine's refusal. */
export function refusalOf(thrown: unknown): WarrenError | null {
  const err = environmentError(thrown) ?? thrown;
  return err instanceof WarrenError ? err : null;
}

/** The error document of anything thrown: a WarrenError's own, else an internal error (a bug). */
export function errorDocument(thrown: unknown): ErrorDocument {
  const err = refusalOf(thrown);
  if (err) return { error: err.toJSON() };
  return {
    error: {
      code: 'INTERNAL',
      message: thrown instanceof Error ? thrown.message : String(thrown),
      hint: 'This is a bug in warren; please report it with the command you ran.',
    },
  };
}

/**
 * Records a refusal as a `refused` event against the project (and task) it concerns, with the
 * command that met it (`warren …`, `mcp rm`, `dashboard rm`). Recording never hides the
 * refusal itself: a store that cannot write is passed over.
 */
export function recordRefusal(
  ctx: ProjectContext | null,
  taskId: string | null,
  err: WarrenError,
  command: string,
): void {
  if (!ctx) return;
  try {
    ctx.store.addEvent({
      project: ctx.key,
      taskId,
      kind: 'refused',
      level: 'warn',
      message: err.message,
      data: { code: err.code, command },
    });
  } catch {
    // recording must never hide the refusal itself
  }
}
