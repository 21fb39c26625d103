import { sandboxKindOf } from '../config/sandbox.js';
import { madeOnHost } from '../config/runner.js';
import type { ProjectContext } from '../workspace/context.js';
import { resolveSources } from '../provision/modes/sources.js';
import type { CreateStep, GcStep, RemoveStep } from '../workspace/types.js';
import { runSteps } from './commands.js';
import { collectRunLogs } from './log-gc.js';
import { removeTaskTmp, taskTmpPath } from './task-tmp.js';
import { allocatePorts, DEFAULT_PORT_COUNT, portRange, precheckPorts, releasePorts, type PortCheck } from './ports.js';
import { assertSandboxRequirement, classifyRisk, rank } from './risk.js';
import { installDecision } from './install-skip.js';
import { runSetup } from './setup-verify.js';
import { assertSettingsTrusted, assertTrusted, pinSettingsOnFirstUse, trustState } from '../trust/trust.js';
import { modeKind } from '../provision/modes/kinds.js';

/**
 * Execution's steps in a task's life: a port block and a risk assessment at `warren new`, the
 * setup commands before the task is ready; teardown before `rm` removes it, the ports after;
 * old run logs in `gc`.
 */

export const portsCreate: CreateStep<PortCheck | null> = {
  name: 'ports',
  // A WARREN_PORT_RANGE that is not a range is refused before anything is made.
  check: async () => {
    portRange();
  },
  prepare: (ctx) => precheckPorts(ctx.store, ctx.config.ports?.count ?? DEFAULT_PORT_COUNT),
  async run(ctx, task, _options, checked) {
    // A task on a host: its block is the host's, taken there by the host's `new` (remote-task.ts records it).
    if (madeOnHost(task.data.runner)) return;
    const count = ctx.config.ports?.count ?? DEFAULT_PORT_COUNT;
    const { block, busySkipped, reclaimed } = await allocatePorts(ctx.store, ctx.key, task.id, count, checked);
    ctx.store.mergeData(ctx.key, task.id, { ports: block });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'ports.allocated',
      level: busySkipped.length > 0 ? 'warn' : 'info',
      message: `ports ${block.first}-${block.first + block.count - 1}${busySkipped.length > 0 ? ` (skipped ports in use by something else: ${busySkipped.join(', ')})` : ''}${reclaimed > 0 ? `; reclaimed ${reclaimed} port(s) of tasks that no longer exist` : ''}`,
      data: { ...block, busySkipped, reclaimed },
    });
  },
};

/** The sandbox choice and risk, settled before setup runs. */
export const riskCreate: CreateStep = {
  name: 'risk',
  // --require-sandbox: the risk is read from warren.yaml and the main checkout, so it is refused before anything is made.
  async check(ctx, options) {
    if (!options.requireSandbox) return;
    // The paths provisioning will share (read as it will read them), not a share entry it will skip.
    const shared = await sharedPaths(ctx);
    assertSandboxRequirement(
      options.id,
      classifyRisk(ctx.config, shared, { setup: options.setup !== false }),
      options.sandbox ?? sandboxKindOf(ctx.config),
    );
  },
  async run(ctx, task, options) {
    if (options.sandbox) ctx.store.mergeData(ctx.key, task.id, { sandbox: options.sandbox });
    const sandbox = options.sandbox ?? sandboxKindOf(ctx.config);
    // After provisioning: only what was actually shared counts, not a share entry that was skipped.
    // A task on a host is provisioned there: what it would share, read as `--require-sandbox` reads it.
    const shared = madeOnHost(task.data.runner)
      ? await sharedPaths(ctx)
      : (task.data.provision ?? []).filter((r) => modeKind(r.mode).sharesSource).map((r) => r.path);
    const records = task.data.provision ?? [];
    // A skipped install adds no package manager's risk: what runs instead is the project's own scripts.
    const skippedSetup: string[] = [];
    for (const s of ctx.config.setup)
      if ((await installDecision(s.run, records, task.path)).kind === 'skip') skippedSetup.push(s.id);
    const risk = classifyRisk(ctx.config, shared, { setup: options.setup !== false, skippedSetup });
    ctx.store.mergeData(ctx.key, task.id, { risk });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'risk.classified',
      level: rank(risk.level) >= rank('medium') && sandbox === 'none' ? 'warn' : 'info',
      message: `risk ${risk.level}${risk.reasons.length > 0 ? ` (${risk.reasons.join('; ')})` : ''}; recommended sandbox ${risk.recommendedSandbox}, this task uses ${sandbox}`,
      data: { ...risk, sandbox },
    });
  },
};

/** The paths provisioning will share with the main checkout, read from it as provisioning reads them. */
async function sharedPaths(ctx: ProjectContext): Promise<string[]> {
  return (await resolveSources(ctx)).items.filter((i) => modeKind(i.mode).sharesSource).map((i) => i.path);
}

export const setupCreate: CreateStep = {
  name: 'setup',
  // A fresh clone's setup runs only once the user trusted it: refused before anything is made.
  async check(ctx, options) {
    // A repository with no command: its settings are pinned now, so that a task's change to them is noticed.
    pinSettingsOnFirstUse(ctx);
    // A new task is made as the settings say (its root, checkout, provisioned paths, ports), even with --no-setup.
    assertSettingsTrusted(ctx, 'Nothing was created.');
    if (options.setup !== false && ctx.config.setup.length > 0) {
      assertTrusted(
        ctx,
        ['setup'],
        'Nothing was created; `warren new --no-setup` creates the workspace without running them.',
      );
    }
  },
  async run(ctx, task, options) {
    if (ctx.config.setup.length === 0) return;
    if (options.setup === false) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'setup.skipped',
        level: 'warn',
        message: `setup skipped (--no-setup): ${ctx.config.setup.length} command(s) not run; run \`warren setup ${task.id}\` later${trustState(ctx).trusted ? '' : ', after `warren trust`'}`,
      });
      return;
    }
    // stdout belongs to `warren new`'s own result: the setup's output goes to the reporter's stderr.
    await runSetup(
      ctx,
      task,
      { stdout: ctx.reporter.output.stderr, stderr: ctx.reporter.output.stderr },
      { skipProvisionedInstalls: true },
    );
  },
};

export const executionRemove: RemoveStep = {
  name: 'execution',
  // Teardown runs bounded like every command; a failure is recorded and removal goes on, so a
  // broken teardown cannot leave the task stuck in `removing`.
  async release(ctx, task) {
    if (ctx.config.teardown.length === 0) return [];
    // Untrusted teardown is skipped, not a reason to refuse: removing a workspace whose work is
    // safe must not require trusting commands the user chose not to trust.
    if (!trustState(ctx).trusted) {
      const error = "this repository's commands are not trusted (see `warren trust`)";
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'teardown.refused',
        level: 'warn',
        message: `teardown did not run: ${error}; removal went on`,
        data: { error },
      });
      return [];
    }
    try {
      const outcome = await runSteps(ctx, task, 'teardown', ctx.config.teardown, {
        stopOnFailure: false,
        output: { stdout: ctx.reporter.output.stderr, stderr: ctx.reporter.output.stderr },
        skipStateCheck: true,
      });
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: outcome.ok ? 'teardown.passed' : 'teardown.failed',
        level: outcome.ok ? 'info' : 'warn',
        message: outcome.ok
          ? `teardown ran (log ${outcome.log})`
          : `teardown ${outcome.failed?.id} failed (${outcome.failed?.reason ?? `exit ${outcome.failed?.exitCode}`}); removal went on (log ${outcome.log})`,
        data: { log: outcome.log, results: outcome.results },
      });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'teardown.refused',
        level: 'warn',
        message: `teardown did not run: ${error}; removal went on`,
        data: { error },
      });
    }
    return [];
  },
  async afterRemove(ctx, task) {
    const left = removeTaskTmp(ctx.store.home, ctx.key, task.id);
    if (left.length > 0) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'run.tmp_left',
        level: 'warn',
        message: `the task's TMPDIR ${taskTmpPath(ctx.store.home, ctx.key, task.id)} could not be removed whole (${left.slice(0, 3).join(', ')}); \`warren gc\` tries again`,
        data: { paths: left.slice(0, 100) },
      });
    }
    const released = releasePorts(ctx.store, ctx.key, task.id);
    if (released > 0) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'ports.released',
        message: `released ${released} port(s)`,
        data: { count: released },
      });
    }
  },
};

/** Run logs outlive `rm` for a while, then `gc` deletes them (with their rows in `runs`). */
export const runLogsGc: GcStep = { name: 'run logs', collect: (ctx) => collectRunLogs(ctx) };
