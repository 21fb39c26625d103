import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reviewPrompt } from '../../src/review/prompt.js';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

interface DiffJson {
  scope: string;
  from: string;
  to: string;
  files: {
    path: string;
    from: string | null;
    status: string;
    added: number | null;
    deleted: number | null;
    binary: boolean;
  }[];
  added: number;
  deleted: number;
  patch?: string;
}
interface CommentJson {
  id: number;
  path: string;
  line: number;
  side: 'new' | 'old';
  body: string;
  hunk: string;
  state: string;
  sentRun: string | null;
}
interface Err {
  error: { code: string; message: string; hint?: string };
}

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(res.code, res.stderr).toBe(0);
  return res.json.path;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

const lines = (n: number, word = 'line') => Array.from({ length: n }, (_, i) => `${word} ${i + 1}\n`).join('');

describe('warren diff', () => {
  it('shows committed, uncommitted and untracked work against the base, leaving provisioned paths out, without touching the index', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'big.txt': lines(40),
        'gone.txt': 'bye\n',
        '.gitignore': 'node_modules/\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: copy }\n',
      },
    });
    fs.mkdirSync(path.join(repo.root, 'node_modules/dep'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, 'node_modules/dep/index.js'), 'x\n');
    const ws = await newTask(repo, 'V-1');
    // Committed: a rename (same content) and a deletion.
    git(ws, 'mv', 'big.txt', 'moved.txt');
    git(ws, 'rm', '-q', 'gone.txt');
    git(ws, 'commit', '-q', '-m', 'move and delete');
    // Uncommitted: a change to the renamed file (staged), a binary, an untracked file with a space; and a change in a provisioned path.
    fs.writeFileSync(path.join(ws, 'moved.txt'), lines(40).replace('line 20\n', 'line twenty\n'));
    git(ws, 'add', 'moved.txt');
    fs.writeFileSync(path.join(ws, 'pic.bin'), Buffer.from([0, 159, 146, 150, 0]));
    fs.writeFileSync(path.join(ws, 'my notes.md'), 'a\nb\n');
    fs.writeFileSync(path.join(ws, 'node_modules/dep/index.js'), 'patched\n');
    const indexBefore = fs.readFileSync(git(ws, 'rev-parse', '--git-path', 'index').trim());
    const statusBefore = git(ws, 'status', '--porcelain');

    const all = await repo.warrenJson<DiffJson>('diff', 'V-1');
    expect(all.code, all.stderr).toBe(0);
    expect(all.json.scope).toBe('all');
    expect(all.json.files).toEqual([
      { path: 'gone.txt', from: null, status: 'deleted', added: 0, deleted: 1, binary: false },
      { path: 'moved.txt', from: 'big.txt', status: 'renamed', added: 1, deleted: 1, binary: false },
      { path: 'my notes.md', from: null, status: 'added', added: 2, deleted: 0, binary: false },
      { path: 'pic.bin', from: null, status: 'added', added: null, deleted: null, binary: true },
    ]);
    expect(all.json.patch).toContain('rename from big.txt\nrename to moved.txt\n');
    expect(all.json.patch).toContain('-line 20\n+line twenty\n');
    expect(all.json.patch).toContain('Binary files /dev/null and b/pic.bin differ');
    expect(all.json.patch).not.toContain('node_modules');
    expect(all.json.from).toBe(repo.git('rev-parse', 'main'));

    const committed = await repo.warrenJson<DiffJson>('diff', 'V-1', '--committed', '--stat');
    expect(committed.json.files.map((f) => `${f.status} ${f.path}`)).toEqual(['deleted gone.txt', 'renamed moved.txt']);
    expect(committed.json.to).toBe(git(ws, 'rev-parse', 'HEAD').trim());
    expect(committed.json.patch).toBeUndefined();

    const uncommitted = await repo.warrenJson<DiffJson>('diff', 'V-1', '--uncommitted');
    expect(uncommitted.json.files.map((f) => `${f.status} ${f.path}`)).toEqual([
      'modified moved.txt',
      'added my notes.md',
      'added pic.bin',
    ]);
    expect(uncommitted.json.from).toBe(git(ws, 'rev-parse', 'HEAD').trim());

    // The human forms: the patch as git prints it, or a table.
    const human = await repo.warren('diff', 'V-1');
    expect(human.stdout).toBe(`${all.json.patch}`);
    const stat = await repo.warren('diff', 'V-1', '--stat');
    expect(stat.stdout).toContain('R  +1     -1       big.txt → moved.txt');
    expect(stat.stdout).toContain('4 file(s) changed, +3 -2: feat/V-1 since it left main, uncommitted work included');

    // Read-only: the workspace's index and status are as they were.
    expect(fs.readFileSync(git(ws, 'rev-parse', '--git-path', 'index').trim()).equals(indexBefore)).toBe(true);
    expect(git(ws, 'status', '--porcelain')).toBe(statusBefore);

    const both = await repo.warrenJson<Err>('diff', 'V-1', '--committed', '--uncommitted');
    expect(both.code).toBe(2);
    const missing = await repo.warrenJson<Err>('diff', 'nope');
    expect(missing.json.error.code).toBe('TASK_NOT_FOUND');
  });

  it('says there is nothing when the task changed nothing', async () => {
    const repo = makeRepo();
    await newTask(repo, 'V-2');
    const r = await repo.warrenJson<DiffJson>('diff', 'V-2');
    expect(r.json.files).toEqual([]);
    expect((await repo.warren('diff', 'V-2')).stdout).toBe('');
    expect((await repo.warren('diff', 'V-2', '--stat')).stdout).toBe(
      'no changes: feat/V-2 since it left main, uncommitted work included\n',
    );
  });
});

describe('review comments and run --review', () => {
  it('refuses a FILE that leaves the workspace through a symlink, quoting nothing of it and recording nothing', async () => {
    const outside = tmpDir('warren-outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'root:SECRET:19000:0:99999:7:::\n');
    const repo = makeRepo({ files: { 'src/app.js': lines(10) } });
    const ws = await newTask(repo, 'C-2');
    // What an agent can plant in its workspace: links out, at any component.
    fs.symlinkSync('/etc', path.join(ws, 'etc'));
    fs.symlinkSync(outside, path.join(ws, 'out'));
    fs.mkdirSync(path.join(ws, 'deep'));
    fs.symlinkSync(outside, path.join(ws, 'deep', 'er'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'secret-link'));
    fs.symlinkSync(Array(40).fill('..').join('/'), path.join(ws, 'src', 'up'));
    fs.symlinkSync(path.join(outside, 'missing'), path.join(ws, 'dangling'));
    for (const [fileLine, link] of [
      ['etc/passwd:1', 'etc'],
      ['out/secret.txt:1', 'out'],
      ['./out/secret.txt:1', 'out'],
      ['deep/er/secret.txt:1', 'deep/er'],
      ['secret-link:1', 'secret-link'],
      [`src/up/${path.relative('/', outside)}/secret.txt:1`, 'src/up'],
      ['dangling/x:1', 'dangling'],
    ] as const) {
      const refused = await repo.warrenJson<Err>('comment', 'C-2', fileLine, 'what is this?');
      expect(refused.code, fileLine).toBe(2);
      expect(refused.json.error.code).toBe('USAGE');
      expect(refused.json.error.message).toContain(`leaves the task's workspace: ${link} is a symlink`);
      expect(refused.json.error.message).toContain('nothing was recorded');
      expect(refused.stdout + refused.stderr).not.toContain('SECRET');
      const removed = await repo.warrenJson<Err>('comment', 'C-2', fileLine, '--old', 'and this?');
      expect(removed.code, `${fileLine} --old`).toBe(2);
    }
    expect((await repo.warrenJson<CommentJson[]>('comments', 'C-2')).json).toEqual([]);
    // A link that stays inside the workspace is followed.
    fs.symlinkSync('src', path.join(ws, 'code'));
    const inside = await repo.warrenJson<CommentJson>('comment', 'C-2', 'code/app.js:3', 'fine');
    expect(inside.code, inside.stderr).toBe(0);
    expect(inside.json.hunk).toContain('line 3');
  });

  it('records comments with their hunks, sends the open ones to the agent as its prompt, and resolves them when it exits 0', async () => {
    const out = tmpDir('warren-agent-');
    const recorded = path.join(out, 'prompt.txt');
    const repo = makeRepo({
      files: {
        'src/app.js': lines(30),
        // A stand-in agent that records its prompt and exits with the code in exit.txt (default 0).
        'warren.yaml': `agents:\n  recorder: { command: [sh, -c, 'cat > "$0"; exit $(cat "$1" 2>/dev/null || echo 0)', ${JSON.stringify(recorded)}, ${JSON.stringify(path.join(out, 'exit.txt'))}], prompt: stdin }\n`,
      },
    });
    const ws = await newTask(repo, 'C-1');
    fs.writeFileSync(path.join(ws, 'src/app.js'), lines(30).replace('line 5\n', 'line five\n'));
    fs.writeFileSync(path.join(ws, 'new.md'), 'one\ntwo\n');

    const none = await repo.warrenJson<Err>('run', 'C-1', '--agent', 'recorder', '--review');
    expect(none.code).toBe(1);
    expect(none.json.error.code).toBe('NOTHING_TO_REVIEW');

    const first = await repo.warrenJson<CommentJson>(
      'comment',
      'C-1',
      'src/app.js:5',
      'spell',
      'it',
      'as',
      'a',
      'number',
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({
      path: 'src/app.js',
      line: 5,
      side: 'new',
      body: 'spell it as a number',
      state: 'open',
    });
    expect(first.json.hunk).toBe(
      '@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8',
    );
    const removed = await repo.warrenJson<CommentJson>('comment', 'C-1', 'src/app.js:5', '--old', 'keep the old one?');
    expect(removed.json).toMatchObject({ side: 'old', line: 5 });
    expect(removed.json.hunk).toBe(first.json.hunk);
    // A line the diff does not touch: the file's own lines around it.
    const unchanged = await repo.warrenJson<CommentJson>('comment', 'C-1', 'src/app.js:20', 'this one too');
    expect(unchanged.json.hunk).toBe(
      '@@ -17,7 +17,7 @@ (unchanged)\n line 17\n line 18\n line 19\n line 20\n line 21\n line 22\n line 23',
    );
    const added = await repo.warrenJson<CommentJson>('comment', 'C-1', 'new.md:2', 'why?');
    expect(added.json.hunk).toBe('@@ -0,0 +1,2 @@\n+one\n+two');
    for (const bad of [
      ['nope.txt:1', 'x'],
      ['src/app.js:99', 'x'],
      ['../etc/passwd:1', 'x'],
      ['src/app.js', 'x'],
    ]) {
      const refused = await repo.warrenJson<Err>('comment', 'C-1', ...(bad as [string, string]));
      expect(refused.code, bad.join(' ')).toBe(2);
      expect(refused.json.error.code).toBe('USAGE');
    }

    // Resolve one; the listing shows both states; --open only the open ones.
    expect((await repo.warren('comments', 'C-1', '--resolve', String(unchanged.json.id))).code).toBe(0);
    const listed = await repo.warrenJson<CommentJson[]>('comments', 'C-1');
    expect(listed.json.map((c) => c.state)).toEqual(['open', 'open', 'resolved', 'open']);
    const open = (await repo.warrenJson<CommentJson[]>('comments', 'C-1', '--open')).json;
    expect(open.map((c) => c.id)).toEqual([first.json.id, removed.json.id, added.json.id]);
    expect((await repo.warren('comments', 'C-1')).stdout).toContain('src/app.js:5 (removed)');
    expect((await repo.warrenJson<Err>('comments', 'C-1', '--resolve', '999')).json.error.code).toBe('USAGE');

    // A failing agent: it got exactly the open comments; they stay open.
    fs.writeFileSync(path.join(out, 'exit.txt'), '3');
    const failed = await repo.warrenJson<{ exitCode: number; comments: { id: number; state: string }[] }>(
      'run',
      'C-1',
      '--agent',
      'recorder',
      '--review',
    );
    expect(failed.code).toBe(3);
    expect(fs.readFileSync(recorded, 'utf8')).toBe(reviewPrompt(open));
    expect(failed.json.comments.map((c) => c.state)).toEqual(['open', 'open', 'open']);

    // A passing one: resolved, with the run that got them.
    fs.writeFileSync(path.join(out, 'exit.txt'), '0');
    const passed = await repo.warrenJson<{
      exitCode: number;
      runId: string;
      comments: { id: number; state: string }[];
    }>('run', 'C-1', '--agent', 'recorder', '--review');
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.json.comments.map((c) => c.state)).toEqual(['resolved', 'resolved', 'resolved']);
    const after = (await repo.warrenJson<CommentJson[]>('comments', 'C-1')).json;
    expect(after.every((c) => c.state === 'resolved')).toBe(true);
    expect(after.filter((c) => c.sentRun === passed.json.runId)).toHaveLength(3);
    expect((await repo.warrenJson<Err>('run', 'C-1', '--agent', 'recorder', '--review', '--prompt', 'x')).code).toBe(2);

    // The ID used again after rm starts with no comments.
    expect((await repo.warren('rm', 'C-1', '--discard')).code).toBe(0);
    await newTask(repo, 'C-1');
    expect((await repo.warrenJson<CommentJson[]>('comments', 'C-1')).json).toEqual([]);
  });
});
