import { syncTask, type SyncResult } from '../../conflicts/sync.js';
import { WarrenError } from '../../errors.js';
import type { Register } from '../command.js';

export const registerSync: Register = (program, run) => {
  program
    .command('sync')
    .description(
      "bring the base's new commits into the task's branch (rebase, or merge: `conflicts.sync` in warren.yaml); refuses uncommitted work unless --checkpoint, and on a conflict rolls back unless --keep",
    )
    .argument('<id>')
    .option('--rebase', 'rebase the task onto the base (the default)')
    .option('--merge', 'merge the base into the task')
    .option('--checkpoint', 'commit uncommitted work first, instead of refusing')
    .option(
      '--keep',
      'on a conflict, leave the base merged into the workspace with the conflict, for `warren run ID --resolve` (or you) to resolve and `warren checkpoint ID` to conclude',
    )
    .option('--abort', 'roll back the conflict a `sync --keep` left')
    .action(
      (
        id: string,
        opts: { rebase?: boolean; merge?: boolean; checkpoint?: boolean; keep?: boolean; abort?: boolean },
      ) =>
        run(async (env) => {
          env.taskId = id;
          if (opts.rebase && opts.merge)
            throw new WarrenError('USAGE', '--rebase and --merge cannot both be given; nothing was changed.', {
              hint: 'Give one, or neither for warren.yaml’s `conflicts.sync` (default rebase).',
            });
          const ctx = await env.project();
          const r = await syncTask(ctx, id, {
            ...(opts.rebase ? { how: 'rebase' as const } : opts.merge ? { how: 'merge' as const } : {}),
            keep: opts.keep === true,
            checkpoint: opts.checkpoint === true,
            abort: opts.abort === true,
          });
          return { data: r, human: syncLine(r), ...(r.state === 'conflict' ? { exitCode: 1 } : {}) };
        }),
    );
};

function syncLine(r: SyncResult): string {
  switch (r.state) {
    case 'up-to-date':
      return `${r.id} already holds its base (${r.onto.slice(0, 12)}); nothing to do`;
    case 'synced':
      return `${r.id}: brought its base (${r.onto.slice(0, 12)}) in by ${r.how}: ${r.from.slice(0, 12)} → ${r.to.slice(0, 12)}${r.checkpoint ? ` (after checkpoint ${r.checkpoint.slice(0, 12)})` : ''}`;
    case 'conflict':
      return `${r.id}: the base (${r.onto.slice(0, 12)}) is merged into the workspace with conflicts in ${r.paths.join(', ')}, left to resolve: \`warren run ${r.id} --resolve --agent NAME\` (or edit them), then \`warren checkpoint ${r.id}\`; \`warren sync ${r.id} --abort\` rolls it back`;
    case 'aborted':
      return `${r.id}: the sync was rolled back; the workspace is at ${r.head.slice(0, 12)}`;
  }
}
