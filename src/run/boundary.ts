import path from 'node:path';
import type { Task } from '../state/types.js';
import type { RunMount } from '../system/mounts.js';
import type { ProjectContext } from '../workspace/context.js';
import { assertContained } from '../workspace/paths.js';
import { pinned } from '../workspace/pinned.js';
import { detectContainment, type Containment } from '../system/containment.js';
import { pickEnv, SANDBOX_ENV } from './declared-env.js';
import { policyInPlay } from '../trust/policy-file.js';
import { sandboxKindFor } from '../config/sandbox.js';
import { assertMappable, assertSandboxAvailable, sandboxProfileFor, type SandboxProfile } from './sandbox.js';
import { taskEnv } from './task-env.js';
import { taskTmp, tmpEnv } from './task-tmp.js';
import { assertSettingsTrusted } from '../trust/trust.js';

/**
 * A task's boundary: everything one process of the task may see and reach, decided in this one
 * place for every process warren starts in or for a task — its commands and agents, setup,
 * verify and teardown, the gate's steps and services, dev servers, commit hooks, seeds. The
 * runner (src/run/execute.ts for a bounded run, src/run/service-runner.ts for a service) starts
 * the process inside it; nothing else starts a task's process (test/architecture.test.ts).
 *
 * It is gathered and checked before anything starts: the repository's settings trusted, the
 * workspace where warren made it and (sandboxed) its git files as warren made them, the signed
 * policy, bubblewrap there. Then: the sandbox (what is hidden, readable, writable; the network
 * or the egress allow list), the environment (declared when sandboxed, src/run/declared-env.ts),
 * how the process tree is held (containment), and the copy-on-write layers mounted for it.
 */
export interface Boundary {
  profile: SandboxProfile;
  /** The process's whole environment. */
  env: NodeJS.ProcessEnv;
  containment: Containment;
  /** Made in the process's own mount namespace before it starts (src/system/run-mounts.ts). */
  mounts: RunMount[];
  /** The task's TMPDIR. */
  tmp: string;
}

export interface BoundaryRequest {
  /** Variables for this process only, over the task's own (an agent's state folder, a seed's database). */
  env?: Record<string, string>;
  /** The user's variables it is also given in a sandbox, by name or `PREFIX*` (an agent's endpoint and key). */
  passEnv?: readonly string[];
  /** More paths it may write in a sandbox (an agent's state folder). */
  writable?: readonly string[];
  /** More paths it may read in a sandbox (the main checkout's hooks folder, for a git hook). */
  readable?: readonly string[];
  /** More `127.0.0.1:PORT` it may reach from a sandbox (the template database a seed fills). */
  reach?: readonly string[];
  /** The task's own loopback ports it does not reach through the bridge (a service's own, where it listens). */
  except?: readonly number[];
  /** It is a service of the task: the before-run steps that start services do not run for it. */
  service?: boolean;
}

export async function boundaryOf(ctx: ProjectContext, task: Task, request: BoundaryRequest = {}): Promise<Boundary> {
  const { profile, tmp } = await profileOf(ctx, task, request);
  const own = { ...taskEnv(ctx, task), ...tmpEnv(tmp), ...request.env };
  const env =
    profile.kind === 'none'
      ? { ...process.env, ...own }
      : {
          ...pickEnv(process.env, [...SANDBOX_ENV, ...(request.passEnv ?? []), ...(ctx.user.sandbox_env ?? [])]),
          ...own,
        };
  const containment = await detectContainment(path.join(ctx.store.home, 'cache'));
  const mounts: RunMount[] = [];
  for (const step of ctx.lifecycle.beforeRun) {
    if (request.service && step.beforeServices === false) continue;
    mounts.push(...(await step.run(ctx, task)));
  }
  // As root, what the sandbox writes must be mappable to its uid (no overlay mounted for every process there).
  assertMappable(profile, task.id);
  return { profile, env, containment, mounts, tmp };
}

/**
 * The boundary's checks and its sandbox alone (what is readable, writable, reachable), with
 * nothing started for it: what a task's container is made from ahead of its first command.
 */
export async function profileOf(
  ctx: ProjectContext,
  task: Task,
  request: Pick<BoundaryRequest, 'reach' | 'except' | 'readable' | 'writable'> = {},
): Promise<{ profile: SandboxProfile; tmp: string }> {
  assertSettingsTrusted(ctx, `Nothing was run; task ${task.id} is as it was.`);
  assertContained(ctx.root, task.path);
  // The sandbox's writable git directory is read from the workspace's `.git` file, which its agent
  // can write: what it names is checked first (WORKSPACE_TAMPERED, nothing run).
  if (sandboxKindFor(ctx, task) !== 'none') await pinned(ctx, task.path);
  const base = sandboxProfileFor(ctx, task, { reach: request.reach ?? [], except: request.except ?? [] });
  const tmp = taskTmp(ctx.store, ctx.key, task.id);
  const profile =
    base.kind === 'none'
      ? base
      : {
          ...base,
          readable: [...base.readable, ...(request.readable ?? [])],
          writable: [...base.writable, tmp, ...(request.writable ?? [])],
        };
  // Loaded only when a policy or key is there: its YAML and schema parsers take ~100 ms to load.
  if (policyInPlay(ctx.store.home, ctx.repo.root)) {
    const { loadVerifiedPolicy, checkPolicy } = await import('./policy.js');
    const policy = loadVerifiedPolicy(ctx.store.home, ctx.repo.root);
    if (policy) checkPolicy(policy, task.id, profile);
  }
  await assertSandboxAvailable(profile, ctx.store.home);
  return { profile, tmp };
}
