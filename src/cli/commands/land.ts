import { WarrenError } from '../../errors.js';
import type { PushOutcome } from '../../land/push.js';
import { landTask, queueLand } from '../../queue/operations.js';
import { terminalText } from '../../util/terminal-text.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';
import { landedView } from '../../views/changes.js';
import { startQueueWorker } from './queue.js';

export const registerLand: Register = (program, run) => {
  program
    .command('land')
    .description(
      "join the repository's merge queue and wait: the task is squashed onto the latest base, gated, and lands as one commit, protected paths left out",
    )
    .argument('<id>')
    .option(
      '-m, --message <msg>',
      "the landed commit's subject (default: the first checkpoint's message, else TYPE: ID); a Warren-Task: ID trailer is always added",
    )
    .option('--no-wait', 'join the queue and return at once (a background warren works it)')
    .option('--push [remote]', "push the landed base (default remote: the base branch's upstream remote, else origin)")
    .option('--branch-only', 'do not land: push the squashed task branch for review instead (no queue)')
    .option('--accept-hooks', 'go ahead although the git hooks changed since the task began')
    .action(
      (
        rawId: string,
        opts: { message?: string; wait: boolean; push?: string | true; branchOnly?: boolean; acceptHooks?: boolean },
      ) =>
        run(async (env) => {
          env.taskId = validateTaskId(rawId);
          const ctx = await env.project();
          const common = { ...(opts.message ? { message: opts.message } : {}), acceptHooks: opts.acceptHooks === true };
          const push = opts.push === undefined ? {} : { push: opts.push };
          if (opts.branchOnly) {
            const r = await landTask(ctx, rawId, { ...common, ...push, branchOnly: true });
            for (const w of r.warnings) env.log(`warren: warn: ${w}`);
            const lines = [`built ${r.commit.slice(0, 12)} for review; ${r.base} was not moved`];
            if (r.push) lines.push(pushLine(r.push));
            return { data: { state: 'built', ...r }, human: lines.join('\n'), exitCode: r.push && !r.push.ok ? 1 : 0 };
          }
          if (!opts.wait) {
            if (opts.push !== undefined) {
              throw new WarrenError(
                'USAGE',
                '--push needs the outcome: it cannot go with --no-wait; nothing was done.',
                {
                  hint: `Run \`warren land ${rawId} --push\` (it waits), or push yourself once it landed.`,
                },
              );
            }
            const r = await queueLand(ctx, rawId, { ...common, wait: false });
            if (r.state === 'queued') {
              startQueueWorker(ctx, env.io.self);
              return {
                data: r,
                human: `${r.id} joined the merge queue at position ${r.position}; see \`warren queue\``,
              };
            }
          }
          const r = await landTask(ctx, rawId, { ...common, ...push });
          for (const w of r.warnings) env.log(`warren: warn: ${w}`);
          for (const e of r.exclusions)
            env.log(`warren: left out ${e.why} ${terminalText(e.path)} (${e.how}); the workspace keeps its copy`);
          const lines = [
            `landed ${r.id} on ${r.base} as ${r.commit.slice(0, 12)}${r.rebased ? ` (rebased onto ${r.baseBefore.slice(0, 12)})` : ''}`,
          ];
          if (r.excluded.length > 0) lines.push(`excluded: ${r.excluded.map((p) => terminalText(p)).join(', ')}`);
          if (r.checkoutUpdated) lines.push(`${r.checkoutUpdated} follows ${r.base}`);
          if (r.push) lines.push(pushLine(r.push));
          return { data: landedView(r), human: lines.join('\n'), exitCode: r.push && !r.push.ok ? 1 : 0 };
        }),
    );
};

function pushLine(push: PushOutcome): string {
  return push.ok
    ? `pushed to ${push.remote} ${push.ref}`
    : `push to ${push.remote} ${push.ref} FAILED: ${push.error ?? ''}`;
}
