import { WarrenError } from '../../errors.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';

export const registerMcp: Register = (program, run) => {
  program
    .command('mcp')
    .description(
      'an MCP server over stdio with the tools new, list, show, status, diff, exec, verify, checkpoint, land, rm (register it with your agent: `warren help agents`); inside a command warren runs for a task, it serves that task alone',
    )
    .option('--task <id>', 'serve this task alone: every other task, and new, are refused')
    .action((opts: { task?: string }) =>
      run(async (env) => {
        const task = mcpScope(opts.task, process.env.WARREN_TASK_ID);
        // Loaded only here: the SDK and its dependencies stay out of every other command's start-up.
        const { serveMcp } = await import('../../mcp/server.js');
        await serveMcp({ repoDir: env.repoDir, store: () => env.store(), version: program.version() ?? '0.0.0', task });
        // stdout belonged to the protocol: nothing more is printed.
        return { data: null, human: '' };
      }),
    );
};

/**
 * The task a session serves: `--task`, else the task of the command warren runs that started it
 * (WARREN_TASK_ID: an agent warren runs gets a server scoped to its own task). Inside one task's
 * command, `--task` cannot name another.
 */
export function mcpScope(flag: string | undefined, inherited: string | undefined): string | null {
  const own = inherited ? validateTaskId(inherited) : null;
  const asked = flag === undefined ? null : validateTaskId(flag);
  if (own && asked && own !== asked) {
    throw new WarrenError(
      'OUT_OF_SCOPE',
      `this \`warren mcp\` runs inside a command of task ${own} (WARREN_TASK_ID), so it serves ${own} only, not ${asked}. Nothing was started.`,
      { hint: `Run \`warren mcp --task ${asked}\` outside any task's command.` },
    );
  }
  return asked ?? own;
}
