import { sandboxKindOf } from '../../config/sandbox.js';
import type { CreateOptions, CreateStep, GcStep, ProjectContext, RemoveStep } from '../../workspace/types.js';
import fs from 'node:fs';
import path from 'node:path';
/** src/queue/gate.ts's prefix of an integration workspace's folder (run/ does not import queue/). */
const GATE_PREFIX = '.queue-';
import { assertPodman } from './podman.js';
import { containerPlace, recordedContainers, removeTaskContainer } from './task-container.js';
import { takeContainerCommits } from './container-git.js';
import { makeContainerAhead } from './container-run.js';

/**
 * What `sandbox: container` plugs into a task's life: `new` refuses up front where podman is
 * missing (RUNNER_UNAVAILABLE, exit 2, nothing made); the container itself is made as soon as
 * git recorded the worktree (the binds' sources exist), while git checks the files out and the
 * rest of `new` runs (container-run.ts makeContainerAhead; `new` waits for it before it lets the
 * task go), else at the task's first command (task-container.ts), and `rm` and `gc` remove it
 * with its ledger record.
 */
export const containerCreate: CreateStep<Ahead | null> = {
  name: 'container',
  async check(ctx, options) {
    if (inContainer(ctx, options)) await assertPodman(`task ${options.id}`);
  },
  async prepare(ctx, options) {
    return inContainer(ctx, options) ? ahead() : null;
  },
  whileCheckingOut: {
    // Where warren.yaml provisions, the first command makes it (makeContainerAhead says why).
    wanted: (ctx, options) => inContainer(ctx, options) && ctx.config.provision.length === 0,
    start: (ctx, task, _options, making) => making?.start(() => makeContainerAhead(ctx, task)),
  },
  async run(ctx, task, _options, making) {
    // Started already while git checked the files out, unless the checkout was made otherwise (copy-on-write).
    making?.start(() => makeContainerAhead(ctx, task));
  },
};

function inContainer(ctx: ProjectContext, options: CreateOptions): boolean {
  return (options.sandbox ?? sandboxKindOf(ctx.config)) === 'container';
}

/** The container being made while `new` goes on (started once); `close` (when `new` ends) waits for it. */
export interface Ahead {
  start(make: () => Promise<void>): void;
  close(): Promise<void>;
}

function ahead(): Ahead {
  let making: Promise<void> | null = null;
  return {
    start: (make) => void (making ??= make().catch(() => undefined)),
    close: () => making ?? Promise.resolve(),
  };
}

export const containerRemove: RemoveStep = {
  name: 'container',
  // After teardown (which runs in it), before the workspace goes: a container holds its binds.
  async collect(ctx, task) {
    await takeContainerCommits(ctx, task);
  },
  async release(ctx, task) {
    // Commits the agent made inside that no run took yet (warren was killed first) are work rm's guards never saw.
    const taken = await takeContainerCommits(ctx, task);
    if (taken.kind === 'moved' || taken.kind === 'kept') {
      const where = taken.kind === 'moved' ? `onto ${task.branch}` : `to ${taken.ref}`;
      return [
        `the agent had committed in task ${task.id}'s container, and those commits were only now taken ${where}; nothing was removed. Look at them (warren diff ${task.id}), then run rm again`,
      ];
    }
    const problem = await removeTaskContainer(ctx.store.home, ctx.key, task.id);
    if (problem === null) return [];
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'sandbox.container_left',
      level: 'warn',
      message: `${problem}; removal refused, nothing else was removed`,
      data: { problem },
    });
    return [problem];
  },
};

/** Containers of this project whose task is gone (a crash between the record and the row, a gate's that was cut short). */
export const containerGc: GcStep = {
  name: 'containers',
  async collect(ctx) {
    const removed: { kind: string; id?: string; action: string }[] = [];
    const kept: { path: string; kind: string; reason: string }[] = [];
    const live = new Set(ctx.store.listTasks(ctx.key).map((t) => t.id));
    for (const c of recordedContainers(ctx.store.home)) {
      if (c.project !== ctx.key || live.has(c.task)) continue;
      // A gate's, while its integration workspace is there: kept (the gate, or the next processor, removes both).
      if (c.task.startsWith('queue-') && fs.existsSync(path.join(ctx.root, `${GATE_PREFIX}${c.task}`))) {
        kept.push({
          path: containerPlace(ctx.store.home, c.project, c.task).dir,
          kind: 'container',
          reason: "its merge queue gate's workspace is still there",
        });
        continue;
      }
      const problem = await removeTaskContainer(ctx.store.home, c.project, c.task);
      if (problem === null) removed.push({ kind: 'container', id: c.task, action: `removed container ${c.name}` });
      else
        kept.push({ path: containerPlace(ctx.store.home, c.project, c.task).dir, kind: 'container', reason: problem });
    }
    return { removed, kept };
  },
};
