import { WarrenError } from '../../errors.js';
import type { Register } from '../command.js';
import { REMOVED_COMMANDS } from '../reference/removed.js';

/**
 * A command that warren no longer has refuses with why (exit 2) instead of commander's "unknown
 * command": scripts that still call it learn what happened. Hidden from `--help`; its page says
 * it is gone.
 */
export const registerRemoved: Register = (program, run) => {
  for (const [name, gone] of Object.entries(REMOVED_COMMANDS)) {
    program
      .command(name, { hidden: true })
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[args...]')
      .action(() =>
        run(() => {
          throw new WarrenError(
            'USAGE',
            `\`warren ${name}\` was removed in ${gone.removed}: ${gone.why}. Nothing was run.`,
            { hint: gone.instead },
          );
        }),
      );
  }
};
