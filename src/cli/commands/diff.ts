import { WarrenError } from '../../errors.js';
import { diffTask, type DiffScope, type TaskDiff } from '../../review/diff.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';
import { terminalText } from '../../util/terminal-text.js';
import { table } from '../format.js';
import { paintPatch, paintStat } from '../highlight.js';

export const registerDiff: Register = (program, run) => {
  program
    .command('diff')
    .description(
      'everything the task changed against its base: its commits, uncommitted changes and untracked files (provisioned paths left out)',
    )
    .argument('<id>')
    .option('--stat', 'files and line counts only')
    .option('--committed', 'only what is committed on the branch')
    .option('--uncommitted', 'only what is not committed yet (against the branch tip)')
    .action((rawId: string, opts: { stat?: boolean; committed?: boolean; uncommitted?: boolean }) =>
      run(async (env) => {
        if (opts.committed && opts.uncommitted)
          throw new WarrenError('USAGE', 'give at most one of --committed and --uncommitted; nothing was read.');
        env.taskId = validateTaskId(rawId);
        const scope: DiffScope = opts.committed ? 'committed' : opts.uncommitted ? 'uncommitted' : 'all';
        const ctx = await env.project();
        // A task on another machine: its commits fetched and checked first, then its workspace there read.
        const diff = await diffTask(ctx, env.taskId, { scope, stat: opts.stat === true });
        // The patch is printed as a block (newlines and tabs kept): git quotes a file name with a
        // control character in its headers, and the printer shows every other control in it,
        // and in the changed lines, as an escape (a `\r` hiding the start of a line included).
        return {
          data: diff,
          human: opts.stat ? statText(diff) : (diff.patch ?? '').replace(/\n$/, ''),
          colour: opts.stat ? paintStat : paintPatch,
          paged: true,
        };
      }),
    );
};

const LETTER = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', 'type-changed': 'T' } as const;

const SCOPE_WORDS: Record<DiffScope, string> = {
  all: 'since it left {base}, uncommitted work included',
  committed: 'committed since it left {base}',
  uncommitted: 'not committed yet',
};

function statText(d: TaskDiff): string {
  const what = `${terminalText(d.branch)} ${SCOPE_WORDS[d.scope].replace('{base}', terminalText(d.base))}`;
  const summary = `${d.files.length} file(s) changed, +${d.added} -${d.deleted}: ${what}`;
  if (d.files.length === 0) return `no changes: ${what}`;
  const rows = d.files.map((f) => [
    LETTER[f.status],
    f.binary ? 'bin' : `+${f.added}`,
    f.binary ? '' : `-${f.deleted}`,
    f.from ? `${f.from} → ${f.path}` : f.path,
  ]);
  return `${table(['', 'ADDED', 'DELETED', 'PATH'], rows)}\n${summary}`;
}
