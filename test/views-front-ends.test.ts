import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import fs from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../src/composition.js';
import { ACTIONS } from '../src/web/actions.js';
import { registerApi, type ApiDeps } from '../src/web/api.js';
import { startServer } from '../src/web/server.js';
import { BIN, makeRepo, type TestRepo } from './helpers/repo.js';
import { request } from './helpers/serve.js';

/**
 * Every MCP tool and every dashboard route against the CLI's `--json` for the same operation:
 * the three front ends answer with one view (src/views/), so a field one adds or drops, or a
 * payload spread the wrong way round, fails here. A read is compared value for value on the
 * same task; an operation that changes something runs on two tasks made alike and is compared
 * by shape (every key, and each value's type). A tool or route without a CLI twin says why.
 */

type Json = unknown;

interface Twin {
  /** The tool (`new`) or route (`GET /api/fleet`, `POST /api/actions/rm`) compared. */
  op: string;
  /** Runs it on the front end, and the CLI's twin; null: it has none, `why` says so. */
  run: ((f: Fronts) => Promise<{ front: Json; cli: Json }>) | null;
  how: 'equal' | 'shape';
  why?: string;
}

interface Fronts {
  repo: TestRepo;
  mcp(tool: string, args?: Record<string, unknown>): Promise<Json>;
  web(route: string, body?: Record<string, unknown>): Promise<Json>;
  cli(...argv: string[]): Promise<Json>;
  project: string;
}

/** Each value's type in place of the value; an array by its first element (two runs alike have alike lists). */
function shape(v: Json): Json {
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, Json>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, shape(x)]),
    );
  return v === null ? 'null' : typeof v;
}

/** `v` without the named top-level keys: what a front end adds to the CLI's answer (the output it collected). */
function without(v: Json, ...keys: string[]): Json {
  return Object.fromEntries(Object.entries(v as Record<string, Json>).filter(([k]) => !keys.includes(k)));
}

const pick = (v: Json, ...keys: string[]): Json =>
  Object.fromEntries(keys.map((k) => [k, (v as Record<string, Json>)[k]]));

const IDENTITY = ['id', 'type', 'branch', 'path', 'base', 'state'];
/** How long the conflict map took, and how much of it was computed again: facts of the one run. */
const TIMING = ['ms', 'merged', 'reused', 'snapshots'];
const NEEDS_AGENT = 'starts a coding agent, which this test has none of; test/web/agent-actions.test.ts drives it';

/** In the order they run: each mutating pair on tasks made alike (a… by the CLI, m… by MCP, w… by the dashboard). */
const TWINS: readonly Twin[] = [
  {
    op: 'new',
    how: 'shape',
    run: async (f) => ({
      front: without(await f.mcp('new', { type: 'feat', id: 'm1' }), 'output'),
      cli: await f.cli('new', 'feat', 'a1'),
    }),
  },
  {
    op: 'POST /api/actions/new',
    how: 'shape',
    run: async (f) => ({
      front: await f.web('/api/actions/new', { options: { type: 'feat', id: 'w1' } }),
      cli: await f.cli('new', 'feat', 'a2'),
    }),
  },
  {
    op: 'exec',
    how: 'shape',
    run: async (f) => {
      await f.cli('new', 'feat', 'b1');
      // Each its own file; a1 and b1 also change README.md apart: a conflict to compare.
      for (const [id, text] of [
        ['a1', 'a'],
        ['m1', 'm'],
        ['w1', 'w'],
        ['a2', 'a2'],
        ['b1', 'b'],
      ] as const)
        await f.cli(
          'exec',
          id,
          '--',
          'sh',
          '-c',
          `echo ${text} > ${text}.txt${id.endsWith('1') && id !== 'm1' && id !== 'w1' ? ` && echo ${text} > README.md` : ''}`,
        );
      return {
        front: without(await f.mcp('exec', { id: 'm1', command: ['true'] }), 'output', 'exitStatus'),
        cli: await f.cli('exec', 'a1', '--', 'true'),
      };
    },
  },
  {
    op: 'verify',
    how: 'shape',
    run: async (f) => ({
      front: without(await f.mcp('verify', { id: 'm1' }), 'output'),
      cli: await f.cli('verify', 'a1'),
    }),
  },
  {
    op: 'POST /api/actions/verify',
    how: 'shape',
    run: async (f) => ({
      front: await f.web('/api/actions/verify', { id: 'w1', options: {} }),
      cli: await f.cli('verify', 'a2'),
    }),
  },
  // Reads of the same task: value for value.
  {
    op: 'status',
    how: 'equal',
    run: async (f) => ({ front: await f.mcp('status', { id: 'a1' }), cli: await f.cli('status', 'a1') }),
  },
  { op: 'list', how: 'equal', run: async (f) => ({ front: await f.mcp('list'), cli: await f.cli('list') }) },
  {
    op: 'show',
    how: 'equal',
    run: async (f) => ({ front: await f.mcp('show', { id: 'a1' }), cli: await f.cli('show', 'a1') }),
  },
  {
    op: 'diff',
    how: 'equal',
    // One answer for an agent: `diff --committed`, and `diff --uncommitted --stat`'s files beside it.
    run: async (f) => {
      const both = (await f.mcp('diff', { id: 'a1' })) as { committed: Json; uncommitted: Json };
      const committed = await f.cli('diff', 'a1', '--committed');
      const uncommitted = (await f.cli('diff', 'a1', '--uncommitted', '--stat')) as { files: Json };
      return { front: both, cli: { committed, uncommitted: uncommitted.files } };
    },
  },
  {
    op: 'conflicts',
    how: 'equal',
    // The task's conflicting pairs, as `warren conflicts ID` lists them (the tool adds the base's commits).
    run: async (f) => {
      const cli = pick(await f.cli('conflicts', 'a1'), 'conflicts') as { conflicts: Json[] };
      expect(cli.conflicts.length, 'a1 and b1 both change README.md').toBeGreaterThan(0);
      return { front: pick(await f.mcp('conflicts', { id: 'a1' }), 'conflicts'), cli };
    },
  },
  {
    op: 'GET /api/conflicts',
    how: 'equal',
    run: async (f) => ({
      front: without(await f.web(`/api/conflicts?project=${f.project}&id=a1`), ...TIMING),
      cli: without(await f.cli('conflicts', 'a1'), ...TIMING),
    }),
  },
  {
    op: 'GET /api/fleet',
    how: 'equal',
    // The fleet's rows are `list`'s tasks.
    run: async (f) => {
      const fleet = (await f.web('/api/fleet')) as { projects: { tasks: Json[] }[] };
      return {
        front: (fleet.projects[0]?.tasks ?? []).map((t) => pick(t, ...IDENTITY)),
        cli: ((await f.cli('list')) as Json[]).map((t) => pick(t, ...IDENTITY)),
      };
    },
  },
  {
    op: 'GET /api/task',
    how: 'equal',
    // The task view's task (where it runs too) and services are `show`'s; its diff's files are `diff --stat`'s.
    run: async (f) => {
      const view = (await f.web(`/api/task?project=${f.project}&id=a1`)) as {
        task: Json;
        services: Json;
        diff: { value: { files: Json[] } };
      };
      const shown = (await f.cli('show', 'a1')) as { services: Json };
      const stat = (await f.cli('diff', 'a1', '--stat')) as { files: Json[] };
      const files = (list: Json[]) => list.map((x) => pick(x, 'path', 'status', 'added', 'deleted'));
      return {
        front: {
          task: pick(view.task, ...IDENTITY, 'runner'),
          services: view.services,
          files: files(view.diff.value.files),
        },
        cli: { task: pick(shown, ...IDENTITY, 'runner'), services: shown.services, files: files(stat.files) },
      };
    },
  },
  {
    op: 'GET /api/meta',
    how: 'equal',
    run: null,
    why: "the dashboard's own settings (its actions, the editor, the event sequence)",
  },
  {
    op: 'GET /api/fleet/details',
    how: 'equal',
    run: null,
    why: 'what git and a walk of each workspace say, for the fleet table; no one command prints it',
  },
  {
    op: 'GET /api/disk',
    how: 'equal',
    run: null,
    why: "each workspace's disk use, read on demand; no command prints it",
  },
  { op: 'GET /api/events', how: 'equal', run: null, why: 'a live stream of every event' },
  {
    op: 'GET /api/transcript',
    how: 'equal',
    run: null,
    why: `a live stream of an agent's conversation; ${NEEDS_AGENT}`,
  },
  { op: 'GET /api/log', how: 'equal', run: null, why: "a live stream of a command's log as it is written" },
  {
    op: 'checkpoint',
    how: 'shape',
    run: async (f) => ({
      front: await f.mcp('checkpoint', { id: 'm1', message: 'work' }),
      cli: await f.cli('checkpoint', 'a1', '-m', 'work'),
    }),
  },
  {
    op: 'POST /api/actions/checkpoint',
    how: 'shape',
    run: async (f) => ({
      front: await f.web('/api/actions/checkpoint', { id: 'w1', options: {} }),
      cli: await f.cli('checkpoint', 'a2'),
    }),
  },
  {
    op: 'POST /api/actions/comment',
    how: 'shape',
    run: async (f) => ({
      front: await f.web('/api/actions/comment', { id: 'b1', options: { path: 'README.md', line: '1', body: 'why?' } }),
      cli: await f.cli('comment', 'b1', 'README.md:1', 'why?'),
    }),
  },
  {
    op: 'POST /api/actions/resolve',
    how: 'shape',
    // `comments --resolve` lists them all afterwards; the action answers with the one it resolved.
    run: async (f) => {
      const front = await f.web('/api/actions/resolve', { id: 'b1', options: { comment: '1', state: 'resolved' } });
      const all = (await f.cli('comments', 'b1', '--resolve', '2')) as { id: number }[];
      return { front, cli: all.find((c) => c.id === 2) };
    },
  },
  {
    op: 'POST /api/actions/trust',
    how: 'equal',
    run: async (f) => {
      const { hash } = (await f.cli('trust')) as { hash: string };
      return {
        front: await f.web('/api/actions/trust', { options: { hash } }),
        cli: await f.cli('trust', '--hash', hash),
      };
    },
  },
  {
    op: 'land',
    how: 'shape',
    run: async (f) => ({
      front: await f.mcp('land', { id: 'm1', message: 'feat: m1' }),
      cli: await f.cli('land', 'a1', '-m', 'feat: a1'),
    }),
  },
  {
    op: 'POST /api/actions/land',
    how: 'shape',
    run: null,
    why: 'joins the merge queue and works it in the server; its twin `land --no-wait` starts a background worker, and both are held against each other in test/web/dashboard.e2e.test.ts and test/queue/queue.test.ts',
  },
  {
    op: 'rm',
    how: 'shape',
    run: async (f) => ({
      front: await f.mcp('rm', { id: 'm1', deleteBranch: true }),
      cli: await f.cli('rm', 'a1', '--delete-branch'),
    }),
  },
  {
    op: 'POST /api/actions/rm',
    how: 'shape',
    run: async (f) => ({
      front: await f.web('/api/actions/rm', { id: 'w1', options: { discard: true } }),
      cli: await f.cli('rm', 'a2', '--discard'),
    }),
  },
  {
    op: 'POST /api/actions/gc',
    how: 'shape',
    run: async (f) => ({ front: await f.web('/api/actions/gc', { options: {} }), cli: await f.cli('gc') }),
  },
  {
    op: 'POST /api/actions/agent',
    how: 'shape',
    run: null,
    why: `\`new\` and \`run --agent\` in one step; ${NEEDS_AGENT}`,
  },
  {
    op: 'POST /api/actions/run',
    how: 'shape',
    run: null,
    why: `answers once the run started, where \`run\` waits for its end; ${NEEDS_AGENT}`,
  },
  { op: 'POST /api/actions/review', how: 'shape', run: null, why: `\`run --review\`; ${NEEDS_AGENT}` },
  {
    op: 'POST /api/actions/open',
    how: 'shape',
    run: null,
    why: "opens the user's editor; the CLI has no command for it",
  },
  {
    op: 'POST /api/actions/rm-landed',
    how: 'shape',
    run: null,
    why: '`rm ID --discard` for each landed task, one answer for them all; no one command does it',
  },
];

async function connectMcp(repo: TestRepo): Promise<Client> {
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

/** Every route registerApi makes, as `METHOD /path`, and each action as its own route. */
function apiRoutes(): string[] {
  const app = new Hono();
  registerApi(app, {} as ApiDeps);
  return app.routes
    .flatMap((r) =>
      r.path === '/api/actions/:name'
        ? ACTIONS.map((a) => `${r.method} /api/actions/${a.name}`)
        : [`${r.method} ${r.path}`],
    )
    .filter((r) => !r.startsWith('ALL '));
}

describe('one view per answer', () => {
  it(
    "every MCP tool and every dashboard route answers as the CLI's --json does for the same operation",
    { timeout: 300_000 },
    async () => {
      const repo = makeRepo({
        files: { 'README.md': '# main\n', 'warren.yaml': 'verify:\n  - { id: test, run: "true" }\n' },
      });
      const client = await connectMcp(repo);
      const store = openStore(repo.home);
      onTestFinished(() => store.close());
      const ctx = await openProject(repo.root, { store });
      const server = await startServer({ project: ctx, store, host: '127.0.0.1', port: 0 });
      onTestFinished(() => server.close());

      const fronts: Fronts = {
        repo,
        project: ctx.key,
        async mcp(tool, args = {}) {
          const r = (await client.callTool({ name: tool, arguments: args })) as {
            isError?: boolean;
            content: { text: string }[];
          };
          const data = JSON.parse(r.content[0]?.text ?? 'null') as Json;
          if (r.isError) throw new Error(`mcp ${tool} refused: ${JSON.stringify(data)}`);
          return data;
        },
        async web(route, body) {
          const res = await request(`${server.url}${route.slice(1)}`, {
            method: body ? 'POST' : 'GET',
            headers: { 'x-warren-token': server.token, 'content-type': 'application/json' },
            ...(body ? { body: JSON.stringify({ project: ctx.key, ...body }) } : {}),
          });
          if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${res.body}`);
          const data = JSON.parse(res.body) as { ok?: true; result?: Json };
          return body ? data.result : data;
        },
        async cli(...argv) {
          const r = await repo.warrenJson(...argv);
          if (r.code !== 0 && !(argv[0] === 'trust' && argv.length === 1))
            throw new Error(`warren ${argv.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
          return r.json;
        },
      };

      // Every tool and every route has a row: a new one without a twin (or a reason) fails here.
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      const rows = TWINS.map((t) => t.op);
      expect(tools.filter((t) => !rows.includes(t))).toEqual([]);
      expect(apiRoutes().filter((r) => !rows.includes(r))).toEqual([]);
      expect(rows.filter((r) => !r.includes(' ') && !tools.includes(r))).toEqual([]);

      const drift: string[] = [];
      for (const twin of TWINS) {
        if (!twin.run) {
          expect(twin.why, twin.op).toBeTruthy();
          continue;
        }
        const { front, cli } = await twin.run(fronts);
        const [a, b] = twin.how === 'shape' ? [shape(front), shape(cli)] : [front, cli];
        if (JSON.stringify(a) !== JSON.stringify(b))
          drift.push(`${twin.op} (${twin.how}):\n  front end: ${JSON.stringify(a)}\n  cli:       ${JSON.stringify(b)}`);
      }
      expect(drift.join('\n')).toBe('');
      expect(fs.existsSync(path.join(repo.root, 'm.txt'))).toBe(true); // m1 landed
    },
  );
});
