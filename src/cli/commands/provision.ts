import { WarrenError } from '../../errors.js';
import { ensureMounted } from '../../provision/lifecycle.js';
import { refreshTask } from '../../provision/refresh.js';
import { provisionRecords } from '../../provision/types.js';
import { validateTaskId } from '../../workspace/ids.js';
import { lockTask } from '../../workspace/locks.js';
import { assertContained } from '../../workspace/paths.js';
import type { Register } from '../command.js';

export const registerProvision: Register = (program, run) => {
  program
    .command('provision')
    .description('mount again what is not mounted; with --refresh, provision the ignored paths again from the main checkout')
    .argument('<id>')
    .option('--refresh', 'drop the provisioned paths (and their private changes) and provision them again')
    .action((rawId: string, opts: { refresh?: boolean }) =>
      run(async (env) => {
        const id = validateTaskId(rawId);
        const ctx = await env.project();
        const lock = lockTask(ctx, id, opts.refresh ? 'provision --refresh' : 'provision');
        try {
          const task = ctx.store.getTask(ctx.key, id);
          if (!task) throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was changed.`, { hint: 'See `warren list`.' });
          assertContained(ctx.root, task.path);
          if (opts.refresh) {
            const result = await refreshTask(ctx, task, env.log);
            const human = [
              ...result.records.map((r) => `${r.path}: ${r.mode} by ${r.method}, ${r.entries} entries, ${r.ms} ms`),
              ...result.skips.map((s) => `skipped ${s.path} (${s.reason}): ${s.detail}`),
            ].join('\n');
            return { data: { provision: result.records, skips: result.skips }, human: human || 'nothing to provision' };
          }
          const remounted = await ensureMounted(ctx, task);
          const records = provisionRecords(task.data);
          return {
            data: { provision: records, remounted },
            human: remounted.length > 0 ? `mounted again: ${remounted.join(', ')}` : `${records.length} provisioned path(s), all in place`,
          };
        } finally {
          lock.release();
        }
      }),
    );
};
