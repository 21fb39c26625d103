import { WarrenError } from '../../errors.js';
import { newestConversation, readTranscript } from '../../run/transcript.js';
import { pairResults, type TranscriptItem } from '../../run/transcript-parse.js';
import { terminalText } from '../../util/terminal-text.js';
import { validateTaskId } from '../../workspace/ids.js';
import { requireTask } from '../../workspace/tasks.js';
import type { Register } from '../command.js';

/** A tool's result longer than this many lines is cut in the human output (`--json` has it whole). */
const RESULT_LINES = 12;

export const registerTranscript: Register = (program, run) => {
  program
    .command('transcript')
    .description(
      "the conversation of the task's newest agent run, read from its CLI's transcript: prompts, text, tool calls and results",
    )
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project({ lenientConfig: true });
        const task = requireTask(ctx, rawId);
        const conv = newestConversation(ctx.store, ctx.key, task.id);
        if (!conv)
          throw new WarrenError(
            'AGENT_NO_SESSION',
            `task ${task.id} has no run of claude, codex or gemini, whose conversations warren can read.`,
            {
              hint: `Start one with \`warren run ${task.id} --agent claude --prompt …\`; \`warren show ${task.id}\` lists its runs.`,
            },
          );
        const items = conv.file ? readTranscript(conv.agent, conv.file) : [];
        const head = `${conv.agent}${conv.session ? ` session ${conv.session}` : ''}, run ${conv.runId} (${conv.running ? 'running' : 'finished'})${conv.file ? `\n${conv.file}` : `: its CLI wrote no transcript${conv.running ? ' yet' : ''}`}`;
        return {
          data: { ...conv, items },
          human: [head, '', ...pairResults(items).map(itemText)].join('\n'),
        };
      }),
    );
};

/** One item as a person reads it: a prompt quoted, a tool call marked, its result indented. */
function itemText(item: TranscriptItem): string {
  if (item.kind === 'prompt' || item.kind === 'text')
    return item.kind === 'text'
      ? item.text
      : item.text
          .split('\n')
          .map((l) => `> ${l}`)
          .join('\n');
  // A tool call on one line, whatever its input holds; the rest is printed as a block (src/cli/main.ts).
  if (item.kind === 'tool') return `▸ ${terminalText(item.name)}  ${terminalText(item.input)}`;
  const lines = item.output === '' ? ['(no output)'] : item.output.split('\n');
  const shown = lines.slice(0, RESULT_LINES);
  if (lines.length > RESULT_LINES) shown.push(`… ${lines.length - RESULT_LINES} more line(s)`);
  return shown.map((l, i) => `    ${i === 0 && item.error ? '✗ ' : ''}${l}`).join('\n');
}
