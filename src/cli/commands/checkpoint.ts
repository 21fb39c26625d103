import { checkpointTask, hookTimes } from '../../land/checkpoint.js';
import { terminalText } from '../../util/terminal-text.js';
import type { Register } from '../command.js';

export const registerCheckpoint: Register = (program, run) => {
  program
    .command('checkpoint')
    .description(
      "commit everything in the workspace on its branch (never warren's provisioned paths); the repository's commit hooks run as commands of the task (in its sandbox, when it has one)",
    )
    .argument('<id>')
    .option('-m, --message <msg>', 'commit message (default: "checkpoint: ID TIME")')
    .option('--accept-hooks', 'go ahead although the git hooks changed since the task began')
    .option(
      '--no-verify',
      "skip the pre-commit and commit-msg hooks (for a hook that cannot run in a worktree, where .git is a file, or in the sandbox, where git's object store is read-only)",
    )
    .action((id: string, opts: { message?: string; acceptHooks?: boolean; verify?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        const r = await checkpointTask(ctx, id, {
          ...(opts.message ? { message: opts.message } : {}),
          acceptHooks: opts.acceptHooks === true,
          noVerify: opts.verify === false,
        });
        for (const w of r.warnings) env.log(`warren: warn: ${w}`);
        if (r.unstaged.length > 0)
          env.log(
            `warren: left provisioned path(s) out of the commit: ${r.unstaged.map((p) => terminalText(p)).join(', ')}`,
          );
        // A checkpoint's time is mostly its hooks' (husky's pre-commit running lint-staged): said with its result.
        const hooks = r.hooks.length > 0 ? ` (hooks: ${hookTimes(r.hooks)})` : '';
        const human = r.commit
          ? `committed ${r.commit.slice(0, 12)} on ${r.branch}${hooks}`
          : `nothing to commit; ${r.branch} stays at ${r.head.slice(0, 12)}`;
        return { data: r, human };
      }),
    );
};
