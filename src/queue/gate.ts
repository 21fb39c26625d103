import { removeTaskContainer } from '../run/container/task-container.js';
import fs from 'node:fs';
import path from 'node:path';
import type { WarrenConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { addDetachedWorktree, removeWorktree } from '../git/worktrees.js';
import { addCowCheckout, forgetCheckout, taskLayers, wantsCow } from '../checkout/cow.js';
import type { CheckoutFacts } from '../checkout/types.js';
import type { ProvisionRecord } from '../provision/types.js';
import { forgetTask, releaseRecords } from '../provision/task-mounts.js';
import { isOverlayMount, overlayOption, unmount } from '../system/overlay.js';
import { shellCommand } from '../util/shell.js';
import { runSteps, type StepResult } from '../run/commands.js';
import { startGateServices, stopGateServices } from '../services/gate.js';
import { sandboxKindFor, sandboxKindOf, strictestSandbox, type SandboxKind } from '../config/sandbox.js';
import { allocatePorts, DEFAULT_PORT_COUNT, releasePorts } from '../run/ports.js';
import { removeTaskTmp } from '../run/task-tmp.js';
import { clusterOf } from '../run/k8s/k8s-run.js';
import type { Task } from '../state/types.js';
import { mountsUnder, readMounts } from '../system/mounts.js';
import { removeTree } from '../system/remove-tree.js';
import { listDir } from '../util/list-dir.js';
import type { ProjectContext } from '../workspace/context.js';
import { recordMade } from '../workspace/ledger.js';
import { withRepoLock } from '../workspace/locks.js';
import { reportStep } from '../workspace/reporter.js';
import { presenceAt } from '../workspace/paths.js';
import { provisionGate, type GateSnapshot } from './gate-deps.js';

/**
 * The gate: the verify commands that must pass on the integrated result before the base moves.
 * They run in an integration workspace — a detached, warren-made worktree at the integrated
 * commit, provisioned like a task's (cheap through cow) but with the integrated tree's own
 * dependencies (gate-deps.ts), with a port block — bounded like any run, and the workspace is
 * removed afterwards.
 */

type VerifyStep = WarrenConfig['verify'][number];

/** `land: { gate: [ids] }`, else the required verify commands; none is no gate. */
export function gateSteps(config: WarrenConfig): VerifyStep[] {
  const ids = config.land?.gate;
  if (ids)
    return ids
      .map((id) => config.verify.find((v) => v.id === id))
      .filter((v): v is VerifyStep => v !== undefined)
      .map((v) => ({ ...v, required: true }));
  return config.verify.filter((v) => v.required !== false);
}

export interface GateOutcome {
  passed: boolean;
  log: string | null;
  /** The integration workspace's id: its run's log is followed like a task's. */
  gateTask: string;
  results: StepResult[];
  /** The dependency snapshots the gate ran with. */
  snapshots: GateSnapshot[];
  /** The log of the setup steps run in the gate, and whether one of them failed. */
  setupLog: string | null;
  setupFailed: boolean;
}

/** Integration workspaces live in the workspace root under this prefix (a dot: `scan` does not list them as strays). */
export const GATE_PREFIX = '.queue-';

/**
 * The sandbox the gate's commands run in here: the strictest of warren.yaml's and of each task in
 * the batch. The gate runs the integrated commit's code — each task's agent wrote some of it — so a
 * task made `--sandbox bwrap` has its tests gated in bwrap even where warren.yaml names none.
 * A task that runs in a cluster counts as a container: where its batch cannot be gated in a claim
 * of its cluster (gate-place.ts), it is gated in a container here, never on the host
 * (docs/design/runners.md#where-the-gate-runs).
 */
export function gateSandbox(ctx: ProjectContext, tasks: readonly Task[]): SandboxKind {
  return strictestSandbox([
    sandboxKindOf(ctx.config),
    ...tasks.map((t) => (clusterOf(ctx, t) !== null ? 'container' : sandboxKindFor(ctx, t))),
  ]);
}

let gateSerial = 0;

/** A new integration workspace's id: unique within this process too (with `land.parallel` two gates start in the same millisecond). */
/** The task record a gate's commands run as (never stored): detached at `commit`, in `wsPath`. */
export function gateTaskRecord(
  ctx: ProjectContext,
  gateTask: string,
  wsPath: string,
  commit: string,
  data: Task['data'],
): Task {
  const now = new Date().toISOString();
  return {
    project: ctx.key,
    id: gateTask,
    type: 'chore',
    branch: '(detached)',
    path: wsPath,
    base: '',
    baseCommit: commit,
    state: 'ready',
    createdAt: now,
    updatedAt: now,
    data,
  };
}

export function newGateId(): string {
  return `queue-${Date.now().toString(36)}-${process.pid}-${++gateSerial}`;
}

/** What a gate run on a host for a coordinator is told: its id, and that its commands are the coordinator's (gate-host.ts). */
export interface GateOptions {
  id?: string;
  trustedBy?: 'coordinator';
}

export async function runGate(
  ctx: ProjectContext,
  commit: string,
  steps: readonly VerifyStep[],
  sandbox: SandboxKind,
  onStart: (gateTask: string) => void,
  options: GateOptions = {},
): Promise<GateOutcome> {
  const gateTask = options.id ?? newGateId();
  const wsPath = path.join(ctx.root, `${GATE_PREFIX}${gateTask}`);
  // In the ledger before it exists: only what the ledger names is ever removed as a gate's.
  recordMade(ctx, wsPath, 'integration', gateTask);
  fs.mkdirSync(ctx.root, { recursive: true });
  // `checkout: cow` makes the integration workspace copy-on-write too; else, or where it cannot, a plain detached worktree.
  const checkout = await reportStep(
    ctx.reporter,
    `merge queue: checking out ${commit.slice(0, 12)} in an integration workspace`,
    async () => {
      const cow = await gateCheckout(ctx, gateTask, wsPath, commit, sandbox);
      if (cow) return cow;
      const made = await withRepoLock(ctx, `queue gate ${gateTask}`, () =>
        addDetachedWorktree(ctx.repo, wsPath, commit),
      );
      if (made.exitCode !== 0)
        throw new WarrenError(
          'CREATE_FAILED',
          `could not make the merge queue's integration workspace: ${made.stderr.trim()}`,
        );
      return null;
    },
  );
  const task = gateTaskRecord(ctx, gateTask, wsPath, commit, { sandbox, ...(checkout ? { checkout } : {}) });
  let records: ProvisionRecord[] = [];
  let outcome: GateOutcome;
  let problems: string[] = [];
  try {
    await allocatePorts(ctx.store, ctx.key, gateTask, ctx.config.ports?.count ?? DEFAULT_PORT_COUNT);
    onStart(gateTask);
    // Fresh services of the gate's own, before its setup steps (which see them, as at `new`): the
    // integrated commit is tested against nobody's data.
    const deps = await provisionGate(
      ctx,
      task,
      (made) => (records = made),
      async (provisioned) => ({
        ...provisioned,
        data: { ...provisioned.data, services: await startGateServices(ctx, provisioned) },
      }),
      options.trustedBy,
    );
    records = deps.records;
    const setupLog = deps.setup?.log ?? null;
    if (deps.setup && !deps.setup.ok) {
      // The integrated tree cannot be set up (its lockfile does not install): a gate failure.
      outcome = {
        passed: false,
        log: deps.setup.log,
        gateTask,
        results: deps.setup.results,
        snapshots: deps.snapshots,
        setupLog,
        setupFailed: true,
      };
    } else {
      const ran = await runSteps(ctx, deps.task, 'verify', steps, {
        stopOnFailure: false,
        output: { stdout: null, stderr: null },
        ...(options.trustedBy ? { trustedBy: options.trustedBy } : {}),
      });
      outcome = {
        passed: ran.ok,
        log: ran.log,
        gateTask,
        results: ran.results,
        snapshots: deps.snapshots,
        setupLog,
        setupFailed: false,
      };
    }
  } finally {
    problems = await stopGateServices(ctx, gateTask);
    const used = { ...task, data: { ...task.data, provision: records } };
    // Its mounts come off now (a killed warren leaves none); the folder goes while the queue acts on the verdict (gateRemovals).
    await detachGateWorkspace(ctx, used);
    dropAfterRun(ctx, used);
  }
  if (problems.length > 0)
    throw new WarrenError(
      'SERVICE_FAILED',
      `the gate's services could not all be stopped or dropped: ${problems.join('; ')}.`,
      {
        hint: '`warren gc` drops what is left once the gate is gone.',
      },
    );
  return outcome;
}

/** Integration workspaces being removed after their run, off the land's critical path. */
const removals = new Set<Promise<void>>();

/** The integration workspace `task` (nothing binds it any more) removed off the land's critical path; one that will not go is said. */
export function dropAfterRun(ctx: ProjectContext, task: Task): void {
  const removal = dropGateWorkspace(ctx, task).catch((err: unknown) => leftBehind(ctx, task.path, err));
  removals.add(removal);
  void removal.finally(() => removals.delete(removal));
}

/**
 * Until every integration workspace this process is removing is gone (or was left, and said):
 * the processor waits for them before it lets go of the queue's lease, so that the next one
 * never finds a workspace still being removed.
 */
export async function gateRemovals(): Promise<void> {
  while (removals.size > 0) await Promise.allSettled([...removals]);
}

/** An integration workspace that could not be removed: said; the ledger keeps it, and the next processor removes it. */
function leftBehind(ctx: ProjectContext, wsPath: string, err: unknown): void {
  const why = err instanceof Error ? err.message : String(err);
  const message = `the merge queue's integration workspace ${wsPath} could not be removed after its run (${why.replace(/\.$/, '')}); the next run of the queue removes it`;
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'queue.gate_left',
    level: 'warn',
    message,
    data: { path: wsPath, reason: why },
  });
  ctx.reporter.line(`warren: warn: ${message}`);
}

async function removeGateWorkspace(ctx: ProjectContext, task: Task): Promise<void> {
  await detachGateWorkspace(ctx, task);
  await dropGateWorkspace(ctx, task);
}

/** What binds the integration workspace, taken off: its container, its mounts. Refuses when a mount of anyone else's is inside. */
async function detachGateWorkspace(ctx: ProjectContext, task: Task): Promise<void> {
  // A container gate's container first: it binds the workspace.
  const left = await removeTaskContainer(ctx.store.home, ctx.key, task.id);
  if (left !== null)
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `the merge queue's ${left}; the integration workspace was left as it is.`,
      { hint: '`warren gc` removes it once podman can.' },
    );
  await releaseRecords(ctx, task, task.data.provision ?? [], { removeFiles: false });
  // A processor that died left no records: its own overlays (layers under WARREN_HOME) come off
  // too, deepest first — a cow checkout's on the workspace itself last; git then removes what is left.
  const ownLayers = [`${path.join(ctx.store.home, 'overlays', ctx.key, task.id)}/`, `${taskLayers(ctx, task.id).dir}/`];
  const own = mountsUnder(readMounts(), task.path).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
  for (const m of own) {
    if (isOverlayMount(m) && ownLayers.some((l) => overlayOption(m, 'upperdir')?.startsWith(l)))
      await unmount(m.mountPoint);
  }
  const foreign = mountsUnder(readMounts(), task.path);
  if (foreign.length > 0) {
    throw new WarrenError(
      'WORKSPACE_MOUNTED',
      `the merge queue's integration workspace ${task.path} has ${foreign.map((m) => m.mountPoint).join(', ')} mounted inside; it was left as it is.`,
      {
        hint: 'Unmount it; the next queue run removes the workspace.',
      },
    );
  }
}

/** The detached integration workspace's folder, worktree, ports and records, gone. */
async function dropGateWorkspace(ctx: ProjectContext, task: Task): Promise<void> {
  releasePorts(ctx.store, ctx.key, task.id);
  removeTaskTmp(ctx.store.home, ctx.key, task.id);
  // The workspace was made by this call and holds nothing of anyone's: --force. (A folder the gate
  // replaced by a link is not a worktree to git, and removeTree unlinks the link, never its target.)
  await withRepoLock(ctx, `queue gate ${task.id} done`, () => removeWorktree(ctx.repo, task.path, true));
  const stuck = removeTree(task.path);
  await forgetTask(ctx, task);
  forgetCheckout(ctx, task.id);
  // A folder that would not go keeps its record: the next processor tries again.
  if (stuck.length === 0) ctx.store.forgetMadePath(task.path);
}

/** The integration workspace as a cow checkout, when warren.yaml asks for one and this machine can; null for a plain worktree (the event says why). */
async function gateCheckout(
  ctx: ProjectContext,
  gateTask: string,
  wsPath: string,
  commit: string,
  sandbox: SandboxKind,
): Promise<CheckoutFacts | null> {
  if (!wantsCow(ctx).cow) return null;
  const outcome = await addCowCheckout(
    ctx,
    { id: gateTask, branch: null, path: wsPath, commit, record: false, sandbox },
    () => undefined,
  );
  if (outcome.made) return outcome.facts;
  if (outcome.reason !== null) {
    const requested = ctx.config.checkout === 'auto' ? 'auto' : 'cow';
    ctx.store.addEvent({
      project: ctx.key,
      kind: 'checkout.fallback',
      level: 'warn',
      message: `the merge queue's integration workspace: checkout: ${requested} fell back to git worktree add because ${outcome.reason}`,
      data: { requested, reason: outcome.reason },
    });
  }
  return null;
}

/**
 * Integration workspaces left by a processor that died: those warren's ledger says it made
 * (detached, holding nothing of anyone's), removed when a processor starts (it holds the
 * queue's lease, so none is in use). Threat: anyone who can write the workspace root (an agent
 * without a sandbox) can put a `.queue-*` folder there, and its name would pick a task whose
 * ports and mount records go with it; so a `.queue-*` the ledger does not name is left as it
 * is, and reported.
 */
export async function removeStaleGates(ctx: ProjectContext): Promise<void> {
  const made = ctx.store.madePaths(ctx.key).filter((m) => m.kind === 'integration' && m.taskId !== null);
  for (const m of made) {
    await removeGateWorkspace(ctx, {
      project: ctx.key,
      id: m.taskId ?? '',
      type: 'chore',
      branch: '(detached)',
      path: m.path,
      base: '',
      baseCommit: '',
      state: 'ready',
      createdAt: '',
      updatedAt: '',
      data: {},
    });
  }
  const recorded = new Set(made.map((m) => m.path));
  for (const name of listDir(ctx.root)) {
    const at = path.join(ctx.root, name);
    if (!name.startsWith(GATE_PREFIX) || recorded.has(at)) continue;
    const presence = presenceAt(at);
    // The name (and a link's target) is anyone's: quoted, and no command to paste when it holds control characters.
    const what = presence.kind === 'replaced' ? presence.what.replace(/\p{Cc}/gu, '?') : 'a folder';
    const remove = /\p{Cc}/u.test(at)
      ? 'yourself (its name holds control characters: `ls -b` shows it)'
      : `with \`${shellCommand(['rm', '-r', '--', at])}\``;
    const message = `${JSON.stringify(at)} (${what}) is named like a merge-queue integration workspace, but warren's ledger has no record of making it; it was left as it is. If it is not yours, remove it ${remove}.`;
    ctx.store.addEvent({ project: ctx.key, kind: 'queue.foreign', level: 'warn', message, data: { path: at, what } });
    ctx.reporter.line(`warren: warn: ${message}`);
  }
}
