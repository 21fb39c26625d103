import { WarrenError } from '../../errors.js';
import { BARE_LIFECYCLE } from '../../workspace/types.js';
import { openProjectWith } from '../../workspace/context.js';
import { listArchives } from '../../workspace/archive.js';
import { taskTypes } from '../../workspace/ids.js';
import { completionScript, SHELLS, type Shell } from '../completion.js';
import type { Register } from '../command.js';

export const registerCompletion: Register = (program, run) => {
  program
    .command('completion')
    .description(
      'a completion script for bash, zsh or fish: commands, options, and task IDs from the state (e.g. source <(warren completion bash))',
    )
    .argument('<shell>', SHELLS.join(' | '))
    .action((shell: string) =>
      run(async () => {
        if (!(SHELLS as readonly string[]).includes(shell)) {
          throw new WarrenError('USAGE', `no completion for shell ${JSON.stringify(shell)}; nothing was printed.`, {
            hint: `Use one of: ${SHELLS.join(' ')}.`,
          });
        }
        const script = completionScript(program, shell as Shell);
        return { data: { shell, script }, human: script.replace(/\n$/, '') };
      }),
    );
  // What the scripts call back while completing: one word a line, nothing on error (a shell shows no message there).
  program
    .command('__complete', { hidden: true })
    .argument('<what>', 'ids | archived | types')
    .action((what: string) =>
      run(async (env) => {
        try {
          // Read only: no recovery of interrupted commands while a user presses Tab.
          const ctx = await openProjectWith(env.repoDir, { lifecycle: BARE_LIFECYCLE, store: () => env.store() });
          const list =
            what === 'ids'
              ? ctx.store.listTasks(ctx.key).map((t) => t.id)
              : what === 'archived'
                ? [...new Set((await listArchives(ctx)).map((a) => a.id))]
                : what === 'types'
                  ? [...taskTypes(ctx.config)]
                  : [];
          return { data: list, human: list.join('\n') };
        } catch {
          return { data: [], human: '' };
        }
      }),
    );
};
