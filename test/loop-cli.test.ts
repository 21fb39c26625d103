import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/composition.js';
import { makeRepo, type TestRepo } from './helpers/repo.js';

/** The small things of the daily loop (issue 16): path, task types, the landed commit's subject, exec's hint, a reused ID. */

interface Err {
  error: { code: string; message: string; hint?: string };
}

async function newTask(repo: TestRepo, type: string, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', type, id);
  expect(res.code, res.stderr).toBe(0);
  return res.json.path;
}

describe('warren path', () => {
  it('prints the workspace path, for cd "$(warren path ID)"', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'feat', 'P-1');
    const human = await repo.warren('path', 'P-1');
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`${ws}\n`);
    expect((await repo.warrenJson<{ path: string }>('path', 'P-1')).json).toEqual({ path: ws });
    const missing = await repo.warrenJson<Err>('path', 'nope');
    expect(missing.code).toBe(2);
    expect(missing.json.error.code).toBe('TASK_NOT_FOUND');
    expect((await repo.warren('path', '../x')).code).toBe(2);
  });
});

describe('types in warren.yaml', () => {
  it('replace the five built-in types: the listed ones make branches, the others are refused naming the list', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': 'types: [feat, spike, ops/infra]\n' } });
    await newTask(repo, 'spike', 'S-1');
    await newTask(repo, 'ops/infra', 'S-2');
    expect(repo.git('branch', '--list', '--format=%(refname:short)').split('\n').sort()).toEqual([
      'main',
      'ops/infra/S-2',
      'spike/S-1',
    ]);
    const refused = await repo.warrenJson<Err>('new', 'fix', 'S-3');
    expect(refused.code).toBe(2);
    expect(refused.json.error).toMatchObject({
      code: 'TYPE_INVALID',
      message: 'task type "fix" is not one of feat, spike, ops/infra. Nothing was created.',
    });
    expect(refused.json.error.hint).toBe('Use one of: feat spike ops/infra (warren.yaml `types:`).');
  });

  it.each([
    ['types: [feat, feat]\n', 'types[1]: "feat" is listed twice'],
    ['types: ["a..b"]\n', 'types[0]: "a..b" would make branch names git refuses'],
    ['types: []\n', 'types: Too small'],
    ['types: ["-x"]\n', 'types[0]: letters, digits'],
  ])('are checked when warren.yaml is read: %j', async (yaml, problem) => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': yaml } });
    const r = await repo.warrenJson<Err>('new', 'feat', 'X-1');
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('CONFIG_INVALID');
    expect(r.json.error.message).toContain(problem);
  });
});

describe('the landed commit', () => {
  const subjectAndTrailer = (repo: TestRepo): string =>
    repo.git('log', '-1', '--format=%s|%(trailers:key=Warren-Task,valueonly,separator=%x2C)', 'main');

  it('is titled by land -m, else by the first checkpoint message, else TYPE: ID; the task ID is a trailer', async () => {
    const repo = makeRepo();
    const a = await newTask(repo, 'feat', 'L-1');
    fs.writeFileSync(path.join(a, 'a.txt'), 'a\n');
    expect((await repo.warren('checkpoint', 'L-1', '-m', 'add a')).code).toBe(0);
    expect((await repo.warren('land', 'L-1', '-m', 'The A feature')).code).toBe(0);
    expect(subjectAndTrailer(repo)).toBe('The A feature|L-1');
    expect(repo.git('log', '-1', '--format=%b', 'main')).toContain('Squashed from feat/L-1 (1 commit):\n- add a');

    const b = await newTask(repo, 'fix', 'L-2');
    fs.writeFileSync(path.join(b, 'b.txt'), 'b\n');
    expect((await repo.warren('checkpoint', 'L-2')).code).toBe(0); // titled by warren: says nothing
    fs.writeFileSync(path.join(b, 'b.txt'), 'b2\n');
    expect((await repo.warren('checkpoint', 'L-2', '-m', 'fix b')).code).toBe(0);
    expect((await repo.warren('land', 'L-2')).code).toBe(0);
    expect(subjectAndTrailer(repo)).toBe('fix b|L-2');

    const c = await newTask(repo, 'docs', 'L-3');
    fs.writeFileSync(path.join(c, 'c.txt'), 'c\n');
    expect((await repo.warren('checkpoint', 'L-3')).code).toBe(0);
    expect((await repo.warren('land', 'L-3')).code).toBe(0);
    expect(subjectAndTrailer(repo)).toBe('docs: L-3|L-3');
  });
});

describe('exec without --', () => {
  it('refuses a command with options and says to put it after --; runs one without', async () => {
    const repo = makeRepo();
    await newTask(repo, 'feat', 'E-1');
    const refused = await repo.warren('exec', 'E-1', 'ls', '-la');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'warren: `warren exec` would read "-la" as its own option, not as part of the command; nothing was run.\n  hint: Put the command after `--`: warren exec E-1 -- ls -la (warren\'s own options, such as --timeout, go before `--`).\n',
    );
    expect(refused.stdout).toBe('');
    const json = await repo.warrenJson<Err>('exec', 'E-1', 'sleep', '5', '--timeout', '1s');
    expect(json.json.error.code).toBe('USAGE');
    expect((await repo.warren('exec', 'E-1', '--', 'ls', '-a')).stdout).toContain('..');
    expect((await repo.warren('exec', 'E-1', '--timeout', '20s', 'true')).code).toBe(0);
  });
});

describe('an ID used again', () => {
  it("shows only the new task's events: not the old one's runs, verify or removal", async () => {
    const repo = makeRepo({
      files: { 'README.md': '# r\n', 'warren.yaml': 'verify:\n  - { id: unit, run: "false" }\n' },
    });
    await newTask(repo, 'feat', 'R-1');
    expect((await repo.warren('exec', 'R-1', '--', 'true')).code).toBe(0);
    expect((await repo.warren('verify', 'R-1')).code).toBe(1);
    expect((await repo.warren('rm', 'R-1', '--delete-branch')).code).toBe(0);
    await newTask(repo, 'feat', 'R-1');
    const shown = await repo.warrenJson<{ events: { kind: string }[]; data: Record<string, unknown> }>(
      'show',
      'R-1',
      '--events',
      '100',
    );
    const kinds = shown.json.events.map((e) => e.kind);
    expect(kinds[0]).toBe('task.created');
    expect(kinds).not.toContain('run.started');
    expect(kinds).not.toContain('verify.failed');
    expect(kinds).not.toContain('task.removed');
    expect(shown.json.data.verify).toBeUndefined();
    // The old events are still recorded (the log is append-only), under the same ID.
    const store = openStore(repo.home);
    try {
      const all = store.db
        .prepare("SELECT COUNT(*) AS n FROM events WHERE task_id = 'R-1' AND kind = 'task.created'")
        .get() as { n: number };
      expect(all.n).toBe(2);
    } finally {
      store.close();
    }
  });
});
