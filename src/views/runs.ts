import type { RunOutcome } from '../run/execute.js';
import type { VerifyOutcome } from '../run/setup-verify.js';
import type { TrustState } from '../trust/trust.js';

/** The answers about a task's runs and the commands they may run, shaped once for every front end (see tasks.ts). */

export type RunView = ReturnType<typeof runView>;

/** `exec` and `run`: how the command ended and where its log is. */
export function runView(outcome: RunOutcome) {
  return {
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    durationMs: outcome.durationMs,
    log: outcome.log,
    signal: outcome.signal,
    canceledBy: outcome.canceledBy,
    sandbox: outcome.sandbox,
    reason: outcome.reason,
    runId: outcome.runId,
  };
}

/** `verify`: whether every required command passed, each one's result, and the log. */
export function verifyView(outcome: VerifyOutcome) {
  return { passed: outcome.passed, log: outcome.log, results: outcome.results };
}

/** `trust` once trusted: the set's hash, its commands, and since when. */
export function trustedView(state: TrustState) {
  return { trusted: true as const, hash: state.hash, commands: state.commands, trustedAt: state.trustedAt };
}
