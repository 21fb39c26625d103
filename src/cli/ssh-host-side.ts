import fs from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import { revParse, setRef } from '../git/refs.js';
import { headOrNull } from '../git/index-ops.js';
import { snapshotCommit, snapshotWorktree } from '../git/snapshot.js';
import { pinned } from '../workspace/pinned.js';
import { provisionedExcludes } from '../workspace/provisioned.js';
import { snapshotRef, worktreeRef } from '../run/ssh/protocol.js';
import { detachMain, dropRef, hasCommit, initHostRepository } from '../git/ssh-transfer.js';
import { statusOf } from '../git/status.js';
import { checkpointTask } from '../land/checkpoint.js';
import { statusTask } from '../provision/operations.js';
import type { ProjectContext } from '../workspace/context.js';
import { createTask } from '../workspace/create.js';
import { validateTaskId } from '../workspace/ids.js';
import { lockTask, withTaskLock } from '../workspace/locks.js';
import { removeTask } from '../workspace/remove.js';
import type { RunOutput } from '../workspace/reporter.js';
import { requireTask } from '../workspace/tasks.js';
import { runInTask, type RunOutcome } from '../run/execute.js';
import type { RunKind } from '../run/records.js';
import { trustCommands, trustState } from '../trust/trust.js';
import type {
  AgentState,
  Committed,
  Listed,
  RemoteWorktree,
  Created,
  Prepared,
  ProjectName,
  RemoteRequest,
  Report,
} from '../run/ssh/protocol.js';
import { agentState, placeAgent } from '../run/ssh/host-agent.js';

/**
 * The host's side of `warren runner --stdio` (src/cli/commands/runner.ts reads the frames and
 * writes the replies): each request done by the host's own warren — its `new`, its runner (so
 * its boundary, sandbox, setup and layers hold there), its `checkpoint`, its `rm`. The names a
 * coordinator sends are checked as any name is.
 */

const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const KINDS: readonly RunKind[] = ['exec', 'agent', 'setup', 'verify', 'teardown', 'hook'];

/** The folder of the coordinator's repository here: `<WARREN_HOME>/remote/<project>/repo`. */
export function hostRepoDir(home: string, project: ProjectName): string {
  if (!PROJECT.test(project)) {
    throw new WarrenError(
      'USAGE',
      `${JSON.stringify(project)} is not a project name a coordinator sends; nothing was changed.`,
    );
  }
  return path.join(home, 'remote', project, 'repo');
}

export async function hostPrepare(home: string, project: ProjectName): Promise<Prepared> {
  const dir = hostRepoDir(home, project);
  await initHostRepository(dir);
  return { repo: fs.realpathSync(dir) };
}

/** Before the project is opened for `create`: its main checkout at the task's base, so its warren.yaml is the task's. */
export async function hostCheckoutBase(home: string, project: ProjectName, base: string): Promise<string> {
  const dir = hostRepoDir(home, project);
  // BASE_UNKNOWN tells the coordinator to send it (it tries without a push first: one round trip).
  if (!/^[0-9a-f]{40,64}$/.test(base) || !fs.existsSync(dir) || (await hasCommit(dir, base)) === null) {
    throw new WarrenError('BASE_UNKNOWN', `commit ${base.slice(0, 12)} was not sent here; nothing was created.`, {
      hint: 'The coordinator sends it and asks again.',
    });
  }
  await detachMain(dir, base);
  return dir;
}

export async function hostCreate(ctx: ProjectContext, req: Extract<RemoteRequest, { op: 'create' }>): Promise<Created> {
  // The coordinator's user trusted a set: the same set here is trusted, never another.
  if (req.trusted !== undefined && trustState(ctx).hash === req.trusted) trustCommands(ctx, req.trusted);
  const task = await createTask(ctx, {
    type: req.type,
    id: req.id,
    base: req.base,
    sync: false,
    // Setup runs as the coordinator's `new` asks, through this runner, like every other command.
    setup: false,
    // This machine is the task's runner: warren.yaml's `runner: ssh:NAME` names this host, seen from the coordinator.
    runner: 'local',
    ...(req.sandbox ? { sandbox: req.sandbox } : {}),
  });
  // Its port block, taken here: the coordinator takes none for it.
  const ports = ctx.store.getTask(ctx.key, task.id)?.data.ports ?? null;
  return {
    path: task.path,
    branch: task.branch,
    state: task.state,
    ports: ports && { first: ports.first, count: ports.count },
  };
}

/** One command of the task, through this host's runner; its output to `output`, as it comes; `input`: the caller's, forwarded. */
export async function hostExec(
  ctx: ProjectContext,
  req: Extract<RemoteRequest, { op: 'exec' }>,
  output: RunOutput,
  input: NodeJS.ReadableStream | null,
): Promise<RunOutcome> {
  const id = validateTaskId(req.id);
  if (!KINDS.includes(req.kind as RunKind))
    throw new WarrenError('USAGE', `${JSON.stringify(req.kind)} is not a kind of run.`);
  return withTaskLock(ctx, id, `${req.kind} ${req.label} (for the coordinator)`, async () => {
    const task = requireTask(ctx, id);
    // An agent's run: its state folder, final-result marker and prompt file are this host's.
    const agent = req.kind === 'agent' && req.agent ? placeAgent(ctx, id, req.agent, req.argv, req.env ?? {}) : null;
    const started = Date.now();
    const outcome = await runInTask(ctx, task, {
      kind: req.kind as RunKind,
      label: req.label,
      argv: req.argv,
      ...(req.timeoutMs === undefined ? {} : { timeoutMs: req.timeoutMs }),
      stdin: input ? { stream: input } : req.stdin === undefined ? 'ignore' : { text: req.stdin },
      output,
      ...(req.env ? { env: req.env } : {}),
      ...agent?.request,
    });
    return agent ? agent.finish(outcome, started) : outcome;
  });
}

/**
 * The workspace here as it is, for the coordinator's `status` and `diff`: its uncommitted work
 * (untracked files included, provisioned paths left out) as a commit on its HEAD, kept at
 * `refs/warren/worktree/<id>` for the coordinator to fetch; its index and files untouched.
 */
export async function hostWorktree(ctx: ProjectContext, id: string): Promise<RemoteWorktree> {
  const task = requireTask(ctx, validateTaskId(id));
  const wt = await pinned(ctx, task.path);
  const head = await headOrNull(wt);
  if (head === null)
    throw new WarrenError('REMOTE_FAILED', `task ${task.id}'s workspace here has no commit; nothing was read.`);
  const { tree } = await snapshotWorktree(wt, await provisionedExcludes(ctx, task), ctx.store.home);
  const commit = await snapshotCommit(wt, tree, head);
  if (commit !== head)
    await setRef(ctx.repo, worktreeRef(task.id), commit, 'warren: uncommitted work, for the coordinator');
  // This host's `warren status`: the paths it provisioned are here, not on the coordinator.
  const { tracked, provisioned, stale, staleLockfiles } = await statusTask(ctx, task.id);
  return { head, commit, tracked, provisioned, stale, staleLockfiles };
}

/** How an agent's run for the coordinator ended here, and its transcript. */
export function hostAgentState(ctx: ProjectContext, req: Extract<RemoteRequest, { op: 'agent-state' }>): AgentState {
  return agentState(ctx, validateTaskId(req.id), req.agent, req.run);
}

export async function hostCommit(
  ctx: ProjectContext,
  req: Extract<RemoteRequest, { op: 'commit' }>,
): Promise<Committed> {
  const done = await checkpointTask(ctx, req.id, {
    ...(req.message === undefined ? {} : { message: req.message }),
    ...(req.noVerify ? { noVerify: true } : {}),
  });
  return { commit: done.commit, head: done.head };
}

export async function hostReport(ctx: ProjectContext, id: string): Promise<Report> {
  const task = ctx.store.getTask(ctx.key, validateTaskId(id));
  if (!task) return { exists: false, head: null, dirty: false, path: null, running: false };
  let running = false;
  try {
    lockTask(ctx, task.id, 'report (for the coordinator)').release();
  } catch (err) {
    if (!isWarrenError(err, 'LOCK_HELD')) throw err;
    running = true;
  }
  const dirty = fs.existsSync(task.path) && (await statusOf(task.path)).length > 0;
  return { exists: true, head: await revParse(ctx.repo, `refs/heads/${task.branch}`), dirty, path: task.path, running };
}

/** `list`: the coordinator's tasks this host keeps for the project. */
export function hostList(ctx: ProjectContext): Listed {
  return { tasks: ctx.store.listTasks(ctx.key).map((t) => t.id) };
}

/** The task's workspace and branch here removed: the coordinator has fetched its commits (an archive is kept here too). */
export async function hostRemove(ctx: ProjectContext, id: string): Promise<{ removed: boolean }> {
  const had = ctx.store.getTask(ctx.key, validateTaskId(id)) !== null;
  if (had) await removeTask(ctx, id, { discard: true });
  // What the coordinator pushed for it (its base) goes too: nothing of the task is left here.
  await dropRef(ctx.repo.root, `refs/warren/sent/${id}`);
  // The uncommitted work last shown to the coordinator (`worktree`): the archive has what was there.
  await dropRef(ctx.repo.root, worktreeRef(id));
  await dropRef(ctx.repo.root, snapshotRef(id));
  return { removed: had };
}
