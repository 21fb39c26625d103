import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { openProject } from '../../composition.js';
import { addExcludeLine } from '../../git/info-exclude.js';
import {
  CLAUDE_LOCAL_SETTINGS,
  installClaudeHooks,
  parseCreatePayload,
  parseRemovePayload,
  shellCommand,
} from '../../run/claude-hooks.js';
import { TASK_TYPES } from '../../state/types.js';
import { createTask } from '../../workspace/create.js';
import { createdSummary } from '../../workspace/created.js';
import { validateTaskType } from '../../workspace/ids.js';
import { removeTask } from '../../workspace/remove.js';
import { listTasks } from '../../workspace/tasks.js';
import type { CliEnv, Register } from '../command.js';
import { installedCommand } from '../installed.js';
import { readJsonPayload } from '../payload.js';

/** `warren hooks install claude`: writes Claude Code's WorktreeCreate/WorktreeRemove hooks, calling this warren. */
export const registerHooks: Register = (program, run) => {
  const hooks = program.command('hooks').description("install warren as an agent's worktree hooks");
  hooks
    .command('install')
    .description(
      "make Claude Code's worktrees (claude --worktree, subagents with worktree isolation) warren workspaces: merges WorktreeCreate/WorktreeRemove hooks into .claude/settings.local.json",
    )
    .argument('<agent>', 'claude')
    .action((agent: string) =>
      run(async (env) => {
        if (agent !== 'claude')
          throw new WarrenError(
            'USAGE',
            `no worktree hooks for ${JSON.stringify(agent)}: only claude has them; nothing was changed.`,
          );
        const ctx = await env.project();
        // The installed warren, by absolute path: the hook must not depend on PATH when Claude Code runs it.
        const self = installedCommand(env.io.self, process.env.PATH);
        const result = installClaudeHooks(ctx.repo.root, {
          create: shellCommand([...self, 'hook', 'claude-create']),
          remove: shellCommand([...self, 'hook', 'claude-remove']),
        });
        // The settings file is this checkout's own (Claude Code's "local" settings): never to be committed.
        const excluded = addExcludeLine(
          ctx.repo.commonDir,
          `/${CLAUDE_LOCAL_SETTINGS}`,
          "warren hooks install claude: Claude Code's settings for this checkout",
        );
        const what =
          result.added.length > 0
            ? `wrote ${result.added.join(' and ')} into ${result.file}`
            : `${result.file} already has warren's hooks; nothing was changed`;
        const kept = excluded
          ? `\nadded /${CLAUDE_LOCAL_SETTINGS} to .git/info/exclude, so git status does not list it`
          : '';
        return {
          data: { ...result, excluded },
          human: `${what}:\n${JSON.stringify({ hooks: result.hooks }, null, 2)}${kept}`,
        };
      }),
    );
};

/** `warren hook claude-create|claude-remove`: what Claude Code runs, payload on stdin. */
export const registerHook: Register = (program, run) => {
  const hook = program
    .command('hook')
    .description("answer an agent's worktree hook (Claude Code runs these; payload on stdin)");
  hook
    .command('claude-create')
    .description(
      'WorktreeCreate: create (or reuse) the workspace Claude Code names and print its path, the only thing on stdout',
    )
    .option('--type <type>', `the task type of the workspaces it makes (${TASK_TYPES.join(' | ')})`, 'feat')
    .action((opts: { type: string }) =>
      run(async (env) => {
        const type = validateTaskType(opts.type);
        const payload = parseCreatePayload(await readJsonPayload(env.io.stdin, { what: 'the WorktreeCreate hook' }));
        env.taskId = payload.id;
        const ctx = await openProject(projectDir(env, payload.cwd), {
          store: () => env.store(),
          reporter: env.reporter,
        });
        const existing = listTasks(ctx).find((t) => t.id === payload.id);
        if (existing?.state === 'ready')
          return { data: { id: existing.id, path: existing.path, created: false }, human: existing.path };
        const since = ctx.store.lastEventSeq();
        const task = await createTask(ctx, { type, id: payload.id, ...(payload.base ? { base: payload.base } : {}) });
        const summary = createdSummary(ctx, task, since);
        for (const w of summary.warnings) env.log(`warren: ${w.level}: ${w.message}`);
        if (task.state !== 'ready') {
          throw new WarrenError(
            'SETUP_FAILED',
            `workspace ${task.id} was made at ${task.path} but its setup failed (log ${summary.log ?? 'none'}); it is kept in state ${task.state}.`,
            {
              hint: `Fix the cause and run \`warren setup ${task.id}\`, or remove it with \`warren rm ${task.id}\`.`,
            },
          );
        }
        return { data: { id: task.id, path: task.path, created: true }, human: task.path };
      }),
    );
  hook
    .command('claude-remove')
    .description(
      "WorktreeRemove: remove the workspace at the payload's worktree_path; refuses, as `warren rm` does, while work would be lost",
    )
    .action(() =>
      run(async (env) => {
        const payload = parseRemovePayload(await readJsonPayload(env.io.stdin, { what: 'the WorktreeRemove hook' }));
        const ctx = await openProject(projectDir(env, payload.cwd), {
          store: () => env.store(),
          reporter: env.reporter,
        });
        const wanted = realOrResolved(payload.worktreePath);
        const task = listTasks(ctx).find((t) => t.path === wanted || t.path === payload.worktreePath);
        if (!task) {
          throw new WarrenError(
            'TASK_NOT_FOUND',
            `${payload.worktreePath} is not a warren workspace of ${ctx.repo.root}; nothing was removed.`,
            {
              hint: '`warren list` shows the workspaces warren made; remove other worktrees with git.',
            },
          );
        }
        env.taskId = task.id;
        const result = await removeTask(ctx, task.id, {});
        return { data: result, human: `removed ${result.id}; kept branch ${result.branch}` };
      }),
    );
};

function projectDir(env: CliEnv, cwd: string | null): string {
  return cwd !== null && path.isAbsolute(cwd) ? cwd : env.repoDir;
}

function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
