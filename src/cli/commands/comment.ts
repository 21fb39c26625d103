import { WarrenError } from '../../errors.js';
import { addComment, listComments, parseFileLine, setCommentState, type Comment } from '../../review/comments.js';
import { terminalText } from '../../util/terminal-text.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';
import { table } from '../format.js';

export const registerComment: Register = (program, run) => {
  program
    .command('comment')
    .description(
      "comment on a line of the task's diff, for the agent to address (`warren run ID --agent NAME --review`)",
    )
    .argument('<id>')
    .argument('<file:line>', 'a file of the workspace and a line of it as it is now')
    .argument('<text...>', 'the comment')
    .option('--old', 'LINE is a removed line, numbered as in the base')
    .action((rawId: string, fileLine: string, words: string[], opts: { old?: boolean }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const { path, line } = parseFileLine(fileLine);
        const ctx = await env.project();
        const comment = await addComment(ctx, rawId, {
          path,
          line,
          side: opts.old ? 'old' : 'new',
          body: words.join(' '),
        });
        return { data: comment, human: `comment ${comment.id} on ${where(comment)} (open)\n${comment.hunk}` };
      }),
    );
};

export const registerComments: Register = (program, run) => {
  program
    .command('comments')
    .description("the task's review comments, open and resolved; --resolve and --reopen change them")
    .argument('<id>')
    .option('--open', 'only the open ones')
    .option('--resolve <n...>', 'mark these comments resolved')
    .option('--reopen <n...>', 'mark these comments open again')
    .action((rawId: string, opts: { open?: boolean; resolve?: string[]; reopen?: string[] }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        if (opts.resolve) setCommentState(ctx, rawId, numbers(opts.resolve), 'resolved');
        if (opts.reopen) setCommentState(ctx, rawId, numbers(opts.reopen), 'open');
        const comments = listComments(ctx, rawId, { open: opts.open === true });
        const human =
          comments.length === 0
            ? `no ${opts.open ? 'open ' : ''}comments; add one with \`warren comment ${rawId} FILE:LINE TEXT\``
            : table(
                ['#', 'STATE', 'WHERE', 'COMMENT'],
                comments.map((c) => [String(c.id), c.state, where(c), c.body.split('\n')[0] ?? '']),
              );
        return { data: comments, human };
      }),
    );
};

function where(c: Comment): string {
  return `${terminalText(c.path)}:${c.line}${c.side === 'old' ? ' (removed)' : ''}`;
}

function numbers(values: readonly string[]): number[] {
  return values.map((v) => {
    if (!/^\d+$/.test(v))
      throw new WarrenError('USAGE', `comment number ${JSON.stringify(v)} is not a number; nothing was changed.`, {
        hint: 'See `warren comments ID` for the numbers.',
      });
    return Number(v);
  });
}
