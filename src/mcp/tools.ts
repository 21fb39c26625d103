import { z, type ZodRawShape } from 'zod';
import { agentConflicts } from '../conflicts/operations.js';
import { checkpointTask } from '../land/checkpoint.js';
import { landTask } from '../queue/operations.js';
import { exitStatusOf } from '../run/execute.js';
import { execTask } from '../run/operations.js';
import { verifyTask } from '../run/setup-verify.js';
import { TASK_TYPES } from '../state/types.js';
import { parseDuration } from '../util/duration.js';
import { changesView, landedView, removeView } from '../views/changes.js';
import { runView, verifyView } from '../views/runs.js';
import { listView, showView, statusView } from '../views/tasks.js';
import type { ProjectContext } from '../workspace/context.js';
import { createTask } from '../workspace/create.js';
import { createdSummary } from '../workspace/created.js';
import { OUTPUT_LIMIT, type Collected } from './collected.js';

/**
 * warren's MCP tools, one entry each: its arguments and the library call it makes, the one the
 * CLI command of the same name makes, answering with the same view (src/views/). What a tool
 * adds to the CLI's answer is the output it collected (the CLI prints it as it comes).
 * test/mcp-cli-views.test.ts holds each one against the CLI's `--json`.
 */

/** exec's bounds: a command runs at most this long, and OUTPUT_LIMIT of its output comes back. */
export const EXEC_DEFAULT_TIMEOUT = '10m';
export const EXEC_MAX_TIMEOUT_MS = 60 * 60 * 1000;

/** What a tool's call has besides its arguments. */
export interface ToolCall {
  collected: Collected;
  /** The one task the session serves, or null: all. */
  scope: string | null;
}

export interface Tool<A> {
  name: string;
  description: string;
  /** Its arguments, given `id`'s schema (optional in a session scoped to one task, which fills it in). */
  input?: (id: z.ZodString) => ZodRawShape;
  run(ctx: ProjectContext, args: A, call: ToolCall): Promise<unknown>;
}

/** A tool of the table: its own argument type checked here, and the table holds any (every `run` takes what its `input` parses). */
const tool = <A>(t: Tool<A>): Tool<never> => t;

export const TOOLS: readonly Tool<never>[] = [
  tool({
    name: 'new',
    description:
      "Create a task's workspace: branch TYPE/ID from the base, a git worktree, provisioned paths, ports, setup. Returns its path and state (ready or setup_failed).",
    input: (id) => ({
      type: z.string().describe(`the task type: ${TASK_TYPES.join(', ')}, or those warren.yaml's types: lists instead`),
      id,
      base: z
        .string()
        .optional()
        .describe('branch or commit to start from; default: the branch checked out in the main worktree'),
      sync: z.boolean().optional().describe('fetch and fast-forward the base first (default true)'),
      setup: z.boolean().optional().describe('run the setup commands (default true)'),
    }),
    run: async (ctx, a: { type: string; id: string; base?: string; sync?: boolean; setup?: boolean }, call) => {
      const since = ctx.store.lastEventSeq();
      const task = await createTask(ctx, {
        type: a.type,
        id: a.id,
        ...(a.base ? { base: a.base } : {}),
        ...(a.sync === false ? { sync: false } : {}),
        ...(a.setup === false ? { setup: false } : {}),
      });
      return { ...createdSummary(ctx, task, since), output: call.collected.output() };
    },
  }),
  tool({
    name: 'list',
    description: 'Every task of this repository: id, type, branch, path, state, and whom it conflicts with.',
    run: async (ctx, _a: Record<string, never>, call) =>
      listView(ctx).filter((t) => call.scope === null || t.id === call.scope),
  }),
  tool({
    name: 'show',
    description: 'One task with its services (state, URL, log) and recent events.',
    input: (id) => ({
      id,
      events: z.number().int().min(1).max(500).optional().describe('how many recent events (default 20)'),
    }),
    run: async (ctx, a: { id: string; events?: number }) => showView(ctx, a.id, a.events ?? 20),
  }),
  tool({
    name: 'status',
    description:
      "Tracked changes in the workspace, changes inside provisioned (ignored) paths, the task's services, and what its work would not merge with.",
    input: (id) => ({ id }),
    run: (ctx, a: { id: string }) => statusView(ctx, a.id),
  }),
  tool({
    name: 'diff',
    description:
      "What the task's branch changed against its base, as committed (per-file counts and the patch, cut at 512 KiB), and the workspace's uncommitted changes (paths; checkpoint commits them).",
    input: (id) => ({ id }),
    run: (ctx, a: { id: string }) => changesView(ctx, a.id),
  }),
  tool({
    name: 'conflicts',
    description:
      "What the task's changes (uncommitted included) would conflict with if merged now, as git merges them: each other live task and the base, with the files and both sides' hunks, and the base's commits since the task began that touched those files. Clean overlaps are not conflicts.",
    input: (id) => ({ id }),
    run: (ctx, a: { id: string }) => agentConflicts(ctx, a.id),
  }),
  tool({
    name: 'exec',
    description: `Run a command in the workspace, supervised and bounded: no shell (argv), a timeout (default ${EXEC_DEFAULT_TIMEOUT}, at most 1h) after which the whole process tree ends, and the last ${OUTPUT_LIMIT / 1024} KiB of its output returned.`,
    input: (id) => ({
      id,
      command: z
        .array(z.string())
        .min(1)
        .describe('the command and its arguments (argv; for a shell, ["sh", "-c", "..."])'),
      timeout: z.string().optional().describe('500ms, 2s, 10m, 1h'),
    }),
    run: async (ctx, a: { id: string; command: string[]; timeout?: string }, call) => {
      const timeoutMs = Math.min(parseDuration(a.timeout ?? EXEC_DEFAULT_TIMEOUT, 'timeout'), EXEC_MAX_TIMEOUT_MS);
      const outcome = await execTask(ctx, a.id, a.command, { timeoutMs, stdin: 'ignore' });
      return { ...runView(outcome), exitStatus: exitStatusOf(outcome), output: call.collected.output() };
    },
  }),
  tool({
    name: 'verify',
    description: "Run the task's verify commands (warren.yaml); passed is false when a required one fails.",
    input: (id) => ({ id }),
    run: async (ctx, a: { id: string }, call) => ({
      ...verifyView(await verifyTask(ctx, a.id)),
      output: call.collected.output(),
    }),
  }),
  tool({
    name: 'checkpoint',
    description: 'Commit everything in the workspace on its branch.',
    input: (id) => ({ id, message: z.string().optional().describe('the commit message') }),
    run: (ctx, a: { id: string; message?: string }) =>
      checkpointTask(ctx, a.id, a.message ? { message: a.message } : {}),
  }),
  tool({
    name: 'land',
    description:
      "Land the task through the repository's merge queue, as `warren land` does: squashed onto the latest base with protected paths left out, and landed only if the gate passes on the result; refuses (the task as it was) when it conflicts, hooks changed, or the gate fails.",
    input: (id) => ({ id, message: z.string().optional().describe('the squash commit message') }),
    run: async (ctx, a: { id: string; message?: string }) =>
      landedView(await landTask(ctx, a.id, a.message ? { message: a.message } : {})),
  }),
  tool({
    name: 'rm',
    description:
      'Remove the workspace; refuses while any work would be lost (uncommitted changes, a branch whose work is nowhere else when deleting it).',
    input: (id) => ({
      id,
      deleteBranch: z
        .boolean()
        .optional()
        .describe('also delete the branch, only when its work is on the base or another ref'),
    }),
    run: (ctx, a: { id: string; deleteBranch?: boolean }) =>
      removeView(ctx, a.id, { deleteBranch: a.deleteBranch === true }),
  }),
];
