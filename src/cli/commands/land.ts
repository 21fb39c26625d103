import { landTask } from '../../land/land.js';
import type { Register } from '../command.js';

export const registerLand: Register = (program, run) => {
  program
    .command('land')
    .description('squash the task onto its base as one commit, leaving protected paths out')
    .argument('<id>')
    .option('-m, --message <msg>', 'commit message (default: generated from the type, ID and checkpoint subjects)')
    .option('--push [remote]', 'push the landed base (default remote: the base branch\'s upstream remote, else origin)')
    .option('--branch-only', 'do not land locally: push the squashed task branch for review instead')
    .option('--accept-hooks', 'go ahead although the git hooks changed since the task began')
    .action((id: string, opts: { message?: string; push?: string | true; branchOnly?: boolean; acceptHooks?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        const r = await landTask(ctx, id, {
          ...(opts.message ? { message: opts.message } : {}),
          ...(opts.push === undefined ? {} : { push: opts.push }),
          branchOnly: opts.branchOnly === true,
          acceptHooks: opts.acceptHooks === true,
        });
        for (const w of r.warnings) env.log(`warren: warn: ${w}`);
        for (const e of r.exclusions) env.log(`warren: left out ${e.why} ${e.path} (${e.how}); the workspace keeps its copy`);
        const lines = r.landed
          ? [`landed ${id} on ${r.base} as ${r.commit.slice(0, 12)}${r.rebased ? ` (rebased onto ${r.baseBefore.slice(0, 12)})` : ''}`]
          : [`built ${r.commit.slice(0, 12)} for review; ${r.base} was not moved`];
        if (r.excluded.length > 0) lines.push(`excluded: ${r.excluded.join(', ')}`);
        if (r.checkoutUpdated) lines.push(`${r.checkoutUpdated} follows ${r.base}`);
        if (r.push) lines.push(r.push.ok ? `pushed to ${r.push.remote} ${r.push.ref}` : `push to ${r.push.remote} ${r.push.ref} FAILED: ${r.push.error ?? ''}`);
        return { data: r, human: lines.join('\n'), exitCode: r.push && !r.push.ok ? 1 : 0 };
      }),
    );
};
