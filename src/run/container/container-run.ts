import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../../util/paths.js';
import { WarrenError } from '../../errors.js';
import type { RunMount } from '../../system/mounts.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import { profileOf } from '../boundary.js';
import { bridgeScript } from '../egress.js';
import type { BridgeSpec, SandboxProfile } from '../sandbox.js';
import { containerInitPerlScript } from '../helper-scripts.js';
import { containerBranch, type ContainerBranch } from './container-git.js';
import { execClientArgv, execClientEnv } from './exec-client.js';
import { ensureTaskContainer, type TaskContainer } from './task-container.js';

/**
 * The runner's container half (src/run/execute.ts calls it for a `sandbox: container` task):
 * the task's container made ready for a run and, meanwhile (a podman question and a git one at
 * once), what an earlier run committed inside and a crash kept from being taken, taken, then
 * where the branch is; and the argv the runner supervises on the host — warren's exec client,
 * which runs the command there under bin/container-init.pl.
 */
export async function containerFor(
  ctx: ProjectContext,
  task: Task,
  profile: SandboxProfile,
  mounts: readonly RunMount[],
  /** The command as found on the host's PATH: its installation is bound read-only when nothing else binds it. */
  command: string | null,
): Promise<{ container: TaskContainer; branch: ContainerBranch | null }> {
  // A layer mounted only in a run's own namespace cannot reach a container that is already running.
  if (mounts.length > 0) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `${mounts.map((m) => m.target).join(', ')} exist(s) only inside the namespace of each command warren runs, which a container task's long-lived container cannot see; nothing was run.`,
      {
        hint: `Run \`warren provision ${task.id} --refresh\`: a container task's layers are mounted for every process.`,
      },
    );
  }
  // warren's own scripts run inside (the init, the egress bridge): their folder is bound read-only.
  const [container, branch] = await Promise.all([
    ensureTaskContainer(ctx, task, profile, [path.dirname(bridgeScript()), ...installationOf(command)]),
    containerBranch(ctx, task),
  ]);
  return { container, branch };
}

/**
 * The task's container made during `new`, while its later steps run, for a plain command (no
 * tool of the host's bound beyond warren's own): its first command then finds it running. Only
 * where nothing is provisioned: a layer mounted into the workspace after the container was made
 * would not be seen inside it. A failure is left to the first command, which makes the
 * container itself and says why it could not.
 */
export async function makeContainerAhead(ctx: ProjectContext, task: Task): Promise<void> {
  if (ctx.config.provision.length > 0) return;
  const { profile } = await profileOf(ctx, task);
  if (profile.kind !== 'container') return;
  await ensureTaskContainer(ctx, task, profile, [path.dirname(bridgeScript())]);
}

/**
 * Where a command found on the host is installed, to bind read-only: a package's `node_modules`
 * for a `.bin` link (the link and what it points at), else the command's folder and its real one.
 * Nothing under /usr (bound already) or inside the workspace (bound writable).
 */
function installationOf(command: string | null): string[] {
  if (command === null || !path.isAbsolute(command)) return [];
  const dir = path.dirname(command);
  let real = command;
  try {
    real = fs.realpathSync(command);
  } catch {
    return [];
  }
  const dirs = path.basename(dir) === '.bin' ? [path.dirname(dir)] : [dir, path.dirname(real)];
  return [...new Set(dirs)].filter((d) => !isInside('/usr', d) && d !== '/');
}

/** The host-side process of one run in the task's container: the exec client (its argv and environment), the init inside, the bridge when there is an allow list. */
export function containerExec(
  container: TaskContainer,
  cwd: string,
  runId: string,
  argv: readonly string[],
  bridge: BridgeSpec | null,
  /** The task's branch and where it is on the host: the container's view of it is moved forward to it first. */
  branch: ContainerBranch | null,
  /** The run's environment (the boundary's): the command's in the container. */
  env: NodeJS.ProcessEnv,
): { argv: string[]; env: NodeJS.ProcessEnv } {
  const node = process.execPath;
  const egress = bridge?.egress ?? null;
  const bridged = egress
    ? [
        node,
        bridgeScript(),
        egress.socket,
        egress.forwards.length === 0 ? '-' : egress.forwards.map((f) => `${f.host}:${f.port}`).join(','),
        '--',
      ]
    : [];
  // The init carries its run's mark itself: another run's init, ending, leaves a live run's init
  // alone (unmarked, its parent outside the container's PID namespace, it would be taken for one
  // that escaped, and killed with the command's connection).
  const client = execClientEnv({ ...env, WARREN_RUN_ID: runId });
  return {
    argv: [
      ...execClientArgv(container.socket, container.name, cwd),
      '/usr/bin/perl',
      containerInitPerlScript(),
      runId,
      String(setsidNumber()),
      client.keep ? '1' : '0',
      ...(branch ? ['--ref', branch.commonDir, branch.ref, branch.commit] : []),
      '--',
      ...bridged,
      ...argv,
    ],
    env: client.env,
  };
}

/** setsid(2)'s number, for the init inside (perl has no call of its own for it without POSIX, which costs 28 ms to load). */
function setsidNumber(): number {
  const n = { x64: 112, arm64: 157, riscv64: 157, loong64: 157 }[process.arch as string];
  if (n === undefined)
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `a container sandbox needs setsid's system call number, which warren does not know for ${process.arch}; nothing was run.`,
      { hint: 'Use `--sandbox bwrap` (or none) on this machine, and report the architecture.' },
    );
  return n;
}
