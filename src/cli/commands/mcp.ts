import { WarrenError } from '../../errors.js';
import { validateTaskId } from '../../workspace/ids.js';
import { taskHolding } from '../../workspace/tasks.js';
import type { CliEnv, Register } from '../command.js';

export const registerMcp: Register = (program, run) => {
  program
    .command('mcp')
    .description(
      "an MCP server over stdio with the tools new, list, show, status, diff, conflicts, exec, verify, checkpoint, land, rm (register it with your agent: `warren help agents`); started in a task's workspace, or inside a command warren runs for a task, it serves that task alone",
    )
    .option('--task <id>', 'serve this task alone: every other task, and new, are refused')
    .action((opts: { task?: string }) =>
      run(async (env) => {
        const task = mcpScope(opts.task, process.env.WARREN_TASK_ID, workspaceScope(env));
        // Loaded only here: the SDK and its dependencies stay out of every other command's start-up.
        const { serveMcp } = await import('../../mcp/server.js');
        await serveMcp({ repoDir: env.repoDir, store: () => env.store(), version: program.version() ?? '0.0.0', task });
        // stdout belonged to the protocol: nothing more is printed.
        return { data: null, human: '' };
      }),
    );
};

/**
 * The task whose workspace this `warren mcp` starts in: its folder (or `--repo`) inside a
 * task's workspace, as when Claude Code started in the workspace runs the repository's
 * `.mcp.json`. The two in different tasks' workspaces serve neither.
 */
function workspaceScope(env: CliEnv): string | null {
  const inCwd = taskHolding(env.store(), env.io.cwd)?.id ?? null;
  const inRepo = env.repoDir === env.io.cwd ? inCwd : (taskHolding(env.store(), env.repoDir)?.id ?? null);
  if (inCwd !== null && inRepo !== null && inCwd !== inRepo) {
    throw new WarrenError(
      'OUT_OF_SCOPE',
      `this \`warren mcp\` starts in task ${inCwd}'s workspace with --repo in task ${inRepo}'s, so it serves neither. Nothing was started.`,
      {
        hint: 'Start it in the workspace of the task it is to serve, without --repo.',
        details: { cwd: inCwd, repo: inRepo },
      },
    );
  }
  return inCwd ?? inRepo;
}

/**
 * The task a session serves: `--task`, else the task of the command warren runs that started it
 * (WARREN_TASK_ID: an agent warren runs gets a server scoped to its own task), else the task
 * whose workspace it starts in. Inside one task's command or workspace, `--task` cannot name
 * another, and the command and the workspace must be one task's.
 */
export function mcpScope(
  flag: string | undefined,
  inherited: string | undefined,
  workspace: string | null = null,
): string | null {
  const own = inherited ? validateTaskId(inherited) : null;
  const asked = flag === undefined ? null : validateTaskId(flag);
  if (own && workspace && own !== workspace) {
    throw new WarrenError(
      'OUT_OF_SCOPE',
      `this \`warren mcp\` runs inside a command of task ${own} (WARREN_TASK_ID) but starts in task ${workspace}'s workspace, so it serves neither. Nothing was started.`,
      { hint: `Start it in task ${own}'s workspace.` },
    );
  }
  const where = own
    ? { id: own, why: `inside a command of task ${own} (WARREN_TASK_ID)` }
    : workspace
      ? { id: workspace, why: `in task ${workspace}'s workspace` }
      : null;
  if (where && asked && where.id !== asked) {
    throw new WarrenError(
      'OUT_OF_SCOPE',
      `this \`warren mcp\` runs ${where.why}, so it serves ${where.id} only, not ${asked}. Nothing was started.`,
      {
        hint: `Run \`warren mcp --task ${asked}\` outside any task's command and workspace (in the main checkout, say).`,
        details: { scope: where.id, asked },
      },
    );
  }
  return asked ?? where?.id ?? null;
}
