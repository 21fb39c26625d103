import type { Register } from '../command.js';
import { createTask } from '../../workspace/create.js';
import { createdSummary, type CreatedSummary } from '../../workspace/created.js';
import { parseSandboxKind } from '../../config/sandbox.js';
import { parseRunner } from '../../config/runner.js';
import { taskTypes, validateTaskId, validateTaskType } from '../../workspace/ids.js';

export const registerNew: Register = (program, run) => {
  program
    .command('new')
    .description("create task ID's workspace: branch TYPE/ID from the base, a worktree, provisioned paths, setup")
    .argument('<type>', "feat | fix | refactor | docs | chore, or warren.yaml's `types:`")
    .argument('<id>', 'task ID: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')
    .option('--base <ref>', 'branch (or commit) to start from; default: the branch checked out in the main worktree')
    .option('--no-sync', 'do not fetch and fast-forward the base first')
    .option('--no-setup', 'do not run the setup commands')
    .option('--sandbox <kind>', "this task's sandbox (none | bwrap | container), overriding warren.yaml")
    .option(
      '--runner <runner>',
      "where the task's processes run: ssh:NAME (a host of `hosts:` in $WARREN_HOME/config.yaml), k8s:NAME (a cluster of its `clusters:`) or local; default: warren.yaml's `runner:`",
    )
    .option('--require-sandbox', 'refuse a medium-or-higher risk task that would run without a sandbox')
    .action(
      (
        type: string,
        id: string,
        opts: {
          base?: string;
          sync: boolean;
          setup: boolean;
          sandbox?: string;
          runner?: string;
          requireSandbox?: boolean;
        },
      ) =>
        run(async (env) => {
          // Hostile names are refused before anything is opened or created.
          env.taskId = validateTaskId(id);
          const sandbox = opts.sandbox === undefined ? undefined : parseSandboxKind(opts.sandbox);
          const runner = opts.runner === undefined ? undefined : parseRunner(opts.runner);
          const ctx = await env.project();
          validateTaskType(type, taskTypes(ctx.config));
          const since = ctx.store.lastEventSeq();
          // Ctrl-C: finish the step under way, then undo what was made (a second ctrl-c ends
          // warren at once, and the next command repairs it).
          const interrupted = new AbortController();
          const onInterrupt = () => {
            env.log(
              `warren: interrupted: undoing what \`new ${id}\` made so far (ctrl-c again stops at once; the next warren command then undoes it)`,
            );
            interrupted.abort();
          };
          process.once('SIGINT', onInterrupt);
          const task = await createTask(ctx, {
            type,
            id,
            sync: opts.sync,
            setup: opts.setup,
            ...(opts.base ? { base: opts.base } : {}),
            ...(sandbox ? { sandbox } : {}),
            ...(runner ? { runner } : {}),
            ...(opts.requireSandbox ? { requireSandbox: true } : {}),
            signal: interrupted.signal,
          }).finally(() => process.removeListener('SIGINT', onInterrupt));
          // Warnings recorded while creating (e.g. hooks that will not run here) are shown, never only logged.
          const data = createdSummary(ctx, task, since);
          for (const w of data.warnings) env.log(`warren: ${w.level}: ${w.message}`);
          return {
            data,
            human: `${task.state === 'ready' ? 'ready' : task.state}: ${task.branch} at ${task.path} (from ${task.base} ${task.baseCommit.slice(0, 12)})${execLines(data)}`,
            exitCode: task.state === 'ready' ? 0 : 1,
          };
        }),
    );
};

/** Ports, risk, what the services made and the setup log, when the execution hooks recorded them on the task. */
function execLines(s: CreatedSummary): string {
  let human = '';
  if (s.ports) human += `\nports ${s.ports.first}-${s.ports.first + s.ports.count - 1}`;
  if (s.risk) {
    human += `\nrisk ${s.risk.level}; recommended sandbox ${s.risk.recommendedSandbox}${s.risk.reasons.length > 0 ? ` (${s.risk.reasons.join('; ')})` : ''}`;
  }
  for (const m of s.services) human += `\n${m.message}`;
  for (const k of s.setupSkipped ?? []) {
    human += `\nsetup ${k.id} skipped: ${k.why}`;
    if (k.ran) human += `\nsetup ${k.id} ran only ${k.ran.summary ?? `${k.ran.scripts.join(', ')}: ${k.ran.command}`}`;
  }
  if (s.log !== undefined) human += `\nsetup ${s.setupOk ? 'passed' : 'FAILED'}; log ${s.log}`;
  return human;
}
