import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { egressAllowOf, sandboxKindOf } from '../config/sandbox.js';
import { runBounded } from '../system/spawn.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';

export const SANDBOX_KINDS = ['none', 'bwrap'] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

export interface SandboxProfile {
  kind: SandboxKind;
  /** May the command reach the network? Without it, a bwrap sandbox has loopback only. */
  network: boolean;
  /** bwrap with an egress allowlist: connections leave only through warren's proxy, to these hosts (egress.ts). Null: none. */
  allow: string[] | null;
  /** Paths the command may write (bwrap); everything else is read-only. */
  writable: string[];
  /**
   * Paths bound read-only again after the private /tmp is mounted, so that a main checkout,
   * workspace root or WARREN_HOME that lives under /tmp stays visible (and read-only) instead
   * of being replaced by an empty, writable tmpfs.
   */
  readable: string[];
  /** Folders replaced by an empty tmpfs inside the sandbox. */
  hidden: string[];
}

export function parseSandboxKind(value: string): SandboxKind {
  if ((SANDBOX_KINDS as readonly string[]).includes(value)) return value as SandboxKind;
  throw new WarrenError('USAGE', `sandbox "${value}" is not one of ${SANDBOX_KINDS.join(', ')}; nothing was changed.`);
}

/** The task's own choice (`warren new --sandbox`) wins over warren.yaml's `sandbox:`. */
export function sandboxProfileFor(ctx: ProjectContext, task: Task): SandboxProfile {
  const own = task.data.sandbox;
  const kind: SandboxKind = own === 'bwrap' || own === 'none' ? own : sandboxKindOf(ctx.config);
  const network = kind === 'none' ? true : ctx.config.network === true;
  if (kind === 'none') return { kind, network, allow: null, writable: [], readable: [], hidden: [] };
  const readable = [ctx.repo.root, ctx.repo.commonDir, ctx.root, ctx.store.home].filter((p) => fs.existsSync(p));
  // A task made `--sandbox bwrap` in a project without one takes warren.yaml's allowlist all the same.
  const allow = network ? null : egressAllowOf(ctx.config);
  return { kind, network, allow, writable: writablePaths(task), readable, hidden: [] };
}

/**
 * The workspace, and its private git directory (index, HEAD) so that `git status` works.
 * The shared object store and refs stay read-only: they belong to the main checkout.
 */
function writablePaths(task: Task): string[] {
  const out = [task.path];
  try {
    const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(task.path, '.git'), 'utf8'));
    if (m?.[1]) out.push(fs.realpathSync(path.resolve(task.path, m[1].trim())));
  } catch {
    // not a linked worktree layout; only the workspace is writable
  }
  return out;
}

/** Whether bwrap runs, per PATH it is found on. */
const bwrapRuns = new Map<string, boolean>();

export async function assertSandboxAvailable(profile: SandboxProfile): Promise<void> {
  if (profile.kind === 'none') return;
  const where = process.env.PATH ?? '';
  let runs = bwrapRuns.get(where);
  if (runs === undefined) {
    runs =
      (await runBounded({ argv: ['bwrap', '--version'], stdout: 'ignore', stderr: 'ignore', timeoutMs: 5000 }))
        .exitCode === 0;
    bwrapRuns.set(where, runs);
  }
  if (!runs) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      'this task runs in a bwrap sandbox but bubblewrap (bwrap) is not installed or cannot run here; nothing was run.',
      {
        hint: 'Install it (apt-get install bubblewrap), or set `sandbox: none` for this project.',
      },
    );
  }
}

/** The egress proxy of a run with an allowlist, as the sandbox's argv needs it. */
export interface EgressMount {
  /** warren's proxy socket on the host, bound into the sandbox at `insideSocket`. */
  socket: string;
  insideSocket: string;
  /** Loopback ports the bridge forwards as they are. */
  forwards: readonly { host: string; port: number }[];
  /** node, and the bridge script (bin/egress-bridge.mjs), which runs first inside. */
  node: string;
  bridge: string;
}

/**
 * bwrap: the root filesystem read-only, the workspace (with any mounts inside it, which
 * --bind carries recursively) writable, a private /tmp, its own PID namespace that dies with
 * warren, and no network unless allowed (--unshare-net leaves only a loopback of its own).
 * With an egress allowlist the network stays unshared, and the command runs under the bridge
 * that carries its connections to warren's proxy over the bound socket.
 */
export function sandboxArgv(
  profile: SandboxProfile,
  cwd: string,
  argv: readonly string[],
  egress: EgressMount | null = null,
): string[] {
  if (profile.kind === 'none') return [...argv];
  const args = ['bwrap', '--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--new-session'];
  if (!profile.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  for (const p of profile.readable) args.push('--ro-bind', p, p);
  for (const p of profile.writable) args.push('--bind', p, p);
  for (const p of profile.hidden) args.push('--tmpfs', p);
  if (egress) {
    // node and the bridge are bound in by name: under /tmp (a clone there) the private /tmp would hide them.
    args.push('--ro-bind', egress.node, egress.node, '--ro-bind', egress.bridge, egress.bridge);
    args.push(
      '--bind',
      egress.socket,
      egress.insideSocket,
      '--chdir',
      cwd,
      '--',
      egress.node,
      egress.bridge,
      egress.insideSocket,
    );
    args.push(
      egress.forwards.length === 0 ? '-' : egress.forwards.map((f) => `${f.host}:${f.port}`).join(','),
      '--',
      ...argv,
    );
    return args;
  }
  args.push('--chdir', cwd, '--', ...argv);
  return args;
}

/**
 * Why a sandboxed command failed, read from the end of its log: a refused write or a refused
 * connection. A heuristic (the command's own words), recorded as such.
 */
export function sandboxFailureReason(profile: SandboxProfile, logTail: string): string | null {
  if (profile.kind === 'none') return null;
  if (/Read-only file system|EROFS/i.test(logTail))
    return 'sandbox: a write outside the workspace was refused (read-only file system)';
  if (profile.allow && /403 Forbidden|not on this task's allow list/i.test(logTail))
    return 'sandbox: a connection to a host not on the allow list was refused';
  if (
    !profile.network &&
    /ECONNREFUSED|Connection refused|Couldn't connect to server|Network is unreachable|ENETUNREACH|EAI_AGAIN|Temporary failure in name resolution|Could not resolve/i.test(
      logTail,
    )
  ) {
    return 'sandbox: a network connection was refused (no network inside the sandbox; loopback only)';
  }
  return null;
}
