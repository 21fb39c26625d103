import { compareFingerprints, describeDrift, recordedFingerprint, takeFingerprint } from '../land/fingerprint.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { configuredHooksPath, pinned } from '../workspace/pinned.js';
import type { AuditSection } from '../workspace/types.js';
import { hooksAssumingGitDir } from './git-dir-hooks.js';

/** The hooks and shared config as recorded at `new`, as they are now, and what drifted. */
export const hooksSection: AuditSection = {
  name: 'hooks',
  async collect(ctx: ProjectContext, task: Task) {
    const current = await takeFingerprint(await pinned(ctx, task.path), await configuredHooksPath(ctx));
    const recorded = recordedFingerprint(task);
    const drift = recorded ? compareFingerprints(recorded, current) : null;
    const names = Object.keys(current.hooks);
    const lines = [
      `hooks dir: ${current.hooksDir}${current.hooksDirExists ? '' : ' (MISSING: hooks do not run here)'}`,
      `core.hooksPath: ${current.hooksPath ?? '(unset)'}`,
      `hooks: ${names.length > 0 ? names.join(', ') : '(none)'}`,
    ];
    if (!recorded) lines.push('drift: unknown (no fingerprint was recorded when this task was created)');
    else {
      const what = drift ? describeDrift(drift) : [];
      lines.push(
        what.length === 0 ? `drift: none since ${recorded.at}` : `DRIFT since ${recorded.at}: ${what.join('; ')}`,
      );
    }
    const gitDir = hooksAssumingGitDir(current.hooksDir, names, task.path);
    for (const h of gitDir)
      lines.push(
        `WARN: hook ${h.hook} assumes .git is a folder (${h.file === h.hook ? '' : `${h.file}, which it runs, reads `}${h.found}); in a workspace .git is a file, so it fails there (ENOTDIR): \`warren checkpoint ${task.id} --no-verify\` skips it`,
      );
    return { data: { current, recorded, drift, gitDir }, lines };
  },
};
