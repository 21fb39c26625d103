import path from 'node:path';
import type { CreateStep, RemoveStep } from '../workspace/types.js';
import { takeFingerprint } from './fingerprint.js';
import { isTaskLanded } from './landed.js';

/** Landing's steps in a workspace's life: the shared-git fingerprint at `new`, and "is it landed?" for `rm`. */

export const fingerprintCreate: CreateStep = {
  name: 'fingerprint',
  async run(ctx, task) {
    const fp = await takeFingerprint(task.path, ctx.repo.commonDir, ctx.repo.main?.hooksDir);
    ctx.store.mergeData(ctx.key, task.id, { fingerprint: fp });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'fingerprint.recorded',
      message: `recorded the shared git state: hooks in ${fp.hooksDir} (${Object.keys(fp.hooks).length} hook(s))${fp.hooksPath ? `, core.hooksPath=${fp.hooksPath}` : ''}`,
      data: { hooksDir: fp.hooksDir, hooksPath: fp.hooksPath, hooks: Object.keys(fp.hooks) },
    });
    if (fp.hooksPath !== null && !fp.hooksDirExists) {
      const relative = !path.isAbsolute(fp.hooksPath);
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'hooks.missing',
        level: 'warn',
        message: relative
          ? `core.hooksPath is ${fp.hooksPath}, which does not exist inside this workspace (${fp.hooksDir}): git hooks will silently NOT run for commits here. It is usually generated and ignored (husky's .husky/_); run the hook installer in the workspace (e.g. npm install / npx husky) to get them.`
          : `core.hooksPath is ${fp.hooksPath}, which does not exist: git hooks will not run for commits in this workspace.`,
        data: { hooksPath: fp.hooksPath, hooksDir: fp.hooksDir },
      });
    }
  },
};

export const landingRemove: RemoveStep = { name: 'landing', isLanded: isTaskLanded };
