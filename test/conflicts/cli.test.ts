import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * The conflict map where people and agents look: `warren conflicts`, `status`, `list`, and the
 * MCP `conflicts` tool of a session scoped to one task, which answers for that task alone.
 */

const FILE = (mid: string): string => ['one', 'two', mid, 'four', 'five', 'six', 'seven', ''].join('\n');

async function taskEditing(repo: TestRepo, id: string, files: Record<string, string>, commit = true): Promise<void> {
  expect((await repo.warren('new', 'feat', id)).code).toBe(0);
  const ws = (await repo.warrenJson<{ path: string }>('path', id)).json.path;
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(ws, rel), content);
  if (commit) expect((await repo.warren('checkpoint', id)).code).toBe(0);
}

/** a and b edit the same line of f.txt (b without committing); c and d edit the same line of g.txt; e, nothing. */
async function fleet(): Promise<TestRepo> {
  const repo = makeRepo({ files: { 'f.txt': FILE('three'), 'g.txt': FILE('three') } });
  await taskEditing(repo, 'a', { 'f.txt': FILE('a') });
  await taskEditing(repo, 'b', { 'f.txt': FILE('b') }, false);
  await taskEditing(repo, 'c', { 'g.txt': FILE('c') });
  await taskEditing(repo, 'd', { 'g.txt': FILE('d') });
  return repo;
}

interface Pair {
  a: string;
  b: string;
  files: { path: string; hunks: { ours: string[]; theirs: string[] }[] }[];
}

describe('conflicts where people and agents look', () => {
  it('`warren conflicts`, `status ID` and `list` name the other task and the files; bad input changes nothing', async () => {
    const repo = await fleet();
    const all = await repo.warrenJson<{ conflicts: Pair[]; pairs: number }>('conflicts');
    expect(all.code, all.stderr).toBe(0);
    expect(all.json.conflicts.map((p) => [p.a, p.b, p.files.map((f) => f.path)])).toEqual([
      ['a', 'b', ['f.txt']],
      ['c', 'd', ['g.txt']],
    ]);
    expect(all.json.pairs).toBe(6 + 4); // every pair of 4 tasks, and each against its base
    const human = await repo.warren('conflicts', 'a');
    expect(human.stdout).toMatch(/^a\s+b\s+conflict\s+f\.txt$/m);
    expect(human.stdout).toContain('  a:\n    a\n  b:\n    b');
    const status = await repo.warrenJson<{ conflicts: { other: string; paths: string[] }[]; tracked: unknown }>(
      'status',
      'b',
    );
    expect(status.json.conflicts).toEqual([{ other: 'a', paths: ['f.txt'] }]);
    expect(status.json.tracked).toBeDefined(); // the contract's fields stay
    expect((await repo.warren('status', 'b')).stdout).toContain('conflicts with a (f.txt)');
    const list = await repo.warrenJson<{ id: string; state: string; conflicts: { other: string }[] }[]>('list');
    expect(list.json.map((t) => [t.id, t.conflicts.map((c) => c.other)])).toEqual([
      ['a', ['b']],
      ['b', ['a']],
      ['c', ['d']],
      ['d', ['c']],
    ]);
    expect((await repo.warren('list')).stdout).toContain('c conflicts with d (g.txt)');
    const before = repo.git('for-each-ref');
    const bad = await repo.warrenJson<{ error: { code: string } }>('conflicts', '-x');
    expect(bad.code).toBe(2);
    const unknown = await repo.warrenJson<{ error: { code: string } }>('conflicts', 'nope');
    expect([unknown.code, unknown.json.error.code]).toEqual([2, 'TASK_NOT_FOUND']);
    expect(repo.git('for-each-ref')).toBe(before);
  });

  it("an agent's MCP session (scoped to its task) gets only its own task's conflicts, and what the base now has there", async () => {
    const repo = await fleet();
    repo.write('f.txt', FILE('main'));
    repo.commit('main changes line three');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--task', 'a'],
      cwd: repo.root,
      env: { ...(process.env as Record<string, string>), WARREN_HOME: repo.home },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(transport);
    onTestFinished(() => client.close());
    const ask = async (args: Record<string, unknown>) => {
      const r = (await client.callTool({ name: 'conflicts', arguments: args })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      return { isError: r.isError === true, data: JSON.parse(r.content[0]?.text ?? 'null') as Record<string, unknown> };
    };
    const own = await ask({});
    expect(own.isError, JSON.stringify(own.data)).toBe(false);
    const data = own.data as {
      id: string;
      with: { other: string; paths: string[] }[];
      conflicts: Pair[];
      base: { commits: { subject: string }[] };
    };
    expect(data.id).toBe('a');
    expect(data.with).toEqual([
      { other: '@base', paths: ['f.txt'] },
      { other: 'b', paths: ['f.txt'] },
    ]);
    // Nothing of c and d's conflict, which is not a's.
    expect(JSON.stringify(data)).not.toMatch(/g\.txt/);
    expect(data.conflicts.every((p) => p.a === 'a' || p.b === 'a')).toBe(true);
    const withBase = data.conflicts.find((p) => p.b === '@base');
    expect(withBase?.files[0]?.hunks[0]).toMatchObject({ ours: ['a'], theirs: ['main'] });
    expect(data.base.commits.map((c) => c.subject)).toEqual(['main changes line three']);
    const other = await ask({ id: 'c' });
    expect(other.isError).toBe(true);
    expect((other.data as { error: { code: string } }).error.code).toBe('OUT_OF_SCOPE');
  });

  it('`run --tell-conflicts` adds a note of new conflicts to the prompt once, and `conflict.told` records it', async () => {
    const repo = makeRepo({ files: { 'f.txt': FILE('three') } });
    const seen = path.join(repo.home, 'prompts.txt');
    repo.write(
      'warren.yaml',
      `agents:\n  note: { command: [sh, -c, ${JSON.stringify(`cat >> ${seen}; echo ---- >> ${seen}`)}], prompt: stdin }\n`,
    );
    repo.commit('an agent');
    await taskEditing(repo, 'a', { 'f.txt': FILE('a') });
    await taskEditing(repo, 'b', { 'f.txt': FILE('b') }, false);
    for (let i = 0; i < 2; i++) {
      const r = await repo.warren('run', 'a', '--agent', 'note', '--prompt', 'go on', '--tell-conflicts');
      expect(r.code, r.stderr).toBe(0);
    }
    const [first, second] = fs.readFileSync(seen, 'utf8').split('----\n');
    expect(first).toMatch(/^go on\n\nNote from warren: .*\n- with task b, which is also changing f\.txt\n/);
    expect(second).toBe('go on'); // nothing new the second time: the prompt as given
    // Without the flag (and no `conflicts.tell`), the prompt is exactly as given.
    expect((await repo.warren('run', 'b', '--agent', 'note', '--prompt', 'plain')).code).toBe(0);
    expect(fs.readFileSync(seen, 'utf8').endsWith('plain----\n')).toBe(true);
  });
});
