import { terminalText } from '../../util/terminal-text.js';
import { validateTaskId } from '../../workspace/ids.js';
import { showView } from '../../views/tasks.js';
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
        const task = showView(ctx, rawId, Number.parseInt(opts.events, 10) || 20);
        const { services, events } = task;
        // One line each: a name or a message (a commit subject an agent wrote) cannot forge another.
        const human = [
          `task    ${task.id} (${task.type})`,
          `state   ${task.state}`,
          `branch  ${terminalText(task.branch)}`,
          `base    ${terminalText(task.base)} ${task.baseCommit.slice(0, 12)}`,
          `path    ${terminalText(task.path)}`,
          // A task on another machine: where (its boundary is `warren audit`'s).
          ...(task.runner.where === 'here'
            ? []
            : [
                `runs    ${task.runner.runner}${task.runner.remotePath ? ` in ${terminalText(task.runner.remotePath)}` : ''}${task.runner.pending ? ' (commits there not fetched back yet)' : ''}`,
              ]),
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
        return { data: task, human, paged: true };
      }),
    );
};
