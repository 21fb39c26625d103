import { WarrenError } from '../../errors.js';
import { validateTaskId } from '../../workspace/ids.js';
import { removeView } from '../../views/changes.js';
import type { Register } from '../command.js';

export const registerRm: Register = (program, run) => {
  program
    .command('rm')
    .description('remove the workspace; refuses while any work would be lost (--discard saves it all first)')
    .argument('<id>')
    .option('--delete-branch', 'also delete the branch, only when its work is on the base or another ref')
    .option(
      '--discard',
      'remove it even with uncommitted or unlanded work, after saving all of it under refs/warren/archive/ID/ (warren restore ID brings it back); the branch goes too',
    )
    .action((id: string, opts: { deleteBranch?: boolean; discard?: boolean }) =>
      run(async (env) => {
        env.taskId = validateTaskId(id);
        if (opts.discard && opts.deleteBranch)
          throw new WarrenError(
            'USAGE',
            '--discard deletes the branch already (its commits are kept in the archive); drop --delete-branch. Nothing was removed.',
          );
        const ctx = await env.project();
        const result = await removeView(ctx, id, {
          deleteBranch: opts.deleteBranch === true,
          discard: opts.discard === true,
        });
        const what = result.folderMissing
          ? `forgot ${result.id} (its folder was already missing; git's record of it is gone too)`
          : `removed ${result.id}`;
        const human = result.archive
          ? `discarded ${result.id} and branch ${result.branch}; everything is saved in ${result.archive} (\`warren restore ${result.id}\` brings it back)`
          : result.branchDeleted
            ? `${what}; deleted branch ${result.branch}`
            : `${what}; kept branch ${result.branch} (${result.unlandedCommits} commit(s) not on the base)`;
        return { data: result, human: [human, ...result.services].join('\n') };
      }),
    );
};
