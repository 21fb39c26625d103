import { validateTaskId } from '../../workspace/ids.js';
import { taskPath } from '../../workspace/tasks.js';
import type { Register } from '../command.js';

export const registerPath: Register = (program, run) => {
  program
    .command('path')
    .description('print the workspace path, e.g. for cd "$(warren path ID)"')
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const path = taskPath(ctx, rawId);
        return { data: { path }, human: path };
      }),
    );
};
