import fs from 'node:fs';
import path from 'node:path';
import type { CreateStep, RemoveStep } from '../workspace/types.js';
import { gitPaths } from '../git/config.js';
import { pinWorktree } from '../git/worktree.js';
import { isInside } from '../workspace/paths.js';
import { configuredHooksPath, pinned } from '../workspace/pinned.js';
import { compareFingerprints, describeDrift, recordedFingerprint, takeFingerprint } from './fingerprint.js';
import { isTaskLanded } from './landed.js';

/** Landing's steps in a workspace's life: the shared-git fingerprint at `new`, and "is it landed?" for `rm`. */

export const fingerprintCreate: CreateStep<string | null> = {
  name: 'fingerprint',
  // core.hooksPath read while git makes the worktree: nothing of the task runs before this step.
  prepare: (ctx) => configuredHooksPath(ctx),
  async run(ctx, task, _options, hooksPath) {
    const fp = await takeFingerprint(await pinned(ctx, task.path), hooksPath);
    ctx.store.mergeData(ctx.key, task.id, { fingerprint: fp });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'fingerprint.recorded',
      message: `recorded the shared git state: hooks in ${fp.hooksDir} (${Object.keys(fp.hooks).length} hook(s))${fp.hooksPath ? `, core.hooksPath=${fp.hooksPath}` : ''}`,
      data: { hooksDir: fp.hooksDir, hooksPath: fp.hooksPath, hooks: Object.keys(fp.hooks) },
    });
    // warren's own commits run the main checkout's hooks; an agent's own `git commit` in the
    // workspace runs what core.hooksPath names there, which a relative one (husky's .husky/_,
    // generated and ignored) may not have.
    const inWorkspace =
      fp.hooksPath !== null && !path.isAbsolute(fp.hooksPath) ? path.join(task.path, fp.hooksPath) : null;
    if (fp.hooksPath !== null && (!fp.hooksDirExists || (inWorkspace !== null && !fs.existsSync(inWorkspace)))) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'hooks.missing',
        level: 'warn',
        message: !fp.hooksDirExists
          ? `core.hooksPath is ${fp.hooksPath}, which does not exist: git hooks will not run for commits in this workspace.`
          : `core.hooksPath is ${fp.hooksPath}, which does not exist inside this workspace (${inWorkspace}): git hooks will silently NOT run for the agent's own commits here (warren's checkpoint runs the main checkout's, ${fp.hooksDir}). It is usually generated and ignored (husky's .husky/_); run the hook installer in the workspace (e.g. npm install / npx husky) to get them.`,
        data: { hooksPath: fp.hooksPath, hooksDir: inWorkspace ?? fp.hooksDir },
      });
    }
  },
};

/**
 * After setup at `new`: a core.hooksPath the project's own setup set — husky's `prepare` writes
 * `core.hooksPath=.husky/_`, a folder it generates inside the workspace — is the project's own
 * (issue 41), so it becomes the task's recorded baseline and `checkpoint` does not refuse it as
 * drift. Only that: a hooksPath setup set elsewhere (absolute, outside the workspace, or a folder
 * that is not there) stays drift, and so does any hook change while the hooksPath stays put.
 */
export const projectHooksCreate: CreateStep = {
  name: 'project-hooks',
  async run(ctx, task) {
    const before = recordedFingerprint(task);
    if (!before || !task.data.setup) return;
    const hooksPath = await configuredHooksPath(ctx);
    if (hooksPath === before.hooksPath || !projectHooksPath(task.path, hooksPath)) return;
    // The main checkout's hooks directory as git resolves it now (ctx.repo read it before setup).
    const [hooksDir = before.hooksDir] = (await gitPaths(ctx.repo.root, ['hooks'])).paths;
    const fp = await takeFingerprint(await pinWorktree(ctx.repo.commonDir, hooksDir, task.path), hooksPath);
    const drift = describeDrift(compareFingerprints(before, fp));
    ctx.store.mergeData(ctx.key, task.id, { fingerprint: fp });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'hooks.project_own',
      message: `the project's own setup set core.hooksPath=${hooksPath} (${path.join(task.path, hooksPath)}, which it generated, as husky's prepare does): recorded as this task's hooks, so checkpoint and land do not call it drift (${drift.join('; ') || 'no other change'})`,
      data: { hooksPath, hooksDir, drift },
    });
  },
};

/** Is `hooksPath` relative, inside the workspace `root`, and a folder there? Pure but for the one stat. */
export function projectHooksPath(root: string, hooksPath: string | null): hooksPath is string {
  if (hooksPath === null || path.isAbsolute(hooksPath)) return false;
  const dir = path.resolve(root, hooksPath);
  return dir !== root && isInside(root, dir) && fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

export const landingRemove: RemoveStep = { name: 'landing', isLanded: isTaskLanded };
