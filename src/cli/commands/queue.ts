import { leaveQueue, listQueue, workQueue, type QueueListing } from '../../queue/operations.js';
import { spawnDetached } from '../../system/spawn.js';
import type { ProjectContext } from '../../workspace/context.js';
import type { Register } from '../command.js';
import { terminalText } from '../../util/terminal-text.js';
import { age, firstLine, table } from '../format.js';

/** A background `warren queue work` for this repository, when nobody works its queue. */
export function startQueueWorker(ctx: ProjectContext, self: readonly string[]): void {
  spawnDetached([...self, '--repo', ctx.repo.root, 'queue', 'work'], { cwd: ctx.repo.root });
}

export const registerQueue: Register = (program, run) => {
  const queue = program
    .command('queue')
    .description(
      "the repository's merge queue: every entry's position, state (queued, testing, landed, bounced) and since when",
    )
    .action(() =>
      run(async (env) => {
        const ctx = await env.project();
        const listing = listQueue(ctx);
        // Waiting entries and nobody working the queue (its warren was killed): resume it in the background.
        const waiting = listing.entries.some((e) => e.state === 'queued' || e.state === 'testing');
        if (waiting && listing.processor === null) {
          startQueueWorker(ctx, env.io.self);
          env.log('warren: nobody was working the merge queue; started a background warren to resume it');
        }
        const human = listing.entries.length === 0 ? 'the merge queue is empty' : queueTable(listing.entries);
        return { data: listing.entries, human };
      }),
    );
  queue
    .command('rm')
    .description('leave the merge queue (not while the queue is testing the task)')
    .argument('<id>')
    .action((id: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const r = leaveQueue(ctx, id);
        return { data: r, human: `${r.id} left the merge queue` };
      }),
    );
  queue
    .command('work', { hidden: true })
    .description('work the merge queue until it is empty (what `land --no-wait` starts in the background)')
    .action(() =>
      run(async (env) => {
        const ctx = await env.project();
        const worked = await workQueue(ctx);
        return {
          data: { worked },
          human: worked ? 'the merge queue is empty' : 'another warren works the merge queue',
        };
      }),
    );
  queue.commands.forEach((cmd) => cmd.exitOverride().configureOutput(program.configureOutput()));
};

/** How much of a bounce's reason fits its row. */
const REASON_WIDTH = 100;

/**
 * `warren queue` for people: one row per entry, whatever its reason holds (a stack trace, a
 * gate's output), cut to its first line with a pointer to the rest; below the table, where each
 * bounced entry's gate log is. `--json` carries every reason whole. Pure.
 */
export function queueTable(entries: QueueListing['entries'], now = Date.now()): string {
  const rows = entries.map((e) => [
    e.position === null ? '-' : String(e.position),
    e.id,
    e.state,
    `${age(e.since, now)} ago`,
    e.state === 'landed'
      ? (e.commit ?? '').slice(0, 12)
      : e.state === 'bounced'
        ? bounceCell(e)
        : e.onTopOf
          ? `ahead: on top of ${e.onTopOf.join(' + ')}`
          : '',
  ]);
  const logs = entries
    .filter((e) => e.state === 'bounced' && e.log)
    .map((e) => `${e.id}: the gate's log is ${terminalText(e.log ?? '')}`);
  return [table(['POS', 'ID', 'STATE', 'SINCE', 'DETAIL'], rows), ...(logs.length > 0 ? ['', ...logs] : [])].join('\n');
}

function bounceCell(e: QueueListing['entries'][number]): string {
  const { line, cut } = firstLine(`${e.code ?? ''}: ${e.reason ?? ''}`, REASON_WIDTH);
  return cut ? `${line} [more: warren show ${e.id}]` : line;
}
