import { composeSection } from './audit/compose-section.js';
import { gitSection } from './audit/git-section.js';
import { hooksSection } from './audit/hooks-section.js';
import { fingerprintCreate, landingRemove } from './land/steps.js';
import { provisionAudit, provisionBeforeRun, provisionCreate, provisionGc, provisionRemove } from './provision/steps.js';
import { portsAudit } from './run/audit-ports.js';
import { executionRemove, portsCreate, riskCreate, runLogsGc, setupCreate } from './run/steps.js';
import { openProjectWith, type OpenParts, type ProjectContext } from './workspace/context.js';
import type { Lifecycle } from './workspace/lifecycle.js';

/**
 * warren's features, composed: every step each lifecycle runs, in the order it runs them. This
 * is the one place that order is decided; every command gets it through the project context.
 */
export const LIFECYCLE: Lifecycle = {
  // `warren new`, after the worktree exists: files first (setup needs them), the shared-git
  // fingerprint before anything runs, the port block and the sandbox choice before setup.
  create: [provisionCreate, fingerprintCreate, portsCreate, riskCreate, setupCreate],
  // `warren rm`: is it landed (for --delete-branch); teardown (which may need the cow layers)
  // before provisioning unmounts them.
  remove: [landingRemove, executionRemove, provisionRemove],
  gc: [runLogsGc, provisionGc],
  beforeRun: [provisionBeforeRun],
  // `warren audit`: git sharing and hooks, then what was provisioned, ports, compose binds.
  audit: [gitSection, hooksSection, provisionAudit, portsAudit, composeSection],
};

/** Opens a repository as every warren command does: with warren's own lifecycle. */
export function openProject(dir: string, parts: Partial<OpenParts> = {}): Promise<ProjectContext> {
  return openProjectWith(dir, { lifecycle: LIFECYCLE, ...parts });
}
