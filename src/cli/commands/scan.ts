import { remoteStrays } from '../../run/ssh/ssh-steps.js';
import { scan } from '../../workspace/scan.js';
import type { Register } from '../command.js';
import { table } from '../format.js';

export const registerScan: Register = (program, run) => {
  program
    .command('scan')
    .description("reconcile the database, git's worktree list, the disk and the mount table")
    .action(() =>
      run(async (env) => {
        const ctx = await env.project({ lenientConfig: true });
        const found = await scan(ctx);
        const result = { strays: [...found.strays, ...remoteStrays(ctx)] };
        const human =
          result.strays.length === 0
            ? `no strays: the database, git and ${ctx.root} agree`
            : table(
                ['KIND', 'ID', 'PATH OR BRANCH', 'WHY'],
                result.strays.map((s) => [s.kind, s.id ?? '-', s.path ?? s.branch ?? '-', s.reason]),
              );
        return { data: result, human };
      }),
    );
};
