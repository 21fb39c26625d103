import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { WarrenError } from '../errors.js';
import { openProject } from '../composition.js';
import type { Store } from '../state/store.js';
import { errorDocument, recordRefusal, refusalOf } from '../views/errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { Collected } from './collected.js';
import { TOOLS, type Tool } from './tools.js';

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

/** The arguments of a call in a session scoped to task `scope`, its id filled in; another task, or `new`, is refused. */
function inScope(scope: string, name: string, args: Record<string, unknown>): Record<string, unknown> {
  const given = args.id;
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
  return name === 'list' ? args : { ...args, id: scope };
}

export function buildServer(options: McpOptions): McpServer {
  return serverOf(options, new Set());
}

/** The server, its tools registered from the table; each call is in `running` until it answers. */
function serverOf(options: McpOptions, running: Set<Promise<CallToolResult>>): McpServer {
  const server = new McpServer({ name: 'warren', version: options.version });
  const scope = options.task ?? null;
  // Optional in a scoped session, where inScope fills it in before any handler sees the arguments.
  const id = (
    scope
      ? z.string().optional().describe(`the task ID: this session serves task ${scope} only (the default)`)
      : z.string().describe('the task ID')
  ) as z.ZodString;
  for (const t of TOOLS) {
    // A tool without arguments is called with the request's extra alone: its arguments are none.
    const handler = (first: unknown): Promise<CallToolResult> => {
      const call = callTool(options, scope, t, t.input ? (first as Record<string, unknown>) : {});
      running.add(call);
      return call.finally(() => running.delete(call));
    };
    server.registerTool(
      t.name,
      { description: t.description, ...(t.input ? { inputSchema: t.input(id) } : {}) },
      handler,
    );
  }
  return server;
}

/** Runs one tool: a fresh project context with a collecting reporter; a refusal becomes a tool error, recorded. */
async function callTool(
  options: McpOptions,
  scope: string | null,
  t: Tool<never>,
  given: Record<string, unknown>,
): Promise<CallToolResult> {
  const collected = new Collected();
  let ctx: ProjectContext | null = null;
  let args = given;
  try {
    if (scope) args = inScope(scope, t.name, args);
    ctx = await openProject(options.repoDir, { store: options.store, reporter: collected.reporter() });
    const data = await t.run(ctx, args as never, { collected, scope });
    return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
  } catch (thrown) {
    const err = refusalOf(thrown);
    if (!err) throw thrown;
    recordRefusal(ctx, typeof args.id === 'string' ? args.id : null, err, `mcp ${t.name}`);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorDocument(err), null, 2) }] };
  }
}

/**
 * Serves on stdin/stdout until the client closes stdin, then lets the calls it already sent
 * finish and answer (a script may pipe its requests in and close at once).
 */
export async function serveMcp(options: McpOptions): Promise<void> {
  const running = new Set<Promise<CallToolResult>>();
  const server = serverOf(options, running);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => {
      // Requests read just before the end are dispatched on later ticks: idle twice in a row means none is left.
      let idle = 0;
      const check = setInterval(() => {
        idle = running.size === 0 ? idle + 1 : 0;
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
