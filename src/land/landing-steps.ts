import fs from 'node:fs';
import path from 'node:path';
import type { CreateStep, RemoveStep } from '../workspace/types.js';
import { configuredHooksPath, pinned } from '../workspace/pinned.js';
import { takeFingerprint } from './fingerprint.js';
import { isTaskLanded } from './landed.js';

/** Landing's steps in a workspace's life: the shared-git fingerprint at `new`, and "is it landed?" for `rm`. */

export const fingerprintCreate: CreateStep = {
  name: 'fingerprint',
  async run(ctx, task) {
    const fp = await takeFingerprint(await pinned(ctx, task.path), await configuredHooksPath(ctx));
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

export const landingRemove: RemoveStep = { name: 'landing', isLanded: isTaskLanded };
