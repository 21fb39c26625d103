import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { isWarrenError, WarrenError } from '../errors.js';
import { environmentError } from '../state/faults.js';
import { checkpointTask } from '../land/checkpoint.js';
import { agentConflicts } from '../conflicts/operations.js';
import { landTask } from '../queue/operations.js';
import { openProject } from '../composition.js';
import { statusTask } from '../provision/operations.js';
import { exitStatusOf } from '../run/execute.js';
import { execTask } from '../run/operations.js';
import { diffOf } from '../review/diff.js';
import { verifyTask } from '../run/setup-verify.js';
import type { Store } from '../state/store.js';
import { TASK_TYPES } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { createTask } from '../workspace/create.js';
import { createdSummary } from '../workspace/created.js';
import { removeTask } from '../workspace/remove.js';
import type { Reporter } from '../workspace/reporter.js';
import { listTasks, requireTask, showTask } from '../workspace/tasks.js';
import { taskServices } from '../services/operations.js';
import { parseDuration } from '../util/duration.js';

/**
 * `warren mcp`: warren's operations as MCP tools over stdio, for an agent (or its host) to
 * drive workspaces itself. Each tool is the library call the CLI makes, with the same guards
 * and error codes; a refusal is a tool error whose text is the CLI's `--json` error document
 * (`{"error": {code, message, hint}}`). stdout is the protocol's: progress lines and the
 * output of commands the tools run are collected and returned in the tool's result.
 *
 * One long-running process: the project is opened again for each call (so an edited
 * warren.yaml counts), the state database once.
 */

export interface McpOptions {
  repoDir: string;
  store: () => Store;
  version: string;
  /**
   * The one task this session serves (`warren mcp --task ID`, the task of the command warren
   * runs that started it, or the task whose workspace it started in): every other task, and
   * `new`, are refused (OUT_OF_SCOPE). Null: all.
   */
  task?: string | null;
}

/** exec's bounds: a command runs at most this long, and this much of its output comes back. */
export const EXEC_DEFAULT_TIMEOUT = '10m';
export const EXEC_MAX_TIMEOUT_MS = 60 * 60 * 1000;
export const OUTPUT_LIMIT = 64 * 1024;

/** What one tool call collects instead of printing: warren's lines and the commands' output (its tail, when long). */
class Collected {
  lines: string[] = [];
  private out = '';
  private dropped = 0;
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      this.out += chunk.toString('utf8');
      if (this.out.length > OUTPUT_LIMIT) {
        this.dropped += this.out.length - OUTPUT_LIMIT;
        this.out = this.out.slice(-OUTPUT_LIMIT);
      }
      done();
    },
  });
  reporter(): Reporter {
    return { line: (text) => this.lines.push(text), output: { stdout: this.stream, stderr: this.stream } };
  }
  output(): string {
    return this.dropped > 0
      ? `[${this.dropped} earlier bytes left out; the run's log has everything]\n${this.out}`
      : this.out;
  }
}

/** The arguments of a call in a session scoped to task `scope`, its id filled in; another task, or `new`, is refused. */
function inScope<A>(scope: string, name: string, args: A): A {
  const given = (args as { id?: unknown }).id;
  if (name === 'new' || (given !== undefined && given !== scope)) {
    throw new WarrenError(
      'OUT_OF_SCOPE',
      `this MCP session serves task ${scope} only; ${name === 'new' ? 'it creates no task' : `task ${String(given)} is not its to ${name}`}. Nothing was done.`,
      {
        hint: 'Ask about the task this session serves; to drive every task, start `warren mcp` yourself, outside any task (its command and its workspace).',
        details: { scope, tool: name },
      },
    );
  }
  return name === 'list' ? args : ({ ...args, id: scope } as A);
}

/** Tool calls still running: when the client closes stdin, these finish (and answer) before the server goes. */
let inFlight = 0;

export function buildServer(options: McpOptions): McpServer {
  const server = new McpServer({ name: 'warren', version: options.version });
  const scope = options.task ?? null;
  // Optional in a scoped session, where inScope fills it in before any handler sees the arguments.
  const id = (
    scope
      ? z.string().optional().describe(`the task ID: this session serves task ${scope} only (the default)`)
      : z.string().describe('the task ID')
  ) as z.ZodString;

  /** Runs one tool: a fresh project context with a collecting reporter; a WarrenError becomes a tool error. */
  const tool =
    <A>(name: string, fn: (ctx: ProjectContext, args: A, collected: Collected) => Promise<unknown>) =>
    async (args: A): Promise<CallToolResult> => {
      const collected = new Collected();
      let ctx: ProjectContext | null = null;
      inFlight++;
      try {
        if (scope) args = inScope(scope, name, args);
        ctx = await openProject(options.repoDir, { store: options.store, reporter: collected.reporter() });
        const data = await fn(ctx, args, collected);
        return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
      } catch (thrown) {
        const err = environmentError(thrown) ?? thrown;
        if (!isWarrenError(err)) throw err;
        const taskId = typeof (args as { id?: unknown }).id === 'string' ? (args as { id: string }).id : null;
        try {
          ctx?.store.addEvent({
            project: ctx.key,
            taskId,
            kind: 'refused',
            level: 'warn',
            message: err.message,
            data: { code: err.code, command: `mcp ${name}` },
          });
        } catch {
          // recording must never hide the refusal itself
        }
        const error = {
          code: err.code,
          message: err.message,
          ...(err.hint ? { hint: err.hint } : {}),
          ...(err.details ? { details: err.details } : {}),
        };
        return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }] };
      } finally {
        inFlight--;
      }
    };

  server.registerTool(
    'new',
    {
      description:
        "Create a task's workspace: branch TYPE/ID from the base, a git worktree, provisioned paths, ports, setup. Returns its path and state (ready or setup_failed).",
      inputSchema: {
        type: z
          .string()
          .describe(`the task type: ${TASK_TYPES.join(', ')}, or those warren.yaml's types: lists instead`),
        id,
        base: z
          .string()
          .optional()
          .describe('branch or commit to start from; default: the branch checked out in the main worktree'),
        sync: z.boolean().optional().describe('fetch and fast-forward the base first (default true)'),
        setup: z.boolean().optional().describe('run the setup commands (default true)'),
      },
    },
    tool(
      'new',
      async (ctx, a: { type: string; id: string; base?: string; sync?: boolean; setup?: boolean }, collected) => {
        const since = ctx.store.lastEventSeq();
        const task = await createTask(ctx, {
          type: a.type,
          id: a.id,
          ...(a.base ? { base: a.base } : {}),
          ...(a.sync === false ? { sync: false } : {}),
          ...(a.setup === false ? { setup: false } : {}),
        });
        return { ...createdSummary(ctx, task, since), output: collected.output() };
      },
    ),
  );

  server.registerTool(
    'list',
    { description: 'Every task of this repository: id, type, branch, path, state.' },
    tool('list', async (ctx) =>
      listTasks(ctx)
        .filter((t) => scope === null || t.id === scope)
        .map((t) => ({
          id: t.id,
          type: t.type,
          branch: t.branch,
          path: t.path,
          base: t.base,
          state: t.state,
          createdAt: t.createdAt,
        })),
    ),
  );

  server.registerTool(
    'show',
    {
      description: 'One task with its services (state, URL, log) and recent events.',
      inputSchema: {
        id,
        events: z.number().int().min(1).max(500).optional().describe('how many recent events (default 20)'),
      },
    },
    tool('show', async (ctx, a: { id: string; events?: number }) => {
      const { task, events } = showTask(ctx, a.id, a.events ?? 20);
      return {
        ...task,
        services: taskServices(ctx, task),
        events: events.map((e) => ({ at: e.at, kind: e.kind, level: e.level, message: e.message, ...e.data })),
      };
    }),
  );

  server.registerTool(
    'status',
    {
      description: 'Tracked changes in the workspace, and changes inside provisioned (ignored) paths.',
      inputSchema: { id },
    },
    tool('status', async (ctx, a: { id: string }) => statusTask(ctx, a.id)),
  );

  server.registerTool(
    'diff',
    {
      description:
        "What the task's branch changed against its base, as committed (per-file counts and the patch, cut at 512 KiB), and the workspace's uncommitted changes (paths; checkpoint commits them).",
      inputSchema: { id },
    },
    tool('diff', async (ctx, a: { id: string }) => {
      // As `warren diff`: the committed patch, and the uncommitted and untracked files beside it.
      const task = requireTask(ctx, a.id);
      const [committed, uncommitted] = await Promise.all([
        diffOf(ctx, task, { scope: 'committed' }),
        diffOf(ctx, task, { scope: 'uncommitted', stat: true }),
      ]);
      return { committed, uncommitted: uncommitted.files };
    }),
  );

  server.registerTool(
    'conflicts',
    {
      description:
        "What the task's changes (uncommitted included) would conflict with if merged now, as git merges them: each other live task and the base, with the files and both sides' hunks, and the base's commits since the task began that touched those files. Clean overlaps are not conflicts.",
      inputSchema: { id },
    },
    tool('conflicts', async (ctx, a: { id: string }) => agentConflicts(ctx, a.id)),
  );

  server.registerTool(
    'exec',
    {
      description: `Run a command in the workspace, supervised and bounded: no shell (argv), a timeout (default ${EXEC_DEFAULT_TIMEOUT}, at most 1h) after which the whole process tree ends, and the last ${OUTPUT_LIMIT / 1024} KiB of its output returned.`,
      inputSchema: {
        id,
        command: z
          .array(z.string())
          .min(1)
          .describe('the command and its arguments (argv; for a shell, ["sh", "-c", "..."])'),
        timeout: z.string().optional().describe('500ms, 2s, 10m, 1h'),
      },
    },
    tool('exec', async (ctx, a: { id: string; command: string[]; timeout?: string }, collected) => {
      const timeoutMs = Math.min(parseDuration(a.timeout ?? EXEC_DEFAULT_TIMEOUT, 'timeout'), EXEC_MAX_TIMEOUT_MS);
      const outcome = await execTask(ctx, a.id, a.command, { timeoutMs, stdin: 'ignore' });
      return { ...outcome, exitStatus: exitStatusOf(outcome), output: collected.output() };
    }),
  );

  server.registerTool(
    'verify',
    {
      description: "Run the task's verify commands (warren.yaml); passed is false when a required one fails.",
      inputSchema: { id },
    },
    tool('verify', async (ctx, a: { id: string }, collected) => ({
      ...(await verifyTask(ctx, a.id)),
      output: collected.output(),
    })),
  );

  server.registerTool(
    'checkpoint',
    {
      description: 'Commit everything in the workspace on its branch.',
      inputSchema: { id, message: z.string().optional().describe('the commit message') },
    },
    tool('checkpoint', async (ctx, a: { id: string; message?: string }) =>
      checkpointTask(ctx, a.id, a.message ? { message: a.message } : {}),
    ),
  );

  server.registerTool(
    'land',
    {
      description:
        "Land the task through the repository's merge queue, as `warren land` does: squashed onto the latest base with protected paths left out, and landed only if the gate passes on the result; refuses (the task as it was) when it conflicts, hooks changed, or the gate fails.",
      inputSchema: { id, message: z.string().optional().describe('the squash commit message') },
    },
    tool('land', async (ctx, a: { id: string; message?: string }) =>
      landTask(ctx, a.id, a.message ? { message: a.message } : {}),
    ),
  );

  server.registerTool(
    'rm',
    {
      description:
        'Remove the workspace; refuses while any work would be lost (uncommitted changes, a branch whose work is nowhere else when deleting it).',
      inputSchema: {
        id,
        deleteBranch: z
          .boolean()
          .optional()
          .describe('also delete the branch, only when its work is on the base or another ref'),
      },
    },
    tool('rm', async (ctx, a: { id: string; deleteBranch?: boolean }) =>
      removeTask(ctx, a.id, { deleteBranch: a.deleteBranch === true }),
    ),
  );

  return server;
}

/**
 * Serves on stdin/stdout until the client closes stdin, then lets the calls it already sent
 * finish and answer (a script may pipe its requests in and close at once).
 */
export async function serveMcp(options: McpOptions): Promise<void> {
  const server = buildServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => {
      // Requests read just before the end are dispatched on later ticks: idle twice in a row means none is left.
      let idle = 0;
      const check = setInterval(() => {
        idle = inFlight === 0 ? idle + 1 : 0;
        if (idle >= 2) {
          clearInterval(check);
          resolve();
        }
      }, 50);
    });
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
