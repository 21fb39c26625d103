import type { CommandReference } from './shared.js';

/** The command reference for comment and comments: review comments on a task's diff (see src/cli/reference.ts). */
export const REVIEWING: Readonly<Record<string, CommandReference>> = {
  comment: {
    json: `{
  id: number;                     // the comment's number (\`comments --resolve N\`)
  taskId: string; path: string; line: number;
  side: 'new' | 'old';            // new: the line as the workspace has it; old (--old): a removed line, numbered as in the base
  body: string;
  hunk: string;                   // the part of the diff it was made on (the file's own lines for an unchanged one)
  state: 'open' | 'resolved'; createdAt: string; resolvedAt: string | null;
  sentRun: string | null;         // the agent run that last received it
}`,
    exit: [
      [0, 'recorded'],
      [1, 'its workspace resolves somewhere else'],
      [
        2,
        'bad input: no such task, not FILE:LINE, a path outside the workspace (or leaving it through a symlink), a line in neither the diff nor the file, an empty comment',
      ],
    ],
    errors: ['USAGE', 'TASK_NOT_FOUND', 'PATH_ESCAPE'],
    example: `$ warren comment cart cart.js:1 export a function that adds to it
comment 1 on cart.js:1 (open)
@@ -0,0 +1,1 @@
+export const cart = [];
[exit 0]
$ warren --json comment cart app.js:1 'say hello to the cart'
{
  "id": 2,
  "taskId": "cart",
  "path": "app.js",
  "line": 1,
  "side": "new",
  "body": "say hello to the cart",
  "hunk": "@@ -1,1 +1,1 @@ (unchanged)\\n console.log(\\"hello\\");",
  "state": "open",
  "createdAt": "2026-11-30T21:47:37.461Z",
  "resolvedAt": null,
  "sentRun": null
}
[exit 0]`,
    see: [['Reviewing a task', '../design/review.md']],
  },
  comments: {
    json: `// the task's comments, oldest first (after --resolve / --reopen)
{ id; taskId; path; line; side; body; hunk; state: 'open' | 'resolved'; createdAt; resolvedAt; sentRun }[]`,
    exit: [
      [0, 'listed (and changed)'],
      [2, "bad input: no such task, a comment number that is not the task's"],
    ],
    errors: ['USAGE', 'TASK_NOT_FOUND'],
    example: `$ warren comments cart
#  STATE  WHERE      COMMENT
1  open   cart.js:1  export a function that adds to it
2  open   app.js:1   say hello to the cart
[exit 0]
$ warren --json comments cart --resolve 2
[
  {
    "id": 1,
    "taskId": "cart",
    "path": "cart.js",
    "line": 1,
    "side": "new",
    "body": "export a function that adds to it",
    "hunk": "@@ -0,0 +1,1 @@\\n+export const cart = [];",
    "state": "open",
    "createdAt": "2026-11-30T21:47:36.126Z",
    "resolvedAt": null,
    "sentRun": null
  },
  {
    "id": 2,
    "taskId": "cart",
    "path": "app.js",
    "line": 1,
    "side": "new",
    "body": "say hello to the cart",
    "hunk": "@@ -1,1 +1,1 @@ (unchanged)\\n console.log(\\"hello\\");",
    "state": "resolved",
    "createdAt": "2026-11-30T21:47:37.461Z",
    "resolvedAt": "2026-11-30T21:47:38.692Z",
    "sentRun": null
  }
]
[exit 0]`,
    see: [['Reviewing a task', '../design/review.md']],
  },
};
