import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/main.js';
import { checkExecArgv } from '../src/cli/exec-argv.js';
import { COMMANDS } from '../src/cli/commands/all.js';
import { completionSpec } from '../src/cli/completion.js';
import { typeProblems } from '../src/config/validate.js';
import { parseNameStatusRenamesZ, splitPatchByFile } from '../src/git/parse.js';
import { isGeneratedCheckpointSubject, landMessage } from '../src/land/plan.js';
import { parseFileLine, checkCommentPath } from '../src/review/comments.js';
import { contextAround, hunkAround, parseHunks } from '../src/review/hunks.js';
import { reviewPrompt } from '../src/review/prompt.js';
import type { WarrenEvent } from '../src/state/events.js';
import { lastRun } from '../src/web/run-events.js';
import { verifyOf } from '../src/web/fleet.js';

/** Pure parts of the daily loop (issue 16), on literal inputs. */

const PATCH = `diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,6 +1,7 @@
 one
-two
+TWO
+two and a half
 three
 four
 five
@@ -20,2 +21,3 @@ function f() {
 twenty
+added at the end
 twenty-one
\\ No newline at end of file
diff --git a/diff --git b/diff --git b
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/diff --git b
@@ -0,0 +1 @@
+diff --git inside content stays in its file
`;

describe('patches and hunks', () => {
  it('splits a patch per file, never on content that looks like a header', () => {
    const files = splitPatchByFile(PATCH);
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^diff --git a\/a.txt/);
    expect(files[1]).toContain('+diff --git inside content stays in its file\n');
    expect(files.join('')).toBe(PATCH);
    expect(splitPatchByFile('')).toEqual([]);
  });

  it('numbers every line on both sides', () => {
    const [first, second] = parseHunks(splitPatchByFile(PATCH)[0] ?? '');
    expect(first?.lines.map((l) => [l.kind, l.old, l.new])).toEqual([
      [' ', 1, 1],
      ['-', 2, null],
      ['+', null, 2],
      ['+', null, 3],
      [' ', 3, 4],
      [' ', 4, 5],
      [' ', 5, 6],
    ]);
    expect(second?.lines.at(-1)).toEqual({ kind: '\\', text: '\\ No newline at end of file', old: null, new: null });
  });

  it('cuts the hunk around a line, on either side, with a header for what it shows', () => {
    const file = splitPatchByFile(PATCH)[0] ?? '';
    expect(hunkAround(file, 3, 'new', 1)).toBe('@@ -3,1 +2,3 @@\n+TWO\n+two and a half\n three');
    expect(hunkAround(file, 2, 'old', 1)).toBe('@@ -1,2 +1,2 @@\n one\n-two\n+TWO');
    expect(hunkAround(file, 22, 'new')).toBe(
      '@@ -20,2 +21,3 @@\n twenty\n+added at the end\n twenty-one\n\\ No newline at end of file',
    );
    expect(hunkAround(file, 12, 'new')).toBeNull();
    const added = splitPatchByFile(PATCH)[1] ?? '';
    expect(hunkAround(added, 1, 'new')).toBe('@@ -0,0 +1,1 @@\n+diff --git inside content stays in its file');
  });

  it('shows an unchanged line with the file around it', () => {
    expect(contextAround('a\nb\nc\nd\ne\n', 2, 1)).toBe('@@ -1,3 +1,3 @@ (unchanged)\n a\n b\n c');
    expect(contextAround('a\n', 5)).toBeNull();
  });

  it('reads name-status with renames and copies', () => {
    expect(parseNameStatusRenamesZ('M\0a.txt\0R087\0old name\0new\nname\0A\0b\0C100\0x\0y\0')).toEqual([
      { status: 'M', path: 'a.txt', from: null },
      { status: 'R', path: 'new\nname', from: 'old name' },
      { status: 'A', path: 'b', from: null },
      { status: 'C', path: 'y', from: 'x' },
    ]);
  });
});

describe('review comments', () => {
  it('reads FILE:LINE with the last colon, and refuses paths outside the workspace', () => {
    expect(parseFileLine('src/a:b.ts:12')).toEqual({ path: 'src/a:b.ts', line: 12 });
    for (const bad of ['a.ts', 'a.ts:', 'a.ts:0', 'a.ts:-1', ':3', 'a.ts:1.5', 'a.ts:x'])
      expect(() => parseFileLine(bad)).toThrow(/is not FILE:LINE/);
    expect(checkCommentPath('./src/a.ts')).toBe('src/a.ts');
    for (const bad of ['/etc/passwd', '../x', 'a/../../x', '', 'a\0b'])
      expect(() => checkCommentPath(bad)).toThrow(/not a path inside the workspace/);
  });

  it('builds the prompt from each comment: file:line, the comment, the hunk, in a fence longer than any backticks inside', () => {
    const prompt = reviewPrompt([
      { path: 'a.txt', line: 3, side: 'new', body: 'Why two lines?', hunk: '@@ -2,1 +2,2 @@\n+TWO\n+two and a half' },
      { path: 'b.md', line: 7, side: 'old', body: 'Keep this.', hunk: '@@ -7,1 +6,0 @@\n-```js' },
    ]);
    expect(prompt).toBe(
      [
        'A reviewer left 2 comments on your changes in this workspace. Address each one: change the code where it asks for a change. Line numbers are those of the files as they are now, unless a comment says it is about a removed line.',
        '',
        '1. a.txt:3\nWhy two lines?\n\n```diff\n@@ -2,1 +2,2 @@\n+TWO\n+two and a half\n```',
        '',
        '2. b.md:7 (a removed line, numbered as in the base)\nKeep this.\n\n````diff\n@@ -7,1 +6,0 @@\n-```js\n````',
        '',
      ].join('\n'),
    );
  });
});

describe('the landed commit message', () => {
  const task = { id: 'T-1', type: 'feat', branch: 'feat/T-1' };
  const trailer = 'Warren-Task: T-1\n';
  it('takes its subject from -m, else the first checkpoint warren did not title, else TYPE: ID; the trailer always ends it', () => {
    expect(landMessage(task, ['add the cart', 'fix a typo'], [], 'Cart for the shop\n\nWith a body.')).toBe(
      `Cart for the shop\n\nWith a body.\n\nSquashed from feat/T-1 (2 commits):\n- add the cart\n- fix a typo\n\n${trailer}`,
    );
    expect(landMessage(task, ['add the cart', 'fix a typo'], []).split('\n')[0]).toBe('add the cart');
    expect(landMessage(task, ['checkpoint: T-1 2026-11-30T19:12:18.123Z', 'name the cart'], []).split('\n')[0]).toBe(
      'name the cart',
    );
    expect(landMessage(task, ['checkpoint: T-1 2026-11-30T19:12:18.123Z'], [])).toMatch(
      /^feat: T-1\n[\s\S]*\nWarren-Task: T-1\n$/,
    );
    expect(landMessage(task, [], [{ path: '.env', how: 'created', why: 'protected' }], '  ')).toBe(
      `feat: T-1\n\nSquashed from feat/T-1 (0 commits):\n\nLeft out (they never land):\n- .env (protected, created)\n\n${trailer}`,
    );
    expect(isGeneratedCheckpointSubject('checkpoint: T-1 2026-11-30T19:12:18.123Z', 'T-1')).toBe(true);
    expect(isGeneratedCheckpointSubject('checkpoint: T-1 the login form', 'T-1')).toBe(false);
  });
});

describe('task types', () => {
  it('refuses duplicates and names git refuses in a branch', () => {
    expect(typeProblems(['feat', 'spike', 'ops/infra'])).toEqual([]);
    expect(typeProblems(['feat', 'feat'])).toEqual(['types[1]: "feat" is listed twice']);
    expect(typeProblems(['a..b'])[0]).toMatch(/would make branch names git refuses/);
    expect(typeProblems(['x.lock'])[0]).toMatch(/would make branch names git refuses/);
    expect(typeProblems(['ops/'])[0]).toMatch(/would make branch names git refuses/);
  });
});

describe('exec without --', () => {
  it.each([
    [['exec', 'T-1', 'ls'], null],
    [['exec', 'T-1', '--', 'ls', '-la'], null],
    [['exec', '--timeout', '5s', 'T-1', 'make'], null],
    [['exec', 'T-1', '--timeout', '5s', 'sleep', '1'], null],
    [['--json', '--repo', '/r', 'exec', 'T-1', 'ls', '--', '-la'], null],
    [['list', '--json'], null],
    [['exec', 'T-1', 'ls', '-la'], 'warren exec T-1 -- ls -la'],
    [
      ['--repo', '/r', 'exec', 'T-1', '--timeout', '5s', 'npm', 'test', '--watch'],
      'warren exec T-1 --timeout 5s -- npm test --watch',
    ],
    [['exec', 'T-1', 'sleep', '10', '--timeout', '1s'], 'warren exec T-1 -- sleep 10 --timeout 1s'],
  ])('%j → hint %j', (argv, hint) => {
    if (hint === null) {
      expect(() => checkExecArgv(argv)).not.toThrow();
      return;
    }
    try {
      checkExecArgv(argv);
      expect.unreachable();
    } catch (err) {
      expect((err as { code: string }).code).toBe('USAGE');
      expect((err as { hint: string }).hint).toContain(`Put the command after \`--\`: ${hint} (`);
    }
  });
});

describe('completion', () => {
  it('knows every command, its options and what each argument completes to', () => {
    const spec = completionSpec(buildProgram(COMMANDS, async () => undefined));
    const byName = new Map(spec.commands.map((c) => [c.name, c]));
    expect(byName.get('new')?.args).toEqual(['type', 'none']);
    expect(byName.get('show')?.args).toEqual(['id']);
    expect(byName.get('restore')?.args).toEqual(['archived']);
    expect(byName.get('completion')?.args).toEqual(['shell']);
    expect(byName.get('rm')?.flags).toEqual(expect.arrayContaining(['--discard', '--delete-branch']));
    expect(byName.get('exec')?.valueFlags).toEqual(['--timeout']);
    expect(byName.get('queue')?.subs).toContain('rm');
    expect(byName.get('queue rm')?.args).toEqual(['id']);
    expect(byName.has('__complete')).toBe(false);
    expect(spec.global.valueFlags).toEqual(['--repo']);
  });
});

describe('the fleet tells the truth', () => {
  let seq = 0;
  const ev = (kind: string, data: Record<string, unknown>): WarrenEvent =>
    ({
      seq: ++seq,
      at: `2026-11-30T10:00:${String(seq).padStart(2, '0')}Z`,
      project: 'p',
      taskId: 'T',
      level: 'info',
      message: kind,
      kind,
      data,
    }) as WarrenEvent;
  const run = (runId: string, kind: string, exitCode: number) => [
    ev('run.started', { runId, kind, log: '/l', command: ['sh', '-c', runId] }),
    ev('run.ended', { runId, kind, exitCode, signal: null, timedOut: false, durationMs: 5, log: '/l', survivors: [] }),
  ];
  const results = [
    { id: 'unit', exitCode: 1, timedOut: false, required: true, durationMs: 5, reason: null },
    { id: 'lint', exitCode: 0, timedOut: false, required: false, durationMs: 5, reason: null },
  ];

  it('shows a verify whose last command passed after a required one failed as failed', () => {
    const events = [...run('a', 'verify', 1), ...run('b', 'verify', 0), ev('verify.failed', { log: '/l', results })];
    expect(lastRun(events)).toMatchObject({
      kind: 'verify',
      exitCode: 0,
      outcome: { kind: 'verify', passed: false, failed: ['unit'] },
    });
    expect(lastRun([...run('c', 'exec', 0)])?.outcome).toBeUndefined();
    expect(verifyOf({ data: { verify: { at: 'x', passed: false, log: '/l', results } } })).toEqual({
      at: 'x',
      passed: false,
      failed: [{ id: 'unit', required: true }],
    });
    expect(verifyOf({ data: {} })).toBeNull();
  });
});
