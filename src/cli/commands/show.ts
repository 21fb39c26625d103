import { terminalText } from '../../util/terminal-text.js';
import { validateTaskId } from '../../workspace/ids.js';
import { showTask } from '../../workspace/tasks.js';
import { taskServices } from '../../services/operations.js';
import type { Register } from '../command.js';
import { serviceLine } from '../format.js';

export const registerShow: Register = (program, run) => {
  program
    .command('show')
    .description('one task, with its recent events')
    .argument('<id>')
    .option('--events <n>', 'how many recent events', '20')
    .action((rawId: string, opts: { events: string }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project({ lenientConfig: true });
        const { task, events: recorded } = showTask(ctx, rawId, Number.parseInt(opts.events, 10) || 20);
        const services = ctx.configProblem ? [] : taskServices(ctx, task);
        // The payload's own fields first: one named like the event's (a run's `kind`: exec or agent) never hides it.
        const events = recorded.map((e) => ({ ...e.data, at: e.at, kind: e.kind, level: e.level, message: e.message }));
        const data = {
          id: task.id,
          type: task.type,
          branch: task.branch,
          path: task.path,
          base: task.base,
          baseCommit: task.baseCommit,
          state: task.state,
          createdAt: task.createdAt,
          data: task.data,
          services,
          events,
        };
        // One line each: a name or a message (a commit subject an agent wrote) cannot forge another.
        const human = [
          `task    ${task.id} (${task.type})`,
          `state   ${task.state}`,
          `branch  ${terminalText(task.branch)}`,
          `base    ${terminalText(task.base)} ${task.baseCommit.slice(0, 12)}`,
          `path    ${terminalText(task.path)}`,
          `created ${task.createdAt}`,
          ...(services.length > 0
            ? ['', 'services:', ...services.map((s) => `  ${serviceLine(s)}${s.log ? `  log ${s.log}` : ''}`)]
            : []),
          '',
          'events:',
          ...events.map(
            (e) => `  ${e.at}  ${e.level === 'info' ? '' : `[${e.level}] `}${e.kind}: ${terminalText(e.message)}`,
          ),
        ].join('\n');
        return { data, human, paged: true };
      }),
    );
};
