import { WarrenError } from '../../errors.js';
import { formatStatus } from '../../provision/format.js';
import { ensureMounted } from '../../provision/lifecycle.js';
import { taskStatus } from '../../provision/status.js';
import { validateTaskId } from '../../workspace/ids.js';
import { assertContained } from '../../workspace/paths.js';
import type { Register } from '../command.js';

export const registerStatus: Register = (program, run) => {
  program
    .command('status')
    .description('tracked changes, and changes inside provisioned (ignored) paths since they were provisioned')
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        const id = validateTaskId(rawId);
        const ctx = await env.project();
        const task = ctx.store.getTask(ctx.key, id);
        if (!task) throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository.`, { hint: 'See `warren list`.' });
        assertContained(ctx.root, task.path);
        const remounted = await ensureMounted(ctx, task);
        for (const p of remounted) env.log(`warren: ${p} was not mounted; mounted its overlay again`);
        const status = await taskStatus(task);
        return { data: status, human: formatStatus(id, status) };
      }),
    );
};
