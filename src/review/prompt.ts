import type { Comment } from './comments.js';

/**
 * Pure: the prompt `run --review` (and the dashboard's Send to agent) gives the agent: each open
 * comment as `file:line`, what the reviewer said, and the part of the diff it was made on.
 */
export function reviewPrompt(comments: readonly Pick<Comment, 'path' | 'line' | 'side' | 'body' | 'hunk'>[]): string {
  const parts = [
    `A reviewer left ${comments.length} comment${comments.length === 1 ? '' : 's'} on your changes in this workspace. Address each one: change the code where it asks for a change. Line numbers are those of the files as they are now, unless a comment says it is about a removed line.`,
  ];
  comments.forEach((c, i) => {
    const fence = '`'.repeat(Math.max(3, longestBacktickRun(c.hunk) + 1));
    parts.push(
      [
        `${i + 1}. ${c.path}:${c.line}${c.side === 'old' ? ' (a removed line, numbered as in the base)' : ''}`,
        c.body,
        '',
        `${fence}diff`,
        c.hunk,
        fence,
      ].join('\n'),
    );
  });
  return `${parts.join('\n\n')}\n`;
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
}
