import { composeSection } from './audit/compose-section.js';
import { checkoutBeforeRun, checkoutCreate, checkoutGc, checkoutRemove } from './checkout/steps.js';
import { gitSection } from './audit/git-section.js';
import { hooksSection } from './audit/hooks-section.js';
import { fingerprintCreate, landingRemove } from './land/steps.js';
import {
  provisionAudit,
  provisionBeforeRun,
  provisionCreate,
  provisionGc,
  provisionRemove,
} from './provision/steps.js';
import { portsAudit } from './run/audit-ports.js';
import { executionRemove, portsCreate, riskCreate, runLogsGc, setupCreate } from './run/steps.js';
import { recoverCheckpoint } from './land/checkpoint.js';
import { recoverLand } from './land/land.js';
import { recoverProvision } from './provision/operations.js';
import { recoverQueue } from './queue/processor.js';
import { reviewRemove } from './review/steps.js';
import type { IntentOp } from './state/intents.js';
import { openProjectWith, type OpenParts, type ProjectContext } from './workspace/context.js';
import { archiveGc } from './workspace/archive.js';
import { recoverNew } from './workspace/create.js';
import { recoverGc } from './workspace/gc.js';
import { recoverInterrupted, type RecoverFn } from './workspace/intents.js';
import type { Lifecycle } from './workspace/lifecycle.js';
import { recoverRm } from './workspace/remove-recover.js';

/**
 * warren's features, composed: every step each lifecycle runs, in the order it runs them. This
 * is the one place that order is decided; every command gets it through the project context.
 */
export const LIFECYCLE: Lifecycle = {
  // `warren new`, after the worktree exists: files first (setup needs them), the shared-git
  // fingerprint before anything runs, the port block and the sandbox choice before setup.
  create: [provisionCreate, fingerprintCreate, portsCreate, riskCreate, setupCreate],
  // `warren rm`: is it landed (for --delete-branch); teardown (which may need the cow layers)
  // before provisioning unmounts them; a cow checkout, which they sit inside, last.
  remove: [landingRemove, executionRemove, provisionRemove, reviewRemove, checkoutRemove],
  gc: [runLogsGc, provisionGc, archiveGc, checkoutGc],
  // A cow checkout lost to a reboot is mounted again before the layers inside it.
  beforeRun: [checkoutBeforeRun, provisionBeforeRun],
  // `warren audit`: git sharing and hooks, then what was provisioned, ports, compose binds.
  audit: [gitSection, hooksSection, provisionAudit, portsAudit, composeSection],
  // `checkout: cow | auto` in warren.yaml: a copy-on-write checkout in place of `git worktree add`.
  checkout: checkoutCreate,
};

/** How each multi-step operation is repaired when its warren died half way (src/workspace/intents.ts). */
export const RECOVER: Record<IntentOp, RecoverFn> = {
  new: recoverNew,
  rm: recoverRm,
  checkpoint: recoverCheckpoint,
  land: recoverLand,
  provision: recoverProvision,
  gc: recoverGc,
  queue: recoverQueue,
  discard: recoverRm,
  restore: recoverNew,
};

/**
 * Opens a repository as every warren command does: with warren's own lifecycle, after repairing
 * any operation on it whose warren was killed half way.
 */
export async function openProject(dir: string, parts: Partial<OpenParts> = {}): Promise<ProjectContext> {
  const ctx = await openProjectWith(dir, { lifecycle: LIFECYCLE, ...parts });
  await recoverInterrupted(ctx, RECOVER);
  return ctx;
}
