import { createdSummary } from '../../workspace/created.js';
import { validateTaskId } from '../../workspace/ids.js';
import { restoreTask } from '../../workspace/restore.js';
import type { Register } from '../command.js';

export const registerRestore: Register = (program, run) => {
  program
    .command('restore')
    .description(
      'bring the newest archive of task ID (made by rm --discard) back as a workspace: its branch, commits, and files, staged, unstaged and untracked as they were',
    )
    .argument('<id>')
    .option('--no-setup', 'do not run the setup commands')
    .action((rawId: string, opts: { setup: boolean }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const since = ctx.store.lastEventSeq();
        const { task, archive, ignored } = await restoreTask(ctx, rawId, { setup: opts.setup });
        const data = {
          ...createdSummary(ctx, task, since),
          archive: archive.ref,
          ignored: ignored.map((i) => ({ ref: i.ref, why: i.why, reason: i.reason })),
        };
        for (const w of data.warnings) env.log(`warren: ${w.level}: ${w.message}`);
        // What its services were made from (a database from its dump), as `new` says it.
        const services = data.services.map((m) => `\n${m.message}`).join('');
        const setup = data.log === undefined ? '' : `\nsetup ${data.setupOk ? 'passed' : 'FAILED'}; log ${data.log}`;
        return {
          data,
          human: `${task.state === 'ready' ? 'restored' : task.state}: ${task.branch} at ${task.path} from ${archive.ref} (archived ${archive.at})${services}${setup}`,
          exitCode: task.state === 'ready' ? 0 : 1,
        };
      }),
    );
};
