import type { Register } from '../command.js';
import { createTask } from '../../workspace/create.js';
import { validateTaskId, validateTaskType } from '../../workspace/ids.js';

export const registerNew: Register = (program, run) => {
  program
    .command('new')
    .description("create task ID's workspace: branch TYPE/ID from the base, a worktree, provisioned paths, setup")
    .argument('<type>', 'feat | fix | refactor | docs | chore')
    .argument('<id>', 'task ID: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')
    .option('--base <ref>', 'branch (or commit) to start from; default: the branch checked out in the main worktree')
    .option('--no-sync', 'do not fetch and fast-forward the base first')
    .option('--no-setup', 'do not run the setup commands')
    .action((type: string, id: string, opts: { base?: string; sync: boolean; setup: boolean }) =>
      run(async (env) => {
        // Hostile names are refused before anything is opened or created.
        validateTaskType(type);
        env.taskId = validateTaskId(id);
        const ctx = await env.project();
        const since = ctx.store.lastEventSeq();
        const task = await createTask(ctx, { type, id, sync: opts.sync, setup: opts.setup, ...(opts.base ? { base: opts.base } : {}) });
        // Warnings recorded while creating (e.g. hooks that will not run here) are shown, never only logged.
        const warnings = ctx.store.taskEvents(ctx.key, task.id, 200).filter((e) => e.seq > since && e.level !== 'info').map((e) => ({ kind: e.kind, level: e.level, message: e.message }));
        for (const w of warnings) env.log(`warren: ${w.level}: ${w.message}`);
        const data = { id: task.id, type: task.type, branch: task.branch, path: task.path, base: task.base, baseCommit: task.baseCommit, state: task.state, warnings };
        return {
          data,
          human: `${task.state === 'ready' ? 'ready' : task.state}: ${task.branch} at ${task.path} (from ${task.base} ${task.baseCommit.slice(0, 12)})`,
          exitCode: task.state === 'ready' ? 0 : 1,
        };
      }),
    );
};
