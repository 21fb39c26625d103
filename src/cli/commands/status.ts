import { formatStatus } from '../../provision/status/format.js';
import { statusTask } from '../../provision/operations.js';
import { taskServices } from '../../services/operations.js';
import { requireTask } from '../../workspace/tasks.js';
import { validateTaskId } from '../../workspace/ids.js';
import { bringBackTask } from '../../run/ssh/remote-task.js';
import { taskConflicts } from '../../conflicts/operations.js';
import { conflictLine } from '../../conflicts/view.js';
import type { Register } from '../command.js';
import { serviceLine } from '../format.js';
import { paintStatus } from '../highlight.js';

export const registerStatus: Register = (program, run) => {
  program
    .command('status')
    .description('tracked changes, and changes inside provisioned (ignored) paths since they were provisioned')
    .argument('<id>')
    .option('--files', 'list every changed file inside provisioned paths, not one line per package')
    .action((rawId: string, opts: { files?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        // A task on another machine: what it committed there, fetched and checked first.
        await bringBackTask(ctx, validateTaskId(rawId));
        const { remounted: _remounted, ...status } = await statusTask(ctx, rawId);
        // Copied env files whose keys named the main checkout's services, set to the task's own at `new`.
        const task = requireTask(ctx, rawId);
        const envRewritten = task.data.servicesEnvRewritten ?? [];
        // Each service's state, and which template (of which seed) a database came from.
        const services = taskServices(ctx, task);
        // What the task's work (uncommitted included) would not merge with: other live tasks, its base.
        // A map that cannot be computed does not hide the status: said on stderr, and left empty.
        const conflicts = await taskConflicts(ctx, rawId).then(
          (c) => c.with,
          (err: unknown) => {
            env.log(
              `warren: warn: could not compute ${rawId}'s conflicts: ${err instanceof Error ? err.message : String(err)}`,
            );
            return [];
          },
        );
        const human = [
          formatStatus(rawId, status, { files: opts.files === true }),
          ...envRewritten.map(
            (r) => `${r.file}: ${r.keys.join(', ')} set to this task's services (they named the main checkout's)`,
          ),
          ...(services.length > 0 ? ['services:', ...services.map((s) => `  ${serviceLine(s)}`)] : []),
          ...(conflicts.length > 0 ? [`conflicts with ${conflictLine({ id: task.id, with: conflicts })}`] : []),
        ].join('\n');
        return { data: { ...status, envRewritten, services, conflicts }, human, colour: paintStatus };
      }),
    );
};
