import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/land.js';
import { gitIn, makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * A workspace git cannot act on as the task's worktree is refused with a message that names its
 * state and a hint that keeps the work (issue 12 §6), and nothing is changed. Each state is
 * tried on `rm`, `land` and `checkpoint`.
 */

interface Refusal {
  error: { code: string; message: string; hint: string; details?: Record<string, unknown> };
}

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', 'feat', id, '--no-sync');
  expect(res.code, res.stdout).toBe(0);
  return res.json.path;
}

function commitIn(ws: string, file: string, content: string, message: string): string {
  fs.writeFileSync(path.join(ws, file), content);
  gitIn(ws, 'add', '-A');
  gitIn(ws, 'commit', '-q', '-m', message);
  return gitIn(ws, 'rev-parse', 'HEAD');
}

/** Runs each command on the task and returns the refusals, asserting that none changed anything (refs, worktrees, indexes, files). */
async function refusals(
  repo: TestRepo,
  id: string,
  ws: string,
  options: { files?: boolean; commands?: string[][] } = {},
): Promise<Refusal['error'][]> {
  const files = options.files ?? true;
  const before = files ? snapshot(repo, ws) : snapshot(repo);
  const out: Refusal['error'][] = [];
  for (const command of options.commands ?? [
    ['rm', id],
    ['rm', id, '--delete-branch'],
    ['land', id],
    ['checkpoint', id],
  ]) {
    const res = await repo.warrenJson<Refusal>(...command);
    expect(res.code, `${command.join(' ')}: ${res.stdout}`).toBe(1);
    out.push(res.json.error);
  }
  expect(files ? snapshot(repo, ws) : snapshot(repo)).toBe(before);
  expect((await repo.warrenJson<{ state: string }>('show', id)).json.state).toBe('ready');
  return out;
}

describe('hints that keep the work', () => {
  it('a detached HEAD with a commit only there: names the commit and says how to put a branch on it', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'D-1');
    gitIn(ws, 'switch', '-q', '--detach');
    const only = commitIn(ws, 'lost.txt', 'precious', 'only here');
    for (const error of await refusals(repo, 'D-1', ws)) {
      expect(error.code).toBe('TASK_STATE');
      expect(error.message).toContain(
        `detached HEAD at ${only.slice(0, 12)} with 1 commit(s) on no branch or tag: ${only.slice(0, 12)} only here`,
      );
      expect(error.message).not.toMatch(/records disagree/);
      expect(error.hint).toContain(`git -C ${ws} branch warren-save-D-1 HEAD`);
      expect(error.hint).not.toMatch(/remove it by hand/);
    }
    // Following the hint keeps the commit and makes the task workable again.
    gitIn(ws, 'branch', 'warren-save-D-1', 'HEAD');
    gitIn(ws, 'switch', '-q', 'feat/D-1');
    gitIn(ws, 'merge', '-q', '--ff-only', 'warren-save-D-1');
    expect((await repo.warrenJson('land', 'D-1')).code).toBe(0);
    expect(repo.git('show', 'main:lost.txt')).toBe('precious');
  });

  it('a detached HEAD whose commits are all on a branch: says so, and how to switch back', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'D-2');
    gitIn(ws, 'switch', '-q', '--detach');
    for (const error of await refusals(repo, 'D-2', ws, {
      commands: [
        ['rm', 'D-2'],
        ['land', 'D-2'],
      ],
    })) {
      expect(error.code).toBe('TASK_STATE');
      expect(error.message).toMatch(
        /detached HEAD at [0-9a-f]{12}, not branch feat\/D-2 \(every commit there is also on a branch or tag\)/,
      );
      expect(error.hint).toContain(`git -C ${ws} switch feat/D-2`);
    }
  });

  it('a rebase in progress: named as a rebase of the branch, with how to continue or abort it', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'R-1');
    commitIn(ws, 'f.txt', 'one', 'one');
    commitIn(ws, 'f.txt', 'two', 'two');
    // Stop the rebase at its first commit ("edit"), as an agent's interactive rebase would be.
    gitIn(ws, '-c', 'sequence.editor=sed -i 1s/^pick/edit/', 'rebase', '-q', '-i', 'HEAD~1');
    expect(fs.existsSync(path.join(repo.root, '.git', 'worktrees', 'R-1', 'rebase-merge'))).toBe(true);
    for (const error of await refusals(repo, 'R-1', ws)) {
      expect(error.code).toBe('TASK_STATE');
      expect(error.message).toContain(`a rebase of feat/R-1 is in progress in task R-1's workspace ${ws}`);
      expect(error.message).not.toMatch(/records disagree|detached HEAD/);
      expect(error.hint).toContain(`git -C ${ws} rebase --continue`);
      expect(error.hint).toContain('rebase --abort');
    }
  });

  it('a merge in progress: rm and land refuse, checkpoint concludes it with its commit', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'M-1');
    commitIn(ws, 'f.txt', 'task', 'task side');
    repo.write('f.txt', 'base');
    repo.commit('base side');
    expect(() => gitIn(ws, 'merge', '-q', 'main')).toThrow(); // a conflict stops it
    fs.writeFileSync(path.join(ws, 'f.txt'), 'resolved');
    gitIn(ws, 'add', 'f.txt');
    for (const command of [
      ['rm', 'M-1'],
      ['land', 'M-1'],
    ]) {
      const res = await repo.warrenJson<Refusal>(...command);
      expect(res.json.error.message).toContain('a merge is in progress');
      expect(res.json.error.hint).toContain(`git -C ${ws} commit`);
    }
    expect((await repo.warrenJson('checkpoint', 'M-1', '-m', 'merge main')).code).toBe(0);
    expect(gitIn(ws, 'rev-list', '--parents', '-1', 'HEAD').split(' ')).toHaveLength(3);
    expect((await repo.warrenJson('land', 'M-1')).code).toBe(0);
  });

  it('a corrupted .git file: says the link is broken and how to repair it; the repair works', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'C-1');
    fs.writeFileSync(path.join(ws, 'work.txt'), 'uncommitted');
    const dotGit = path.join(ws, '.git');
    const cases: [string, RegExp][] = [
      ['garbage\n', /does not say "gitdir: PATH" \(it reads "garbage\\n"\)/],
      ['gitdir: /nowhere/at/all\n', /points to \/nowhere\/at\/all, which does not exist/],
      [`gitdir: ${path.join(repo.root, '.git')}\n`, /points to the main checkout's git directory/],
    ];
    for (const [i, [broken, why]] of cases.entries()) {
      fs.writeFileSync(dotGit, broken);
      const commands =
        i === 0
          ? undefined
          : [
              ['rm', 'C-1'],
              ['land', 'C-1'],
            ];
      for (const error of await refusals(repo, 'C-1', ws, { files: false, ...(commands ? { commands } : {}) })) {
        expect(error.code).toBe('OWNERSHIP_MISMATCH');
        expect(error.message).toContain(`task C-1's workspace ${ws} has a broken .git file`);
        expect(error.message).toMatch(why);
        expect(error.message).not.toMatch(/fatal:|invalid gitfile format/);
        expect(error.hint).toContain(`git -C ${repo.root} worktree repair ${ws}`);
      }
      expect(fs.readFileSync(dotGit, 'utf8')).toBe(broken);
    }
    fs.writeFileSync(dotGit, 'garbage\n');
    try {
      gitIn(repo.root, 'worktree', 'repair', ws); // repairs, and exits 1 for the error it repaired
    } catch {
      // expected
    }
    expect(fs.readFileSync(path.join(ws, 'work.txt'), 'utf8')).toBe('uncommitted');
    expect((await repo.warrenJson('checkpoint', 'C-1')).code).toBe(0);
  });

  it("another repository at the workspace path: warren's own check stops it, and it is left alone", async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'O-1');
    fs.rmSync(ws, { recursive: true, force: true });
    gitIn(path.dirname(ws), 'init', '-q', ws);
    fs.writeFileSync(path.join(ws, 'theirs.txt'), "not warren's");
    for (const error of await refusals(repo, 'O-1', ws, { files: false })) {
      expect(error.code).toBe('OWNERSHIP_MISMATCH');
      expect(error.message).toContain(
        `${ws} holds another repository (its git directory is ${path.join(ws, '.git')}), not task O-1's worktree`,
      );
      expect(error.message).not.toMatch(/fatal:/);
      expect(error.hint).toMatch(/move it somewhere else .*`warren rm O-1` to forget the workspace/);
    }
    expect(fs.readFileSync(path.join(ws, 'theirs.txt'), 'utf8')).toBe("not warren's");
    expect(fs.statSync(path.join(ws, '.git')).isDirectory()).toBe(true);
  });
});
