import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeRepo, type TestRepo } from '../helpers/repo.js';

/** `warren mcp` through the SDK's own client over stdio: the real server process, real git. */

async function connect(repo: TestRepo): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: repo.root,
    env: { ...(process.env as Record<string, string>), WARREN_HOME: repo.home },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'warren-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}

type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

async function call<T>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; data: T }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  return { isError: r.isError === true, data: JSON.parse(r.content[0]?.text ?? 'null') as T };
}

describe('warren mcp', () => {
  it(
    'lists its tools, and drives a task from new to rm with the same results as the CLI',
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo({
        files: { 'README.md': '# main\n', 'warren.yaml': 'verify:\n  - { id: test, run: "test -f feature.txt" }\n' },
      });
      const client = await connect(repo);
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual([
        'checkpoint',
        'conflicts',
        'diff',
        'exec',
        'land',
        'list',
        'new',
        'rm',
        'show',
        'status',
        'verify',
      ]);

      const made = await call<{ id: string; path: string; state: string; branch: string }>(client, 'new', {
        type: 'feat',
        id: 'm1',
      });
      expect(made).toMatchObject({ isError: false, data: { id: 'm1', state: 'ready', branch: 'feat/m1' } });
      const ws = made.data.path;
      expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['m1']);

      const ran = await call<{ exitCode: number; output: string; log: string }>(client, 'exec', {
        id: 'm1',
        command: ['sh', '-c', 'echo made > feature.txt; echo hello from $WARREN_TASK_ID'],
      });
      expect(ran.data).toMatchObject({ exitCode: 0 });
      expect(ran.data.output).toBe('hello from m1\n');
      expect(fs.readFileSync(path.join(ws, 'feature.txt'), 'utf8')).toBe('made\n');

      const status = await call<{ tracked: string[] }>(client, 'status', { id: 'm1' });
      expect(JSON.stringify(status.data.tracked)).toContain('feature.txt');
      const diffBefore = await call<{ committed: { files: unknown[] }; uncommitted: unknown[] }>(client, 'diff', {
        id: 'm1',
      });
      expect(diffBefore.data.committed.files).toEqual([]);
      expect(diffBefore.data.uncommitted.length).toBe(1);
      expect((await call<{ passed: boolean }>(client, 'verify', { id: 'm1' })).data.passed).toBe(true);
      const committed = await call<{ commit: string }>(client, 'checkpoint', { id: 'm1', message: 'add feature' });
      expect(committed.data.commit).toMatch(/^[0-9a-f]{40}$/);
      const diff = await call<{ committed: { files: { path: string }[]; patch: string } }>(client, 'diff', {
        id: 'm1',
      });
      expect(diff.data.committed.files.map((f) => f.path)).toEqual(['feature.txt']);
      expect(diff.data.committed.patch).toContain('+made');
      const shown = await call<{ id: string; events: { kind: string }[] }>(client, 'show', { id: 'm1' });
      expect(shown.data.events.map((e) => e.kind)).toContain('checkpoint');

      const landed = await call<{ commit: string }>(client, 'land', { id: 'm1', message: 'feat: feature' });
      expect(landed.isError, JSON.stringify(landed.data)).toBe(false);
      expect(repo.git('log', '-1', '--format=%s', 'main')).toBe('feat: feature');
      expect((await call(client, 'rm', { id: 'm1', deleteBranch: true })).isError).toBe(false);
      expect(fs.existsSync(ws)).toBe(false);
      expect((await call<unknown[]>(client, 'list')).data).toEqual([]);
    },
  );

  it(
    "show lists a run's events under their own kinds, as the CLI does (a run's payload `kind` hides none)",
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo();
      const client = await connect(repo);
      expect((await call(client, 'new', { type: 'feat', id: 'k1' })).isError).toBe(false);
      expect((await call(client, 'exec', { id: 'k1', command: ['true'] })).isError).toBe(false);
      const mcp = await call<{ events: { kind: string }[] }>(client, 'show', { id: 'k1' });
      const cli = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'k1');
      const kinds = cli.json.events.map((e) => e.kind);
      expect(kinds.slice(-2)).toEqual(['run.started', 'run.ended']);
      expect(mcp.data.events.map((e) => e.kind)).toEqual(kinds);
    },
  );

  it(
    "a refusal is a tool error carrying the CLI's code, message and hint, and is recorded; guards hold; exec is bounded",
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo();
      const client = await connect(repo);
      const bad = await call<{ error: { code: string; message: string } }>(client, 'new', {
        type: 'feat',
        id: '../escape',
      });
      expect(bad.isError).toBe(true);
      expect(bad.data.error.code).toBe('ID_INVALID');
      const missing = await call<{ error: { code: string; hint: string } }>(client, 'show', { id: 'nope' });
      expect(missing).toMatchObject({ isError: true, data: { error: { code: 'TASK_NOT_FOUND' } } });
      const cli = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('show', 'nope');
      expect(missing.data.error).toEqual(cli.json.error);

      const made = await call<{ path: string }>(client, 'new', { type: 'fix', id: 'g1' });
      fs.writeFileSync(path.join(made.data.path, 'draft.txt'), 'unsaved\n');
      const refused = await call<{ error: { code: string; message: string; hint: string } }>(client, 'rm', {
        id: 'g1',
      });
      expect(refused).toMatchObject({ isError: true, data: { error: { code: 'WORKSPACE_DIRTY' } } });
      expect(refused.data.error.message).toMatch(/Nothing was removed/);
      expect(refused.data.error.hint).toMatch(/warren checkpoint g1/);
      expect(fs.existsSync(path.join(made.data.path, 'draft.txt'))).toBe(true);
      const events = (
        await repo.warrenJson<{ events: { kind: string; code?: string; command?: string }[] }>('show', 'g1')
      ).json.events;
      expect(events).toContainEqual(
        expect.objectContaining({ kind: 'refused', code: 'WORKSPACE_DIRTY', command: 'mcp rm' }),
      );

      const slow = await call<{ timedOut: boolean; exitStatus: number; durationMs: number }>(client, 'exec', {
        id: 'g1',
        command: ['sleep', '30'],
        timeout: '500ms',
      });
      expect(slow.data).toMatchObject({ timedOut: true, exitStatus: 124 });
      expect(slow.data.durationMs).toBeLessThan(10_000);
      const noCommand = await call<{ error: { code: string } }>(client, 'exec', {
        id: 'g1',
        command: ['no-such-command-here'],
      });
      expect(noCommand.data.error.code).toBe('COMMAND_FAILED');
    },
  );
});
